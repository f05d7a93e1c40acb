// End-to-end tests of the mechanism verbs (compose, amplify, gaussian, laplace,
// gdp, tradeoff): JSON numbers against tests/reference/, published reference values and the
// closed forms of docs/composition.md#amplification-poisson and docs/gdp.md#gdp-profile, and every
// verb's bad inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run_json.hpp"
#include "support/close.hpp"
#include "support/reference.hpp"

using dpb::test::check_refused;
using dpb::test::close_rel;
using dpb::test::json_of;
using dpb::test::kExitNoSolution;
using dpb::test::read_reference_csv;
using dpb::test::run_dpbudget;
using Json = nlohmann::json;

namespace {

double num(const Json& j) { return j.get<double>(); }
double num(const std::string& s) { return std::stod(s); }

}  // namespace

// --- compose ---------------------------------------------------------------

TEST_CASE("compose: every row of composition.csv through the binary") {
  for (const auto& row : read_reference_csv("composition.csv")) {
    INFO(row.at("method"), " eps=", row.at("epsilon"), " delta=", row.at("delta"),
         " k=", row.at("k"), " target=", row.at("target_delta"));
    const auto j =
        json_of(run_dpbudget({"compose", "--method", row.at("method"), "--epsilon",
                              row.at("epsilon"), "--delta", row.at("delta"), "--count", row.at("k"),
                              "--target-delta", row.at("target_delta"), "--format", "json"}));
    REQUIRE(j["results"].size() == 1);
    const auto& r = j["results"][0];
    const double expected = num(row.at("composed_epsilon"));
    CHECK(r["method"] == row.at("method"));
    CHECK(r["bound"] == "upper");
    CHECK(num(r["delta"]) == num(row.at("target_delta")));
    CHECK(close_rel(num(r["epsilon"]), expected, std::max(num(row.at("rel_tol")), 1e-15)));
    CHECK(num(r["epsilon"]) >= expected * (1 - 1e-12));  // an upper bound
  }
}

TEST_CASE("compose --target-epsilon inverts the profile: delta at the reference epsilon") {
  // Optimal: (1, 1e-3) x 30 has epsilon 21.709612624528212 at delta 0.06 (composition.csv).
  const auto j = json_of(run_dpbudget({"compose", "--method", "optimal", "--epsilon", "1",
                                       "--delta", "0.001", "--count", "30", "--target-epsilon",
                                       "21.709612624528212", "--format", "json"}));
  CHECK(close_rel(num(j["results"][0]["delta"]), 0.06, 1e-6));
  // Advanced: (0.1, 0) x 100 has epsilon 6.308230950513408 at delta' = 1e-6.
  const auto a = json_of(run_dpbudget({"compose", "--method", "advanced", "--epsilon", "0.1",
                                       "--delta", "0", "--count", "100", "--target-epsilon",
                                       "6.308230950513408", "--format", "json"}));
  CHECK(close_rel(num(a["results"][0]["delta"]), 1e-6, 1e-8));
  CHECK(close_rel(num(a["results"][0]["delta_prime"]), 1e-6, 1e-8));
  // Basic: (0.1, 1e-7) x 100 is (10, 1e-5).
  const auto b =
      json_of(run_dpbudget({"compose", "--method", "basic", "--epsilon", "0.1", "--delta", "1e-7",
                            "--count", "100", "--target-epsilon", "10", "--format", "json"}));
  CHECK(close_rel(num(b["results"][0]["delta"]), 1e-5, 1e-15));
}

TEST_CASE("compose --method all: one row per method, advanced states delta'") {
  const auto j = json_of(run_dpbudget({"compose", "--epsilon", "1", "--delta", "0.001", "--count",
                                       "30", "--target-delta", "0.06,0.1", "--format", "json"}));
  CHECK(j["command"] == "compose");
  CHECK(j["inputs"]["count"] == 30);
  REQUIRE(j["results"].size() == 6);
  CHECK(j["results"][0]["method"] == "basic");
  CHECK(num(j["results"][0]["epsilon"]) == 30);
  CHECK(j["results"][2]["method"] == "advanced");
  CHECK(close_rel(num(j["results"][2]["delta_prime"]), 0.06 - 30 * 0.001, 1e-12));
  CHECK(j["results"][5]["method"] == "optimal");
  CHECK(close_rel(num(j["results"][5]["epsilon"]), 19.817379170052113, 1e-9));
  const auto t = run_dpbudget(
      {"compose", "--epsilon", "1", "--delta", "0.001", "--count", "30", "--target-delta", "0.06"});
  REQUIRE(t.status == 0);
  CHECK(t.out.find("note: advanced: delta' = target delta - k*delta") != std::string::npos);
  // Shown rounded up: 21.709612624528212 -> 21.7097.
  CHECK(t.out.find(" 21.7097 ") != std::string::npos);
}

