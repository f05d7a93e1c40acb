// End-to-end tests of the PLD accountant on the command line and of spec
// files: the built binary against published references, closed forms and
// the RDP curves computed here, never against numbers it printed before.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "accounting/rdp/rdp.hpp"
#include "run_json.hpp"

using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::TempFile;
using Json = nlohmann::json;

namespace {

/// A file holding `text`, removed when the test ends.
const Json* row_of(const Json& doc, const std::string& accountant) {
  for (const auto& r : doc["results"])
    if (r["accountant"] == accountant) return &r;
  return nullptr;
}

/// ε from an RDP value at one order, the improved conversion of Balle et al.
/// 2020 (Theorem 21), as dp_accounting's compute_epsilon.
double balle_epsilon(double rdp, double alpha, double delta) {
  return rdp + std::log1p(-1 / alpha) - (std::log(delta) + std::log(alpha)) / (alpha - 1);
}

const char* const kDpSgdSpec =
    R"({"self_composed": {"count": 10000, "event": {"poisson_sampled": )"
    R"({"sampling_probability": 0.01, "event": {"gaussian": {"noise_multiplier": 1.0}}}}}})";

}  // namespace

TEST_CASE("pld: q=0.01, sigma=1, T=10000, delta=1e-5 lies inside prv_accountant's bounds") {
  // Reference: Gopi, Lee & Wutschitz 2021 (prv_accountant), eps in [6.1777, 6.1977].
  const auto j =
      json_of(run_dpbudget({"epsilon", "--accountant", "pld", "-q", "0.01", "--sigma", "1",
                            "--steps", "10000", "--delta", "1e-5", "--format", "json"}));
  const auto& r = j["results"][0];
  const double lower = r["epsilon_lower"].get<double>();
  const double upper = r["epsilon_upper"].get<double>();
  CHECK(r["epsilon"].get<double>() == upper);
  CHECK(lower <= upper);
  CHECK(upper - lower <= 1e-3 * upper);
  CHECK(lower >= 6.1777);
  CHECK(upper <= 6.1977);
  CHECK(j["inputs"]["pld_tolerance"].get<double>() == 1e-3);
}

TEST_CASE("pld: --pld-tolerance narrows the interval, --pld-interval sets the first grid") {
  const auto j = json_of(
      run_dpbudget({"epsilon", "--accountant", "pld", "-q", "0.01", "--sigma", "1", "--steps",
                    "1000", "--delta", "1e-5", "--pld-tolerance", "1e-4", "--format", "json"}));
  const auto& r = j["results"][0];
  CHECK(r["epsilon_upper"].get<double>() - r["epsilon_lower"].get<double>() <=
        1e-4 * r["epsilon_upper"].get<double>());
  const auto k = json_of(run_dpbudget({"epsilon", "--accountant", "pld", "-q", "0.01", "--sigma",
                                       "1", "--steps", "1000", "--delta", "1e-5", "--pld-interval",
                                       "1e-4", "--pld-tolerance", "0.5", "--format", "json"}));
  CHECK(k["results"][0]["pld_interval"].get<double>() == 1e-4);
  CHECK(k["results"][0]["pld_refinements"].get<double>() == 1);
}

TEST_CASE("pld past its grid limit: inf with the reason in the text notes and in JSON notes") {
  const std::vector<std::string> args = {"epsilon", "--accountant", "all",   "-q",
                                         "1",       "--sigma",      "0.001", "--steps",
                                         "1",       "--delta",      "1e-5"};
  auto json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  const auto r = run_dpbudget(json_args);
  REQUIRE(r.status == 0);
  const auto j = json_of(r);
  bool saw_pld = false;
  for (const auto& row : j["results"]) {
    if (row["accountant"] == "pld") {
      saw_pld = true;
      CHECK(row["epsilon"] == "inf");
    } else if (row["accountant"] == "rdp") {
      CHECK(row["epsilon"].is_number());  // the others still answer
    }
  }
  CHECK(saw_pld);
  REQUIRE(j.contains("notes"));
  bool noted = false;
  for (const auto& n : j["notes"])
    noted = noted || n.get<std::string>().find("grid for this event exceeds the size limit") !=
                         std::string::npos;
  CHECK(noted);
  const auto text = run_dpbudget(args);
  CHECK(text.status == 0);
  CHECK(text.out.find("note: pld: the grid for this event exceeds the size limit") !=
        std::string::npos);
  // Without notes there is no notes field.
  const auto plain = json_of(run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps",
                                           "10000", "--delta", "1e-5", "--format", "json"}));
  CHECK_FALSE(plain.contains("notes"));
}

