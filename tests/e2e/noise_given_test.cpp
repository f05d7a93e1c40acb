// gaussian and laplace given the noise (issue 13, point 6): ε at δ and δ at ε
// for every method, against the closed forms, and round trips through the
// calibrating direction of the same verb.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run_json.hpp"
#include "support/analytic_gaussian.hpp"
#include "support/close.hpp"

using dpb::test::analytic_gaussian_delta;
using dpb::test::check_refused;
using dpb::test::close_rel;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using Json = nlohmann::json;

namespace {

double number_of(const Json& j) { return j.get<double>(); }

/// The exact profile's root, reported with `eps`, must be this tight: shrinking
/// ε by this much breaks δ (the root finder stops within a few ulps).
constexpr double kRootTightness = 1e-9;
/// Below this δ the closed form's two terms cancel too much to compare at 1e-9.
constexpr double kDirectFormFloor = 1e-6;
/// Round trips go through a bracketing root finder (2^-51) and ulp nudges.
constexpr double kRoundTrip = 1e-12;

Json first_result(std::initializer_list<std::string> args) {
  const auto j = json_of(run_dpbudget(args));
  REQUIRE(j["results"].size() >= 1);
  return j["results"][0];
}

}  // namespace

TEST_CASE("gaussian --sigma --epsilon: delta of the exact profile (Balle & Wang 2018)") {
  for (const char* sigma : {"0.5", "1", "2", "5"})
    for (const char* eps : {"0", "0.5", "1", "2"}) {
      INFO("sigma=", sigma, " eps=", eps);
      const auto r =
          first_result({"gaussian", "--sigma", sigma, "--epsilon", eps, "--format", "json"});
      CHECK(r["method"] == "analytic");
      CHECK(r["bound"] == "upper");
      CHECK(number_of(r["noise_multiplier"]) == std::stod(sigma));
      const double want = analytic_gaussian_delta(std::stod(sigma), std::stod(eps));
      if (want > kDirectFormFloor) CHECK(close_rel(number_of(r["delta"]), want, 1e-9));
    }
  // docs/mechanisms.md#gaussian-profile (its check): σ = 1, ε = 1 gives δ = 0.12693674.
  CHECK(number_of(first_result({"gaussian", "--sigma", "1", "--epsilon", "1", "--format",
                                "json"})["delta"]) == doctest::Approx(0.12693674).epsilon(1e-8));
}

TEST_CASE("gaussian --sigma --delta: epsilon, the exact profile's root, rounded up") {
  for (double sigma : {0.5, 1.0, 2.0, 5.0})
    for (double delta : {1e-2, 1e-5, 1e-9}) {
      INFO("sigma=", sigma, " delta=", delta);
      const auto r = first_result({"gaussian", "--sigma", Json(sigma).dump(), "--delta",
                                   Json(delta).dump(), "--format", "json"});
      const double eps = number_of(r["epsilon"]);
      const double d = number_of(r["delta"]);
      CHECK(analytic_gaussian_delta(sigma, eps) <= d * (1 + 1e-9));
      CHECK(analytic_gaussian_delta(sigma, eps * (1 - kRootTightness)) > d * (1 - 1e-9));
      // Round trip through the calibrating direction: the σ for this ε is σ,
      // never more than the root finder's slack.
      const auto back = first_result({"gaussian", "--epsilon", Json(eps).dump(), "--delta",
                                      Json(d).dump(), "--format", "json"});
      CHECK(number_of(back["noise_multiplier"]) <= sigma * (1 + kRoundTrip));
      CHECK(number_of(back["noise_multiplier"]) >= sigma * (1 - kRoundTrip));
    }
  // The example, in text: ε rounded up.
  const auto t = run_dpbudget({"gaussian", "--sigma", "2", "--delta", "1e-5"});
  REQUIRE(t.status == 0);
  CHECK(t.out.find("analytic  upper   1.9931  1e-05                 2         2") !=
        std::string::npos);
}

TEST_CASE("gaussian --noise-sd with --sensitivity: the same as sigma = sd / sensitivity") {
  const auto a = first_result(
      {"gaussian", "--noise-sd", "6", "--sensitivity", "3", "--delta", "1e-5", "--format", "json"});
  const auto b = first_result({"gaussian", "--sigma", "2", "--delta", "1e-5", "--format", "json"});
  CHECK(close_rel(number_of(a["epsilon"]), number_of(b["epsilon"]), 1e-12));
  CHECK(number_of(a["noise_sd"]) == 6);
  CHECK(number_of(a["noise_multiplier"]) == 2);
  const auto c = first_result(
      {"gaussian", "--sigma", "2", "--sensitivity", "3", "--delta", "1e-5", "--format", "json"});
  CHECK(number_of(c["noise_sd"]) == 6);
  CHECK(number_of(c["epsilon"]) == number_of(b["epsilon"]));  // ε depends on σ/Δ only
}