TEST_CASE("compose: advanced refuses when target delta <= k*delta (exit 3), all skips it") {
  check_refused({"compose", "--method", "advanced", "--epsilon", "0.1", "--delta", "1e-7",
                 "--count", "100", "--target-delta", "1e-5"},
                {"k*delta"}, kExitNoSolution);
  check_refused({"compose", "--method", "basic", "--epsilon", "1", "--delta", "0.001", "--count",
                 "30", "--target-delta", "0.01"},
                {"k*delta"}, kExitNoSolution);
  check_refused(
      {"compose", "--epsilon", "1", "--delta", "0.001", "--count", "30", "--target-delta", "0.01"},
      {"no method meets the target"}, kExitNoSolution);
  const auto r = run_dpbudget({"compose", "--epsilon", "0.1", "--delta", "1e-7", "--count", "100",
                               "--target-delta", "1e-5", "--format", "json"});
  REQUIRE(r.status == 0);
  CHECK(r.err.find("dpbudget: warning: advanced row skipped") == 0);
  const auto j = Json::parse(r.out);
  REQUIRE(j["results"].size() == 2);
  CHECK(j["results"][0]["method"] == "basic");
  CHECK(j["results"][1]["method"] == "optimal");
}

// --- amplify ---------------------------------------------------------------

TEST_CASE("amplify: Poisson (add/remove) and without replacement (replace-one)") {
  // ε' = log(1 + q(e^ε − 1)), δ' = qδ with q = 0.01 = 10/1000.
  const double eps = std::log1p(0.01 * std::expm1(1.0));
  const auto p = json_of(run_dpbudget(
      {"amplify", "--epsilon", "1", "--delta", "1e-6", "-q", "0.01", "--format", "json"}));
  CHECK(p["command"] == "amplify");
  const auto& r = p["results"][0];
  CHECK(r["neighbouring"] == "add_remove");
  CHECK(r["sampling"] == "poisson");
  CHECK(r["bound"] == "upper");
  CHECK(close_rel(num(r["epsilon"]), eps, 1e-14));
  CHECK(close_rel(num(r["delta"]), 1e-8, 1e-14));
  const auto w = json_of(run_dpbudget({"amplify", "--epsilon", "1", "--delta", "1e-6",
                                       "--dataset-size", "1000", "--batch-size", "10", "--sampling",
                                       "without-replacement", "--format", "json"}));
  CHECK(w["results"][0]["neighbouring"] == "replace_one");
  CHECK(num(w["inputs"]["sampling_rate"]) == 0.01);
  CHECK(close_rel(num(w["results"][0]["epsilon"]), eps, 1e-14));
  // q = 1 changes nothing.
  const auto one = json_of(run_dpbudget(
      {"amplify", "--epsilon", "2", "--delta", "1e-5", "-q", "1", "--format", "json"}));
  CHECK(num(one["results"][0]["epsilon"]) == 2);
  // δ = 1e-5 unchanged, printed as an upper bound: "1e-05" lies below the
  // double nearest it, so JSON shows the next double up (issue 24, item 6).
  CHECK(num(one["results"][0]["delta"]) == std::nextafter(1e-5, 1.0));
  const auto t = run_dpbudget({"amplify", "--epsilon", "1", "--delta", "1e-6", "-q", "0.01"});
  CHECK(t.out.find("add_remove") != std::string::npos);
}

// --- gaussian --------------------------------------------------------------

TEST_CASE("gaussian analytic: sigma for delta_exact of gaussian.csv gives back its sd") {
  for (const auto& row : read_reference_csv("gaussian.csv")) {
    INFO("sd=", row.at("sd"), " sensitivity=", row.at("sensitivity"), " eps=", row.at("epsilon"));
    const auto j = json_of(
        run_dpbudget({"gaussian", "--epsilon", row.at("epsilon"), "--delta", row.at("delta_exact"),
                      "--sensitivity", row.at("sensitivity"), "--format", "json"}));
    const auto& r = j["results"][0];
    CHECK(r["method"] == "analytic");
    CHECK(close_rel(num(r["noise_sd"]), num(row.at("sd")), 1e-8));
    CHECK(close_rel(num(r["noise_multiplier"]), num(row.at("sd")) / num(row.at("sensitivity")),
                    1e-8));
  }
}