TEST_CASE("pld: bad --pld-interval and --pld-tolerance are one-line usage errors") {
  for (const auto& fv : {std::pair{"--pld-interval", "0"},
                         {"--pld-interval", "-1"},
                         {"--pld-interval", "nan"},
                         {"--pld-tolerance", "0"},
                         {"--pld-tolerance", "1"},
                         {"--pld-tolerance", "x"}}) {
    const auto [flag, value] = fv;  // plain copies: INFO below is a lambda (clang 14)
    const std::string flag_s = flag, value_s = value;
    const auto r = run_dpbudget({"epsilon", "--accountant", "pld", "-q", "0.01", "--sigma", "1",
                                 "--steps", "10", "--delta", "1e-5", flag_s, value_s});
    INFO(flag_s, " ", value_s, ": ", r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind(std::string("dpbudget: error: ") + flag, 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
}

TEST_CASE("--accountant all includes a pld row, below the rdp upper bound") {
  const auto j =
      json_of(run_dpbudget({"epsilon", "--accountant", "all", "-q", "0.01", "--sigma", "1",
                            "--steps", "1000", "--delta", "1e-5", "--format", "json"}));
  const Json* pld = row_of(j, "pld");
  const Json* rdp = row_of(j, "rdp");
  REQUIRE(pld);
  REQUIRE(rdp);
  CHECK((*pld)["epsilon_lower"].get<double>() <= (*pld)["epsilon"].get<double>());
  CHECK((*pld)["epsilon"].get<double>() < (*rdp)["epsilon"].get<double>());
}

TEST_CASE("pld on delta, sigma, steps, sampling-rate and sweep") {
  // δ at ε: inside its interval, and ε(δ_upper) ≤ the ε asked for.
  const auto d = json_of(run_dpbudget({"delta", "--accountant", "pld", "-q", "0.01", "--sigma", "1",
                                       "--steps", "1000", "--epsilon", "2", "--format", "json"}));
  const auto& dr = d["results"][0];
  CHECK(dr["delta_lower"].get<double>() <= dr["delta_upper"].get<double>());
  CHECK(dr["delta"].get<double>() == dr["delta_upper"].get<double>());

  // sigma: the printed σ meets the target with the upper ε, checked afresh.
  const auto s =
      json_of(run_dpbudget({"sigma", "--accountant", "pld", "-q", "0.01", "--steps", "10000",
                            "--epsilon", "2", "--delta", "1e-5", "--format", "json"}));
  const auto& sr = s["results"][0];
  const double sigma = sr["noise_multiplier"].get<double>();
  CHECK(sr["epsilon"].get<double>() <= 2);
  std::ostringstream printed;
  printed.precision(17);
  printed << sigma;
  const auto check = json_of(
      run_dpbudget({"epsilon", "--accountant", "pld", "-q", "0.01", "--sigma", printed.str(),
                    "--steps", "10000", "--delta", "1e-5", "--format", "json"}));
  CHECK(check["results"][0]["epsilon_upper"].get<double>() <= 2);
  // ... and 0.1% less noise does not (the solver tolerance is 1e-4).
  printed.str("");
  printed << sigma * 0.999;
  const auto less = json_of(
      run_dpbudget({"epsilon", "--accountant", "pld", "-q", "0.01", "--sigma", printed.str(),
                    "--steps", "10000", "--delta", "1e-5", "--format", "json"}));
  CHECK(less["results"][0]["epsilon_lower"].get<double>() > 2);

  const auto t = json_of(run_dpbudget({"steps", "--accountant", "pld", "-q", "0.01", "--sigma", "1",
                                       "--epsilon", "2", "--delta", "1e-5", "--format", "json"}));
  CHECK(t["results"][0]["epsilon"].get<double>() <= 2);
  CHECK(t["results"][0]["steps"].get<std::int64_t>() > 1);

  const auto q =
      json_of(run_dpbudget({"sampling-rate", "--accountant", "pld", "--sigma", "1", "--steps",
                            "1000", "--epsilon", "2", "--delta", "1e-5", "--format", "json"}));
  CHECK(q["results"][0]["epsilon"].get<double>() <= 2);

  const auto w =
      json_of(run_dpbudget({"sweep", "--accountant", "pld", "-q", "0.01", "--sigma", "1,2",
                            "--steps", "100", "--delta", "1e-5", "--format", "json"}));
  REQUIRE(w["results"].size() == 2);
  // More noise, less privacy loss.
  CHECK(w["results"][1]["epsilon_upper"].get<double>() <
        w["results"][0]["epsilon_lower"].get<double>());
}

TEST_CASE("a spec of one self-composed Poisson-sampled Gaussian equals the flags, per accountant") {
  const TempFile spec("spec.json", kDpSgdSpec);
  for (const char* accountant : {"rdp", "pld", "gdp"}) {
    const auto flags =
        json_of(run_dpbudget({"epsilon", "--accountant", accountant, "-q", "0.01", "--sigma", "1",
                              "--steps", "10000", "--delta", "1e-5", "--format", "json"}));
    const auto file = json_of(run_dpbudget({"epsilon", "--accountant", accountant, "--spec",
                                            spec.path, "--delta", "1e-5", "--format", "json"}));
    INFO("accountant ", accountant);
    CHECK(file["results"] == flags["results"]);
    CHECK(file["inputs"]["spec"] == Json::parse(kDpSgdSpec));
  }
}

TEST_CASE("--print-spec gives the flags' event, and reading it back gives the same result") {
  const auto printed =
      run_dpbudget({"epsilon", "--print-spec", "-q", "0.01", "--sigma", "1", "--steps", "10000"});
  REQUIRE(printed.status == 0);
  CHECK(printed.err.empty());
  CHECK(Json::parse(printed.out) == Json::parse(kDpSgdSpec));
  const TempFile spec("spec.json", printed.out);
  const auto flags = json_of(run_dpbudget({"delta", "-q", "0.01", "--sigma", "1", "--steps",
                                           "10000", "--epsilon", "3", "--format", "json"}));
  const auto file =
      json_of(run_dpbudget({"delta", "--spec", spec.path, "--epsilon", "3", "--format", "json"}));
  CHECK(file["results"] == flags["results"]);
  // Epochs are turned into steps: T = E / q.
  const auto epochs = run_dpbudget({"epsilon", "--print-spec", "--dataset-size", "60000",
                                    "--batch-size", "600", "--epochs", "3", "--sigma", "1"});
  CHECK(Json::parse(epochs.out)["self_composed"]["count"] == 300);
}

TEST_CASE("two phases by spec: RDP equals the sum of the phases' RDP curves") {
  // 10 epochs at sigma 1, q 0.01, then 5 epochs at sigma 2, q 0.02.
  const TempFile spec("spec.json", R"({"composed": [
    {"self_composed": {"count": 1000, "event": {"poisson_sampled":
        {"sampling_probability": 0.01, "event": {"gaussian": {"noise_multiplier": 1.0}}}}}},
    {"self_composed": {"count": 250, "event": {"poisson_sampled":
        {"sampling_probability": 0.02, "event": {"gaussian": {"noise_multiplier": 2.0}}}}}}]})");
  const auto j = json_of(run_dpbudget({"epsilon", "--spec", spec.path, "--orders", "1.5,2:64",
                                       "--delta", "1e-5", "--format", "json"}));
  const auto& r = j["results"][0];
  // Independently: the sum of both phases' curves, converted at each order.
  std::vector<double> orders{1.5};
  for (int a = 2; a <= 64; ++a) orders.push_back(a);
  double best = std::numeric_limits<double>::infinity(), best_order = 0;
  for (double a : orders) {
    const double rdp = 1000 * dpb::rdp_poisson_gaussian(0.01, 1.0, a) +
                       250 * dpb::rdp_poisson_gaussian(0.02, 2.0, a);
    const double eps = balle_epsilon(rdp, a, 1e-5);
    if (eps < best) best = eps, best_order = a;
  }
  CHECK(r["order"].get<double>() == best_order);
  CHECK(r["epsilon"].get<double>() == doctest::Approx(best).epsilon(1e-12));
  // One phase alone spends less.
  const auto one =
      json_of(run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "1000", "--orders",
                            "1.5,2:64", "--delta", "1e-5", "--format", "json"}));
  CHECK(one["results"][0]["epsilon"].get<double>() < r["epsilon"].get<double>());
}