TEST_CASE("gaussian classic given the noise: both closed forms, refused outside epsilon < 1") {
  // ε = √(2 ln(1.25/δ))/σ.
  const auto e = first_result(
      {"gaussian", "--sigma", "10", "--delta", "1e-5", "--method", "classic", "--format", "json"});
  const double want = std::sqrt(2 * std::log(1.25 / 1e-5)) / 10;
  CHECK(e["method"] == "classic");
  CHECK(number_of(e["epsilon"]) >= want);
  CHECK(close_rel(number_of(e["epsilon"]), want, 1e-13));
  // Round trip: classic calibration for that ε gives back σ = 10, not more.
  const auto back = first_result({"gaussian", "--epsilon", Json(number_of(e["epsilon"])).dump(),
                                  "--delta", "1e-5", "--method", "classic", "--format", "json"});
  CHECK(number_of(back["noise_multiplier"]) <= 10);
  CHECK(number_of(back["noise_multiplier"]) >= 10 * (1 - 1e-13));
  // δ = 1.25 exp(−(εσ)²/2).
  const auto d = first_result(
      {"gaussian", "--sigma", "10", "--epsilon", "0.5", "--method", "classic", "--format", "json"});
  CHECK(close_rel(number_of(d["delta"]), 1.25 * std::exp(-12.5), 1e-12));
  CHECK(number_of(d["delta"]) >= 1.25 * std::exp(-12.5));
  // Refused where Theorem A.1 does not reach, alone; skipped with a warning under all.
  check_refused({"gaussian", "--sigma", "2", "--delta", "1e-5", "--method", "classic"},
                {"--sigma: the classic bound covers only epsilon < 1"});
  check_refused({"gaussian", "--sigma", "2", "--epsilon", "1", "--method", "classic"},
                {"--epsilon: classic"});
  const auto all = run_dpbudget(
      {"gaussian", "--sigma", "2,10", "--delta", "1e-5", "--method", "all", "--format", "json"});
  REQUIRE(all.status == 0);
  CHECK(all.err.rfind("dpbudget: warning: classic row skipped (sigma 2, delta 1e-05)", 0) == 0);
  const auto j = Json::parse(all.out);
  REQUIRE(j["results"].size() == 3);  // analytic 2, analytic 10, classic 10
  CHECK(j["results"][2]["method"] == "classic");
  CHECK(number_of(j["results"][2]["noise_multiplier"]) == 10);
  // The classic bound is never tighter than the exact profile.
  CHECK(number_of(j["results"][2]["epsilon"]) >= number_of(j["results"][1]["epsilon"]));
}

TEST_CASE("gaussian given the noise: bad input names the flag") {
  check_refused({"gaussian", "--sigma", "2"}, {"--delta is required with --sigma"});
  check_refused({"gaussian", "--sigma", "2", "--delta", "1e-5", "--epsilon", "1"},
                {"--epsilon: with --sigma give either --delta"});
  check_refused({"gaussian", "--sigma", "0", "--delta", "1e-5"}, {"--sigma: must be"});
  check_refused({"gaussian", "--sigma", "inf", "--delta", "1e-5"}, {"--sigma: must be"});
  check_refused({"gaussian", "--sigma", "1", "--noise-sd", "1", "--delta", "1e-5"}, {"--noise-sd"});
  check_refused({"gaussian", "--sigma", "1", "--delta", "1"}, {"--delta: must be"});
  check_refused({"gaussian", "--sigma", "1", "--epsilon", "-1"}, {"--epsilon: must be"});
}

TEST_CASE("laplace --scale: pure epsilon = sensitivity/b, epsilon at delta, delta at epsilon") {
  const auto p = first_result({"laplace", "--scale", "2", "--format", "json"});
  CHECK(number_of(p["epsilon"]) == 0.5);
  CHECK(number_of(p["delta"]) == 0);
  CHECK(number_of(p["scale"]) == 2);
  // Δ/b rounded up: 3/10 is just above the double 0.3, so ε is the next double.
  const auto u =
      first_result({"laplace", "--scale", "10", "--sensitivity", "3", "--format", "json"});
  CHECK(std::fma(number_of(u["epsilon"]), 10.0, -3.0) >= 0);
  // Round trip: the scale calibrated for that ε is b again (to an ulp).
  const auto back = first_result({"laplace", "--epsilon", Json(number_of(u["epsilon"])).dump(),
                                  "--sensitivity", "3", "--format", "json"});
  CHECK(close_rel(number_of(back["scale"]), 10, 2e-16));
  // Exact profile: ε(δ) = 1/b + 2 log(1 − δ); δ(ε) = 1 − e^{(ε − 1/b)/2}.
  const auto e = first_result({"laplace", "--scale", "2", "--delta", "0.1", "--format", "json"});
  CHECK(close_rel(number_of(e["epsilon"]), 0.5 + 2 * std::log(0.9), 1e-14));
  CHECK(number_of(e["epsilon"]) >= 0.5 + 2 * std::log(0.9));
  const auto d =
      first_result({"laplace", "--scale", "2", "--epsilon", "0.2,1", "--format", "json"});
  CHECK(close_rel(number_of(d["delta"]), -std::expm1((0.2 - 0.5) / 2), 1e-14));
  const auto d2 = json_of(run_dpbudget(
      {"laplace", "--scale", "2", "--epsilon", "0.2,1", "--format", "json"}))["results"][1];
  CHECK(number_of(d2["delta"]) == 0);  // ε ≥ Δ/b: pure DP
  // Text: the example.
  const auto t = run_dpbudget({"laplace", "--scale", "2"});
  REQUIRE(t.status == 0);
  CHECK(t.out.find("upper      0.5      0      2") != std::string::npos);
  check_refused({"laplace", "--scale", "0"}, {"--scale: must be"});
  check_refused({"laplace", "--scale", "1", "--delta", "1"}, {"--delta: must be"});
  check_refused({"laplace", "--scale", "1", "--delta", "0.1", "--epsilon", "1"},
                {"--epsilon: with --scale"});
  check_refused({"laplace", "--epsilon", "1", "--delta", "0.1"}, {"--delta: needs --scale"});
}