TEST_CASE("gaussian: the calibration checks in gaussian.csv's comments") {
  // classic: σ = √(2 ln(125000))/0.5 = 9.6896105252107788; analytic (16, 1e-5) is 0.34418
  // (cc/accounting test); analytic (1, 0.12693674) is 1.
  const auto c = json_of(run_dpbudget({"gaussian", "--epsilon", "0.5", "--delta", "1e-5",
                                       "--method", "classic", "--format", "json"}));
  CHECK(close_rel(num(c["results"][0]["noise_multiplier"]), 9.6896105252107788, 1e-14));
  const auto a =
      json_of(run_dpbudget({"gaussian", "--epsilon", "16", "--delta", "1e-5", "--format", "json"}));
  CHECK(close_rel(num(a["results"][0]["noise_multiplier"]), 0.34418, 2e-5));
  const auto u = json_of(
      run_dpbudget({"gaussian", "--epsilon", "1", "--delta", "0.12693674", "--format", "json"}));
  CHECK(close_rel(num(u["results"][0]["noise_multiplier"]), 1, 1e-7));
  // Text shows σ rounded up: 9.6896105... -> 9.68962, never 9.68961.
  const auto t =
      run_dpbudget({"gaussian", "--epsilon", "0.5", "--delta", "1e-5", "--method", "classic"});
  CHECK(t.out.find(" 9.68962 ") != std::string::npos);
}

TEST_CASE("gaussian: classic refuses epsilon >= 1, --method all skips that row with a warning") {
  check_refused({"gaussian", "--epsilon", "2", "--delta", "1e-5", "--method", "classic"},
                {"--epsilon"});
  const auto r = run_dpbudget(
      {"gaussian", "--epsilon", "0.5,2", "--delta", "1e-5", "--method", "all", "--format", "json"});
  REQUIRE(r.status == 0);
  CHECK(r.err.find("dpbudget: warning: classic row skipped") == 0);
  const auto j = Json::parse(r.out);
  REQUIRE(j["results"].size() == 3);  // analytic 0.5, analytic 2, classic 0.5
  CHECK(j["results"][2]["method"] == "classic");
  CHECK(num(j["results"][2]["epsilon"]) == 0.5);
  // The analytic σ is never larger than the classic one.
  CHECK(num(j["results"][0]["noise_multiplier"]) < num(j["results"][2]["noise_multiplier"]));
}

// --- laplace ---------------------------------------------------------------

TEST_CASE("laplace: b = sensitivity/epsilon (laplace.csv: b = 1 is 1-DP, b = 2 is 0.5-DP)") {
  const auto j = json_of(run_dpbudget({"laplace", "--epsilon", "1,0.5", "--format", "json"}));
  REQUIRE(j["results"].size() == 2);
  CHECK(num(j["results"][0]["scale"]) == 1);
  CHECK(num(j["results"][1]["scale"]) == 2);
  CHECK(num(j["results"][0]["delta"]) == 0);
  // 3/0.3: the scale is never below the quotient (more noise is the safe side).
  const auto s = json_of(
      run_dpbudget({"laplace", "--epsilon", "0.3", "--sensitivity", "3", "--format", "json"}));
  const double b = num(s["results"][0]["scale"]);
  CHECK(b >= 10);
  CHECK(close_rel(b, 10, 1e-15));
  CHECK(std::fma(b, 0.3, -3.0) >= 0);
}

// --- gdp -------------------------------------------------------------------

TEST_CASE("gdp --mu: epsilon at delta for the mu of every gdp.csv row") {
  for (const auto& row : read_reference_csv("gdp.csv")) {
    INFO("mu=", row.at("mu_poisson"));
    const auto j = json_of(run_dpbudget(
        {"gdp", "--mu", row.at("mu_poisson"), "--delta", row.at("delta"), "--format", "json"}));
    const auto& r = j["results"][0];
    CHECK(r["bound"] == "upper");
    CHECK(close_rel(num(r["epsilon"]), num(row.at("epsilon_poisson")), 1e-9));
  }
}