TEST_CASE("docs/spec_files.md: the spec example runs, and pld stays below rdp") {
  std::ifstream in(DPBUDGET_EVENTS_DOC);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string page = ss.str();
  const auto section = page.find("# Spec files");
  REQUIRE(section != std::string::npos);
  const auto open = page.find("```json\n", section);
  const auto close = page.find("```", open + 8);
  REQUIRE(open != std::string::npos);
  const TempFile spec("spec.json", page.substr(open + 8, close - open - 8));
  // The command shown, with run.json pointing at the extracted file.
  const auto cmd = page.find("$ dpbudget ", close);
  REQUIRE(cmd != std::string::npos);
  std::istringstream words(page.substr(cmd + 11, page.find('\n', cmd) - cmd - 11));
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w == "run.json" ? spec.path : w);
  CHECK(args == std::vector<std::string>{"epsilon", "--spec", spec.path, "--delta", "1e-5",
                                         "--accountant", "pld"});
  args.insert(args.end(), {"--format", "json"});
  const auto pld = json_of(run_dpbudget(args));
  args[args.size() - 3] = "rdp";
  const auto rdp = json_of(run_dpbudget(args));
  const auto& p = pld["results"][0];
  CHECK(p["epsilon_lower"].get<double>() <= p["epsilon_upper"].get<double>());
  CHECK(p["epsilon_upper"].get<double>() < rdp["results"][0]["epsilon"].get<double>());
  // The Laplace query adds at most its pure-DP epsilon 1/b = 0.1 to the Gaussian phases.
  CHECK(Json::parse(page.substr(open + 8, close - open - 8))["composed"][2] ==
        Json::parse(R"({"laplace": {"scale": 10.0}})"));
}

