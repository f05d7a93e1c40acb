// docs/guide.md#coming-from-tf-privacy-opacus-dp_accounting-prv_accountant
// (issue 13, point 10): every `$ dpbudget ...` line of that section is run as
// written (plus --format json) and its number checked against what the peer
// printed, here and in tests/reference/ where the value is there. The guide's
// commands and this file's checks must be the same set, so neither can drift.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_json.hpp"
#include "support/close.hpp"
#include "support/reference.hpp"

using dpb::test::json_of;
using dpb::test::kTwoDecimals;
using dpb::test::read_reference_csv;
using dpb::test::run_dpbudget;
using Json = nlohmann::json;

namespace {

// Tolerances, each the precision the peer published its number with (two
// decimals: kTwoDecimals, run.hpp):
/// a number printed with 3 decimals ("1.616").
constexpr double kThreeDecimals = 0.0005;
/// Python's assertAlmostEqual (7 places), how Opacus tests its RDP epsilon.
constexpr double kSevenPlaces = 5e-8;
/// rdp_epsilon.csv's rel_tol: the exact value against our RDP to 1e-9.
constexpr double kRdpRelTol = 1e-9;
/// prv_accountant's default eps_error (Opacus' PRVAccountant.get_epsilon):
/// its printed eps_upper is at most this above the truth, and above it.
constexpr double kPrvEpsError = 0.01;
/// --pld-tolerance's default: our PLD interval is at most this wide,
/// relative to its upper end; a pessimistic peer estimate at a coarser grid
/// may sit above our upper end by up to as much.
constexpr double kPldWidth = 1e-3;

std::string guide_section() {
  std::ifstream in(DPBUDGET_GUIDE);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string guide = ss.str();
  const auto start = guide.find("## Coming from TF Privacy, Opacus, dp_accounting, prv_accountant");
  REQUIRE(start != std::string::npos);
  const auto end = guide.find("\n## ", start + 1);
  return guide.substr(start, end - start);
}

/// The section's `$ dpbudget ...` lines, without the prompt, in order.
std::vector<std::string> guide_commands() {
  std::vector<std::string> out;
  std::istringstream in(guide_section());
  for (std::string line; std::getline(in, line);)
    if (line.rfind("$ dpbudget ", 0) == 0) out.push_back(line.substr(2));
  return out;
}

/// Runs a guide command (split on spaces; none is quoted) with --format json.
Json run_command(const std::string& command) {
  std::istringstream words(command);
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w);
  REQUIRE(args.front() == "dpbudget");
  args.erase(args.begin());
  args.insert(args.end(), {"--format", "json"});
  return json_of(run_dpbudget(args));
}

double epsilon(const Json& j) { return j["results"][0]["epsilon"].get<double>(); }

/// ε printed by the peer with `digits` precision: ours shows the same digits.
std::function<void(const Json&)> rounds_to(double published, double half_unit) {
  return [=](const Json& j) {
    CHECK(std::abs(epsilon(j) - published) < half_unit);
    CHECK(j["results"][0]["bound"] == "upper");
  };
}

/// A value of rdp_epsilon.csv (by its source's leading words).
double rdp_reference(const std::string& source_prefix) {
  for (const auto& row : read_reference_csv("rdp_epsilon.csv"))
    if (row.at("source").rfind(source_prefix, 0) == 0) return std::stod(row.at("epsilon"));
  FAIL("no rdp_epsilon.csv row from " << source_prefix);
  return 0;
}

/// The expected value of a pld_tests.csv case.
double pld_test_reference(const std::string& case_name) {
  for (const auto& row : read_reference_csv("pld_tests.csv"))
    if (row.at("case") == case_name) return std::stod(row.at("expected"));
  FAIL("no pld_tests.csv case " << case_name);
  return 0;
}

/// The PLD interval [epsilon_lower, epsilon_upper] of a row.
std::pair<double, double> interval(const Json& j) {
  const auto& r = j["results"][0];
  return {r["epsilon_lower"].get<double>(), r["epsilon_upper"].get<double>()};
}

/// A prv_accountant eps_upper (estimate + eps_error): the truth, which our
/// interval contains, lies in [value - 2 eps_error, value].
void check_prv_upper(const Json& j, double prv_upper) {
  const auto [lo, hi] = interval(j);
  CHECK(lo <= prv_upper);
  CHECK(hi >= prv_upper - 2 * kPrvEpsError);
}

const std::string kLegacyOrders = "1.25,1.5,1.75,2,2.25,2.5,3,3.5,4,4.5,5:63,128,256,512";
const std::string kOpacusOrders = "1.1:10.9:0.1,12:63";