TEST_CASE("gdp central limit from a DP-SGD run: gdp.csv mu and epsilon, marked approximate") {
  for (const auto& row : read_reference_csv("gdp.csv")) {
    INFO("q=", row.at("q"), " sigma=", row.at("sigma"), " T=", row.at("steps"));
    const auto p =
        json_of(run_dpbudget({"gdp", "-q", row.at("q"), "--sigma", row.at("sigma"), "--steps",
                              row.at("steps"), "--delta", row.at("delta"), "--format", "json"}));
    const auto& r = p["results"][0];
    CHECK(r["bound"] == "approximate");
    CHECK(r["neighbouring"] == "add_remove");
    CHECK(close_rel(num(r["mu"]), num(row.at("mu_poisson")), 1e-9));
    CHECK(close_rel(num(r["epsilon"]), num(row.at("epsilon_poisson")), 1e-9));
    if (row.at("mu_uniform").empty()) continue;
    // Fixed-size batches of B = q·10⁶ out of N = 10⁶ (q = B/N exactly as parsed).
    // Opacus' σ is relative to the replace-one sensitivity; ours to the
    // clipping norm, and replacing a record moves the clipped sum by 2 norms:
    // the reference's σ is our σ/2.
    const auto batch = std::to_string(std::llround(std::stod(row.at("q")) * 1e6));
    const auto sigma2 = std::to_string(2 * std::stod(row.at("sigma")));
    const auto u =
        json_of(run_dpbudget({"gdp", "--dataset-size", "1000000", "--batch-size", batch, "--sigma",
                              sigma2, "--steps", row.at("steps"), "--delta", row.at("delta"),
                              "--sampling", "without-replacement", "--format", "json"}));
    CHECK(u["results"][0]["neighbouring"] == "replace_one");
    CHECK(close_rel(num(u["results"][0]["mu"]), num(row.at("mu_uniform")), 1e-9));
    CHECK(close_rel(num(u["results"][0]["epsilon"]), num(row.at("epsilon_uniform")), 1e-9));
  }
  // docs/gdp.md#clt-poisson (its check): q = 0.01, σ = 4, T = 1e4, δ = 1e-5 -> μ ≈ 0.25396, ε ≈
  // 0.9424; the text says so.
  const auto t =
      run_dpbudget({"gdp", "-q", "0.01", "--sigma", "4", "--steps", "10000", "--delta", "1e-5"});
  REQUIRE(t.status == 0);
  CHECK(t.out.find("approximate") != std::string::npos);
  CHECK(t.out.find("0.942441") != std::string::npos);
}

TEST_CASE("gdp --epsilon: delta of the Gaussian mechanism (gaussian.csv, mu = sensitivity/sd)") {
  for (const auto& row : read_reference_csv("gaussian.csv")) {
    const double mu = num(row.at("sensitivity")) / num(row.at("sd"));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", mu);
    INFO("mu=", buf, " eps=", row.at("epsilon"));
    const auto j = json_of(
        run_dpbudget({"gdp", "--mu", buf, "--epsilon", row.at("epsilon"), "--format", "json"}));
    CHECK(close_rel(num(j["results"][0]["delta"]), num(row.at("delta_exact")), 1e-9));
  }
  // docs/mechanisms.md#gaussian-profile (its check) via a group of 2 at mu = 0.5: a 1-GDP
  // guarantee, delta(1) = 0.12693674.
  const auto g = json_of(
      run_dpbudget({"gdp", "--mu", "0.5", "--group", "2", "--epsilon", "1", "--format", "json"}));
  CHECK(num(g["results"][0]["mu"]) == 1);
  CHECK(close_rel(num(g["results"][0]["delta"]), 0.12693673750664395, 1e-9));
  // Lists: one row per mu and target.
  const auto l =
      json_of(run_dpbudget({"gdp", "--mu", "0.5,1", "--delta", "1e-5,1e-6", "--format", "json"}));
  CHECK(l["results"].size() == 4);
}

// --- tradeoff --------------------------------------------------------------

