// --clipping-count-noise (adaptive clipping's count, Andrew et al. 2021, Theorem 1;
// docs/mechanisms.md#adaptive-clipping): a run with the count is accounted as the plain run at
// the combined multiplier, in every accountant; sigma solves give the gradient's z_eff; bad
// values refused naming the flag.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "refused.hpp"
#include "run_json.hpp"

using dpb::test::check_refused;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using Json = nlohmann::json;

namespace {

/// Rows of two runs whose multipliers differ by a few ulps (the combined one is rounded down):
/// rdp, gdp and composition move by about 1e-15 relative, pld by ~2e-9 (its discretisation grid
/// follows σ: measured on the without-replacement run below). A wrong multiplier moves ε by
/// percents, so this still fails on any formula error.
constexpr double kSameRunTolerance = 1e-7;

}  // namespace

TEST_CASE("clipping count noise: epsilon equals the plain run's at the combined multiplier") {
  // 3-4-5: z_g = 5/3 and 2σ_b = 5/4 combine to (9/25 + 16/25)^(−1/2) = 1.
  for (const char* sampling : {"poisson", "without-replacement"}) {
    CAPTURE(sampling);
    const auto with = json_of(run_dpbudget(
        {"epsilon", "--sigma", "1.6666666666666667", "--clipping-count-noise", "0.625",
         "--dataset-size", "60000", "--batch-size", "600", "--sampling", sampling, "--steps",
         "1000", "--delta", "1e-5", "--accountant", "all", "--format", "json"}));
    const auto plain =
        json_of(run_dpbudget({"epsilon", "--sigma", "1", "--dataset-size", "60000", "--batch-size",
                              "600", "--sampling", sampling, "--steps", "1000", "--delta", "1e-5",
                              "--accountant", "all", "--format", "json"}));
    CHECK(with["inputs"]["noise_multiplier"].get<double>() == 1.6666666666666667);
    CHECK(with["inputs"]["clipping_count_noise"].get<double>() == 0.625);
    const double combined = with["inputs"]["combined_noise_multiplier"].get<double>();
    CHECK(combined == doctest::Approx(1.0).epsilon(1e-14));
    REQUIRE(with["results"].size() == plain["results"].size());
    REQUIRE(with["results"].size() >= 3);
    for (std::size_t i = 0; i < plain["results"].size(); ++i) {
      const auto& a = with["results"][i];
      const auto& b = plain["results"][i];
      CAPTURE(b["accountant"].get<std::string>());
      CHECK(a["accountant"] == b["accountant"]);
      CHECK(a["epsilon"].get<double>() ==
            doctest::Approx(b["epsilon"].get<double>()).epsilon(kSameRunTolerance));
    }
  }
}

TEST_CASE("clipping count noise: the note names the combined multiplier") {
  const auto r = run_dpbudget({"epsilon", "--sigma", "1.6666666666666667", "--clipping-count-noise",
                               "0.625", "-q", "0.01", "--steps", "100", "--delta", "1e-5"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("--clipping-count-noise") != std::string::npos);
  // The combined multiplier 1 (3-4-5), rounded down to the note's digits.
  CHECK(r.err.find("Gaussian of multiplier 0.99999") != std::string::npos);
}

TEST_CASE("clipping count noise: sigma gives the gradient's z_eff of the combined sigma found") {
  const auto plain = json_of(run_dpbudget({"sigma", "-q", "0.01", "--steps", "1000", "--epsilon",
                                           "2", "--delta", "1e-5", "--format", "json"}));
  const auto with =
      json_of(run_dpbudget({"sigma", "-q", "0.01", "--steps", "1000", "--epsilon", "2", "--delta",
                            "1e-5", "--clipping-count-noise", "5", "--format", "json"}));
  const double z = plain["results"][0]["noise_multiplier"].get<double>();
  CHECK(with["results"][0]["combined_noise_multiplier"].get<double>() == z);
  // z_eff = (z⁻² − (2σ_b)⁻²)^(−1/2) in long double (Andrew et al. 2021, Theorem 1).
  const long double zl = z;
  const double z_eff = static_cast<double>(1.0L / std::sqrt(1.0L / (zl * zl) - 1.0L / 100.0L));
  const double got = with["results"][0]["noise_multiplier"].get<double>();
  CHECK(got >= z_eff);
  CHECK(got == doctest::Approx(z_eff).epsilon(1e-12));
  // Fed back: the gradient's z_eff with the count meets the target.
  const auto back =
      json_of(run_dpbudget({"epsilon", "-q", "0.01", "--steps", "1000", "--sigma",
                            with["results"][0]["noise_multiplier"].dump(), "--clipping-count-noise",
                            "5", "--delta", "1e-5", "--format", "json"}));
  CHECK(back["results"][0]["epsilon"].get<double>() <= 2.0);
}

TEST_CASE("clipping count noise: bad values refused naming the flag") {
  for (const char* bad : {"0", "-1", "nan", "inf", "x"})
    check_refused({"epsilon", "--sigma", "1", "--clipping-count-noise", bad, "-q", "0.01",
                   "--steps", "10", "--delta", "1e-5"},
                  {"--clipping-count-noise"});
  // σ found ≈ 1.02 at ε = 2 here: σ_b = 0.4 gives 2σ_b = 0.8 below it, no gradient noise meets it.
  check_refused({"sigma", "-q", "0.01", "--steps", "1000", "--epsilon", "2", "--delta", "1e-5",
                 "--clipping-count-noise", "0.4"},
                {"--clipping-count-noise"});
}