/// A tutorial command with σ and epochs put where the guide has them.
std::string tutorial(const std::string& sigma, const std::string& epochs) {
  return "dpbudget epsilon --dataset-size 60000 --batch-size 256 --sigma " + sigma + " --epochs " +
         epochs +
         " --last-batch drop --conversion classic --orders 1.1:10.9:0.1,12:63 --delta 1e-5";
}

/// Each guide command and how its output is checked.
const std::map<std::string, std::function<void(const Json&)>>& checks() {
  static const std::map<std::string, std::function<void(const Json&)>> table = {
      // TF Privacy tutorials/README.md (2019): "the current epsilon is: 3.01" after
      // 60 epochs, the parameter table's 1.19 and 7.10, and 1.03 after epoch 1.
      {tutorial("1.1", "60"),
       [](const Json& j) {
         rounds_to(3.01, kTwoDecimals)(j);
         CHECK(j["inputs"]["steps"] == 60 * 234);
       }},
      {tutorial("1.3", "15"), rounds_to(1.19, kTwoDecimals)},
      {tutorial("0.7", "45"), rounds_to(7.10, kTwoDecimals)},
      {tutorial("1.1", "1"), rounds_to(1.03, kTwoDecimals)},
      // compute_dp_sgd_privacy.py in the same README: "eps = 3.01".
      {"dpbudget epsilon --dataset-size 60000 --batch-size 256 --sigma 1.1 --epochs 60 "
       "--conversion classic --orders " +
           kLegacyOrders + " --delta 1e-5",
       [](const Json& j) {
         rounds_to(3.01, kTwoDecimals)(j);
         CHECK(j["inputs"]["steps"] == 14063);  // ceil(60 * 60000 / 256)
       }},
      // compute_dp_sgd_privacy_test Test0 (rdp_epsilon.csv: its value, and the exact one).
      {"dpbudget epsilon --dataset-size 60000 --batch-size 150 --sigma 1.3 --epochs 15 --orders " +
           kLegacyOrders + " --delta 1e-5",
       [](const Json& j) {
         const double exact = rdp_reference("TensorFlow Privacy compute_dp_sgd_privacy_test");
         CHECK(dpb::test::close_rel(epsilon(j), exact, kRdpRelTol));
         CHECK(dpb::test::close_rel(epsilon(j), 0.7242234026109595, kRdpRelTol));
         CHECK(j["results"][0]["order"] == 19);  // its expected_order
       }},
      // compute_dp_sgd_privacy_test: the statement's Poisson epsilons (RDP, PLD) and
      // "once per epoch" (RDP), printed with 3 decimals.
      {"dpbudget epsilon -q 0.0064 --epochs 5 --sigma 1 --delta 1e-6",
       [](const Json& j) {
         rounds_to(1.616, kThreeDecimals)(j);
         CHECK(j["inputs"]["steps"] == 782);  // ceil(5 / 0.0064)
       }},
      {"dpbudget epsilon -q 0.0064 --epochs 5 --sigma 1 --delta 1e-6 --accountant pld",
       [](const Json& j) {
         // dp_accounting's PLD (pessimistic, at 1e-4) printed 1.199: our upper end
         // prints the same, and the interval reaches down to it.
         const auto [lo, hi] = interval(j);
         CHECK(std::abs(hi - 1.199) < kThreeDecimals);
         CHECK(lo <= 1.199 + kThreeDecimals);
       }},
      {"dpbudget epsilon -q 1 --steps 5 --sigma 1 --delta 1e-6", rounds_to(13.376, kThreeDecimals)},
      // Opacus tests/accountants_test.py.
      {"dpbudget epsilon -q 0.04 --sigma 1.5 --epochs 90 --orders " + kOpacusOrders +
           " --delta 1e-5",
       [](const Json& j) {
         CHECK(std::abs(epsilon(j) - 7.32911117143) < kSevenPlaces);
         CHECK(dpb::test::close_rel(epsilon(j), rdp_reference("Opacus accountants_test"),
                                    kRdpRelTol));
         CHECK(j["inputs"]["steps"] == 2250);  // int(90 / 0.04)
       }},
      {"dpbudget epsilon --accountant gdp -q 0.04 --sigma 1.5 --steps 2249 --delta 1e-5",
       [](const Json& j) {
         // assertLess(6.59, epsilon); assertLess(epsilon, 6.6)
         CHECK(epsilon(j) > 6.59);
         CHECK(epsilon(j) < 6.6);
         CHECK(j["results"][0]["bound"] == "approximate");
       }},
      {"dpbudget epsilon --accountant pld -q 0.04 --sigma 1.5 --steps 2249 --delta 1e-5",
       [](const Json& j) { check_prv_upper(j, 6.777395712150674); }},
      {"dpbudget sigma --epsilon 8 --delta 1e-5 -q 0.04 --epochs 90 --orders " + kOpacusOrders,
       [](const Json& j) {
         // get_noise_multiplier bisects until eps is within epsilon_tolerance 0.01
         // below 8, so its sigma (calibration.csv: 1.416015625) is at or above ours.
         const double opacus = 1.416015625;
         const double ours = j["results"][0]["noise_multiplier"].get<double>();
         CHECK(ours <= opacus);
         const auto at_opacus = run_command(
             "dpbudget epsilon -q 0.04 --sigma 1.416015625 "
             "--epochs 90 --orders " +
             kOpacusOrders + " --delta 1e-5");
         CHECK(epsilon(at_opacus) <= 8);
         CHECK(epsilon(at_opacus) >= 8 - 0.01);  // its epsilon_tolerance
       }},
      // dp_accounting: RDP (rdp_epsilon.csv) and PLD (pld.csv).
      {"dpbudget epsilon -q 0.01 --sigma 4 --steps 10000 --delta 1e-5",
       [](const Json& j) {
         CHECK(dpb::test::close_rel(epsilon(j), 1.0354900660362436, kRdpRelTol));
         CHECK(j["results"][0]["order"] == 17);
       }},
      {"dpbudget epsilon --accountant pld -q 0.01 --sigma 1 --steps 100 --delta 1e-5",
       [](const Json& j) {
         double dpa = 0;
         for (const auto& row : read_reference_csv("pld.csv"))
           if (row.at("q") == "0.01" && row.at("sigma") == "1.0")
             dpa = std::stod(row.at("dpa_pessimistic_1e-4"));
         REQUIRE(dpa > 0);
         const auto [lo, hi] = interval(j);
         // Its pessimistic estimate is an upper bound: at or above our lower end,
         // and within our interval's width of our upper end.
         CHECK(lo <= dpa);
         CHECK(std::abs(dpa - hi) <= kPldWidth * hi);
       }},
      // prv_accountant (pld_tests.csv, via Opacus' tests) and jax_privacy.
      {"dpbudget epsilon --accountant pld -q 0.001 --sigma 0.8 --steps 100 --delta 1e-6",
       [](const Json& j) {
         check_prv_upper(j, pld_test_reference("PRV sigma=0.8 q=0.001 T=100 delta=1e-6"));
       }},
      {"dpbudget epsilon --accountant pld -q 0.1 --sigma 3 --steps 512 --delta 1e-6",
       [](const Json& j) {
         // jax_privacy prints 3.77 (2 decimals): the interval reaches it.
         const double jax = pld_test_reference("PLD sigma=3 q=0.1 T=512 delta=1e-6");
         const auto [lo, hi] = interval(j);
         CHECK(lo < jax + kTwoDecimals);
         CHECK(hi > jax - kTwoDecimals);
       }},
  };
  return table;
}

}  // namespace