TEST_CASE("tradeoff: G_mu and f_{eps,delta} as JSON points and as a table") {
  const auto j =
      json_of(run_dpbudget({"tradeoff", "--mu", "1", "--points", "3", "--format", "json"}));
  REQUIRE(j["results"].size() == 1);
  const auto& pts = j["results"][0]["points"];
  REQUIRE(pts.size() == 3);
  CHECK(num(pts[0][0]) == 0);
  CHECK(num(pts[0][1]) == 1);
  CHECK(num(pts[1][0]) == 0.5);
  CHECK(close_rel(num(pts[1][1]), 0.15865525393145705, 1e-12));  // Φ(−1)
  CHECK(num(pts[2][0]) == 1);
  CHECK(num(pts[2][1]) == 0);
  CHECK(num(j["results"][0]["mu"]) == 1);

  // f_{1, 0.01}(0.5) = max(0, 0.99 − e·0.5, e^{−1}·0.49).
  const double expected = std::exp(-1.0) * 0.49;
  const auto e = json_of(run_dpbudget(
      {"tradeoff", "--epsilon", "1", "--delta", "0.01", "--points", "3", "--format", "json"}));
  CHECK(close_rel(num(e["results"][0]["points"][1][1]), expected, 1e-14));
  CHECK(num(e["results"][0]["points"][0][1]) == doctest::Approx(0.99).epsilon(1e-15));

  const auto csv = run_dpbudget({"tradeoff", "--mu", "2", "--points", "3", "--format", "csv"});
  REQUIRE(csv.status == 0);
  CHECK(csv.out.rfind("x,f\n0,1\n0.5,0.0227501319481", 0) == 0);  // Φ(−2)
  // Text rounds f down (a smaller f claims less privacy): 0.1802609... -> 0.18026.
  const auto t = run_dpbudget({"tradeoff", "--epsilon", "1", "--delta", "0.01", "--points", "3"});
  REQUIRE(t.status == 0);
  CHECK(t.out.find(" 0.18026\n") != std::string::npos);
  const auto many = json_of(run_dpbudget({"tradeoff", "--mu", "1", "--format", "json"}));
  CHECK(many["results"][0]["points"].size() == 101);
}

// --- help and bad input ----------------------------------------------------

TEST_CASE("every mechanism verb has --help with an example") {
  for (const char* verb : {"compose", "amplify", "gaussian", "laplace", "gdp", "tradeoff"}) {
    const auto h = run_dpbudget({verb, "--help"});
    INFO(verb);
    CHECK(h.status == 0);
    CHECK(h.out.find(std::string("example: dpbudget ") + verb) != std::string::npos);
  }
}

TEST_CASE("compose: bad input names the flag and its range") {
  check_refused(
      {"compose", "--epsilon", "-1", "--delta", "0", "--count", "3", "--target-delta", "1e-5"},
      {"--epsilon: must be a finite number >= 0"});
  check_refused(
      {"compose", "--epsilon", "1", "--delta", "1", "--count", "3", "--target-delta", "1e-5"},
      {"--delta: must be a number in [0, 1)"});
  check_refused(
      {"compose", "--epsilon", "1", "--delta", "0", "--count", "0", "--target-delta", "1e-5"},
      {"--count: must be an integer in [1, 1000000000]"});
  check_refused(
      {"compose", "--epsilon", "1", "--delta", "0", "--count", "1e10", "--target-delta", "1e-5"},
      {"--count"});
  check_refused({"compose", "--epsilon", "1", "--delta", "0", "--count", "3"}, {"--target-delta"});
  check_refused({"compose", "--epsilon", "1", "--delta", "0", "--count", "3", "--target-delta",
                 "0.1", "--target-epsilon", "3"},
                {"--target-epsilon"});
  check_refused(
      {"compose", "--epsilon", "1", "--delta", "0", "--count", "3", "--target-delta", "1.5"},
      {"--target-delta"});
  check_refused(
      {"compose", "--epsilon", "1", "--delta", "0", "--count", "3", "--target-epsilon", "-1"},
      {"--target-epsilon"});
  check_refused({"compose", "--epsilon", "1", "--delta", "0", "--count", "3", "--target-delta",
                 "0.1", "--method", "best"},
                {"--method"});
  check_refused(
      {"compose", "--epsilon", "1,2", "--delta", "0", "--count", "3", "--target-delta", "0.1"},
      {"--epsilon"});
  check_refused({"compose", "--delta", "0", "--count", "3", "--target-delta", "0.1"},
                {"--epsilon"});
}