TEST_CASE("malformed specs: exit 2, one stderr line with the JSON path, nothing on stdout") {
  struct Case {
    std::string text, mentions;
  };
  const std::string g = R"({"gaussian": {"noise_multiplier": 1}})";
  std::string deep = g;
  for (int i = 0; i < 65; ++i) deep = R"({"self_composed": {"count": 1, "event": )" + deep + "}}";
  const std::vector<Case> cases = {
      {R"({"composed": [)" + g + R"(, {"poisson_sampled": {"sampling_probability": 2, "event": )" +
           g + "}}]}",
       "--spec: /composed/1/poisson_sampled/sampling_probability: must be in [0, 1]"},
      {R"({"gaussian": {"noise_multiplier": "one"}})",
       "/gaussian/noise_multiplier: must be a number"},
      {R"({"poisson_sampled": {"event": )" + g + "}}",
       "/poisson_sampled/sampling_probability: missing"},
      {R"({"laplace": {"scale": 1, "sensitivity": 1}})", "/laplace/sensitivity: unknown key"},
      {R"({"self_composed": {"count": -3, "event": )" + g + "}}", "/self_composed/count"},
      {R"({"self_composed": {"count": 0.5, "event": )" + g + "}}", "/self_composed/count"},
      {R"({"exponential": {"scale": 1}})", "/exponential: unknown event"},
      {R"({"gaussian": {"noise_multiplier": 1}, "laplace": {"scale": 1}})", "one event name"},
      {deep, "deeper than 64"},
      {std::string(2'000'000, '[') + std::string(2'000'000, ']'), "deeper than 64"},
      {"{\"laplace\": {\"scale\": 1}}" + std::string(17 << 20, ' '), "larger than 16 MiB"},
      {"{not json", "not valid JSON"},
  };
  for (const auto& c : cases) {
    const TempFile spec("bad.json", c.text);
    const auto r = run_dpbudget({"epsilon", "--spec", spec.path, "--delta", "1e-5"});
    INFO("expected: ", c.mentions, "\nstderr: ", r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("dpbudget: error: --spec: ", 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(r.err.find(c.mentions) != std::string::npos);
  }
  // Spec and DP-SGD flags together.
  const TempFile spec("spec.json", kDpSgdSpec);
  const auto both = run_dpbudget({"epsilon", "--spec", spec.path, "-q", "0.1", "--delta", "1e-5"});
  CHECK(both.status == 2);
  CHECK(both.err.find("-q (--sampling-rate): not with --spec") != std::string::npos);
}

TEST_CASE("an accountant that cannot handle a spec names the event and why") {
  const TempFile spec("spec.json",
                      R"({"composed": [{"laplace": {"scale": 10}}, {"sampled_without_replacement":
      {"source_dataset_size": 100, "sample_size": 10, "event": {"laplace": {"scale": 1}}}}]})");
  for (const char* accountant : {"gdp", "pld", "rdp"}) {
    const auto r = run_dpbudget(
        {"epsilon", "--spec", spec.path, "--accountant", accountant, "--delta", "1e-5"});
    INFO(accountant, ": ", r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind(std::string("dpbudget: error: ") + accountant + ": ", 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
}

TEST_CASE("sweep --input lines may carry a spec") {
  const std::string input = std::string(R"({"name": "a", "spec": )") + kDpSgdSpec +
                            "}\n"
                            R"({"name": "b", "sampling_rate": 0.01, "noise_multiplier": 1, )"
                            R"("steps": 10000})"
                            "\n";
  const auto j = json_of(
      run_dpbudget({"sweep", "--input", "-", "--delta", "1e-5", "--format", "json"}, input));
  REQUIRE(j["results"].size() == 2);
  CHECK(j["results"][0]["spec"] == Json::parse(kDpSgdSpec));
  CHECK(j["results"][0]["epsilon"] == j["results"][1]["epsilon"]);
  const auto bad = run_dpbudget({"sweep", "--input", "-", "--delta", "1e-5"},
                                R"({"spec": {"laplace": {"scale": 0}}})"
                                "\n");
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("<stdin>:1: spec: /laplace/scale: must be a finite number > 0") !=
        std::string::npos);
}