TEST_CASE("peers: the docs/guide.md recipes are exactly the commands this file checks") {
  const auto commands = guide_commands();
  CHECK(commands.size() == checks().size());
  for (const auto& c : commands) CHECK_MESSAGE(checks().count(c) == 1, "no check for: " << c);
  for (const auto& entry : checks()) {
    const std::string& c = entry.first;  // no structured binding: clang 14 cannot capture one
    CHECK_MESSAGE(std::find(commands.begin(), commands.end(), c) != commands.end(),
                  "not in docs/guide.md: " << c);
  }
}

TEST_CASE("peers: each docs/guide.md recipe prints the peer's published number") {
  for (const auto& command : guide_commands()) {
    CAPTURE(command);
    const auto it = checks().find(command);
    if (it == checks().end()) continue;  // reported by the case above
    it->second(run_command(command));
  }
}

TEST_CASE("peers: the recipes' order lists are the peers' (orders.md)") {
  // dpbudget echoes --orders: Opacus' DEFAULT_ALPHAS has 151 orders (11 missing),
  // TF Privacy's legacy list 72, jax_privacy's 50 + 56 + 10 with 8 twice.
  auto orders = [](const std::string& list) {
    return run_command("dpbudget epsilon -q 0.01 --sigma 1 --steps 10 --delta 1e-5 --orders " +
                       list)["inputs"]["orders"];
  };
  const auto opacus = orders(kOpacusOrders);
  CHECK(opacus.size() == 151);
  CHECK(opacus.front() == 1.1);
  CHECK(opacus.back() == 63);
  const auto legacy = orders(kLegacyOrders);
  CHECK(legacy.size() == 72);
  CHECK(legacy.back() == 512);
  const auto jax = orders("1.01:8:0.1426530612244898,9:63,65,114,164,214,263,313,363,412,462,512");
  CHECK(jax.size() == 50 + 55 + 10);
  CHECK(jax.front() == 1.01);
  CHECK(std::abs(jax[49].get<double>() - 8) < 1e-12);
}