TEST_CASE("amplify: bad input") {
  check_refused({"amplify", "--epsilon", "1", "--delta", "0", "-q", "1.2"},
                {"-q (--sampling-rate): must be a number in [0, 1]"});
  check_refused({"amplify", "--epsilon", "nan", "--delta", "0", "-q", "0.1"}, {"--epsilon"});
  check_refused({"amplify", "--epsilon", "1", "--delta", "2", "-q", "0.1"}, {"--delta"});
  check_refused({"amplify", "--epsilon", "1", "--delta", "0"}, {"--sampling-rate"});
  check_refused(
      {"amplify", "--epsilon", "1", "--delta", "0", "--dataset-size", "10", "--batch-size", "20"},
      {"--batch-size"});
  check_refused({"amplify", "--epsilon", "1", "--delta", "0", "--batch-size", "20"},
                {"--batch-size"});
  check_refused(
      {"amplify", "--epsilon", "1", "--delta", "0", "--dataset-size", "0", "--batch-size", "1"},
      {"--dataset-size"});
  check_refused({"amplify", "--epsilon", "1", "--delta", "0", "-q", "0.1", "--batch-size", "3"},
                {"--batch-size"});
  check_refused({"amplify", "--epsilon", "1", "--delta", "0", "-q", "0.1", "--sampling", "x"},
                {"--sampling"});
}

TEST_CASE("gaussian and laplace: bad input") {
  check_refused({"gaussian", "--epsilon", "1", "--delta", "0"},
                {"--delta: must be a number in (0, 1)"});
  check_refused({"gaussian", "--epsilon", "-1", "--delta", "1e-5"}, {"--epsilon"});
  check_refused({"gaussian", "--delta", "1e-5"}, {"--epsilon"});
  check_refused({"gaussian", "--epsilon", "1"}, {"--delta"});
  check_refused({"gaussian", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "0"},
                {"--sensitivity: must be a finite number > 0"});
  check_refused({"gaussian", "--epsilon", "1", "--delta", "1e-5", "--method", "exact"},
                {"--method"});
  check_refused({"gaussian", "--epsilon", "0", "--delta", "1e-5", "--method", "classic"},
                {"--epsilon"});
  check_refused({"laplace", "--epsilon", "0"}, {"--epsilon: must be a finite number > 0"});
  check_refused({"laplace"}, {"--epsilon"});
  check_refused({"laplace", "--epsilon", "1", "--sensitivity", "inf"}, {"--sensitivity"});
  check_refused({"laplace", "--epsilon", "1", "--format", "xml"}, {"--format"});
}

TEST_CASE("gdp and tradeoff: bad input") {
  check_refused({"gdp", "--mu", "-1", "--delta", "1e-5"}, {"--mu: must be a finite number >= 0"});
  check_refused({"gdp", "--mu", "1"}, {"--delta"});
  check_refused({"gdp", "--mu", "1", "--delta", "1e-5", "--epsilon", "1"}, {"--epsilon"});
  check_refused({"gdp", "--mu", "1", "--delta", "0"}, {"--delta: must be a number in (0, 1)"});
  check_refused({"gdp", "--mu", "1", "--delta", "1e-5", "--group", "0"},
                {"--group: must be an integer >= 1"});
  check_refused({"gdp", "--mu", "1", "--delta", "1e-5", "-q", "0.1"}, {"--mu"});
  check_refused({"gdp", "--delta", "1e-5"}, {"--mu"});
  check_refused({"gdp", "--mu", "1", "--delta", "1e-5", "--sampling", "without-replacement"},
                {"--sampling"});
  // Every run parameter (the table), not only the six DP-SGD flags, is refused beside --mu.
  check_refused({"gdp", "--mu", "1", "--delta", "1e-5", "--group-noise-multipliers", "1,2"},
                {"--group-noise-multipliers: not with --mu"});
  check_refused({"gdp", "-q", "0.1", "--sigma", "1", "--delta", "1e-5"}, {"--steps"});
  check_refused({"gdp", "-q", "2", "--sigma", "1", "--steps", "10", "--delta", "1e-5"},
                {"--sampling-rate"});
  check_refused({"tradeoff", "--mu", "1", "--points", "1"},
                {"--points: must be an integer in [2, 1000000]"});
  check_refused({"tradeoff", "--mu", "1", "--points", "2000000"}, {"--points"});
  check_refused({"tradeoff"}, {"--mu"});
  check_refused({"tradeoff", "--epsilon", "1"}, {"--delta"});
  check_refused({"tradeoff", "--mu", "1", "--delta", "0.1"}, {"--delta"});
  check_refused({"tradeoff", "--mu", "1", "--epsilon", "1", "--delta", "0"}, {"--epsilon"});
  check_refused({"tradeoff", "--mu", "1,2"}, {"--mu"});
  check_refused({"tradeoff", "--epsilon", "1", "--delta", "1"},
                {"--delta: must be a number in [0, 1)"});
}
