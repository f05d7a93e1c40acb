// dpbudget zcdp (issue 46, item 11): ρ of Gaussian and ε-DP releases against
// Bun & Steinke 2016's closed forms, ρ → (ε, δ) against Prop. 1.3 and against
// the analytic Gaussian as a floor, (ε, δ) → ρ round trips through the verb
// itself, the text and CSV forms, and every refusal as one line naming the flag.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "refused.hpp"
#include "run_json.hpp"
#include "support/analytic_gaussian.hpp"
#include "support/close.hpp"

using dpb::test::check_refused;
using dpb::test::close_rel;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::str;
using Json = nlohmann::json;

namespace {

/// A closed form against JSON's shortest decimal of a value rounded up a
/// few ulps.
constexpr double kZcdpClosedForm = 1e-14;

Json zcdp_rows(std::initializer_list<std::string> args) {
  const auto j = json_of(run_dpbudget(args));
  CHECK(j["command"] == "zcdp");
  return j["results"];
}

}  // namespace

TEST_CASE("zcdp --sigma --steps: rho = T/(2 sigma^2) (Bun & Steinke 2016, Prop. 1.6, Lemma 1.7)") {
  const auto rows = zcdp_rows({"zcdp", "--sigma", "2", "--steps", "10", "--format", "json"});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["noise_multiplier"] == 2.0);
  CHECK(rows[0]["bound"] == "upper");
  CHECK(rows[0]["rho"].get<double>() == 1.25);
  // --noise-sd with --sensitivity: Δ²/(2σ²) = 9/(2·0.25) = 18 per release.
  const auto sd = zcdp_rows(
      {"zcdp", "--noise-sd", "0.5", "--sensitivity", "3", "--steps", "2", "--format", "json"});
  CHECK(close_rel(sd[0]["rho"].get<double>(), 36, kZcdpClosedForm));
  CHECK(sd[0]["rho"].get<double>() >= 36);
  // σ = 1.1, T = 1000: 1000/2.42, rounded up.
  const auto r = zcdp_rows({"zcdp", "--sigma", "1.1", "-T", "1000", "--format", "json"});
  CHECK(r[0]["rho"].get<double>() >= 1000 / 2.42);
  CHECK(close_rel(r[0]["rho"].get<double>(), 1000 / 2.42, kZcdpClosedForm));
}

TEST_CASE("zcdp -q: subsampling leaves rho unchanged, with a note, and q = 0 is rho = 0") {
  const auto plain = zcdp_rows({"zcdp", "--sigma", "1", "--steps", "100", "--format", "json"});
  const auto j = json_of(
      run_dpbudget({"zcdp", "--sigma", "1", "--steps", "100", "-q", "0.01", "--format", "json"}));
  CHECK(j["results"][0]["rho"] == plain[0]["rho"]);
  CHECK(j["results"][0]["rho"].get<double>() == 50);
  CHECK(j.dump().find("subsampling does not lower a zCDP rho") != std::string::npos);
  const auto zero =
      zcdp_rows({"zcdp", "--sigma", "1", "--steps", "100", "-q", "0", "--format", "json"});
  CHECK(zero[0]["rho"].get<double>() == 0);
}

TEST_CASE("zcdp --pure-epsilon and --rho: epsilon^2/2 (Prop. 1.4), rho composed") {
  CHECK(zcdp_rows({"zcdp", "--pure-epsilon", "1", "--steps", "4", "--format", "json"})[0]["rho"]
            .get<double>() == 2);
  const auto rows = zcdp_rows({"zcdp", "--rho", "0.25,0.5", "--steps", "3", "--format", "json"});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["rho_each"].get<double>() == 0.25);
  CHECK(rows[0]["rho"].get<double>() == 0.75);
  CHECK(rows[1]["rho"].get<double>() == 1.5);
}

TEST_CASE("zcdp --rho --delta: epsilon by CKS 2020 and by Bun & Steinke's Prop. 1.3") {
  const auto rows =
      zcdp_rows({"zcdp", "--rho", "0.5", "--delta", "1e-5", "--method", "all", "--format", "json"});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["method"] == "cks");
  CHECK(rows[1]["method"] == "simple");
  // Prop. 1.3: 0.5 + 2√(0.5 ln 10⁵) ≈ 5.2985.
  const double simple = 0.5 + 2 * std::sqrt(0.5 * std::log(1e5));
  CHECK(rows[1]["epsilon"].get<double>() >= simple);
  CHECK(close_rel(rows[1]["epsilon"].get<double>(), simple, 1e-13));
  const double cks = rows[0]["epsilon"].get<double>();
  CHECK(cks < simple);
  // The Gaussian at σ = 1 is 0.5-zCDP: its exact ε at 10⁻⁵ is a floor.
  CHECK(cks >= dpb::test::analytic_gaussian_epsilon(1.0, 1e-5));
  // The default method is cks, the same number.
  CHECK(zcdp_rows({"zcdp", "--rho", "0.5", "--delta", "1e-5", "--format", "json"})[0]["epsilon"] ==
        rows[0]["epsilon"]);
}

TEST_CASE("zcdp --rho --epsilon: delta, both methods, consistent with epsilon at delta") {
  const auto rows =
      zcdp_rows({"zcdp", "--rho", "0.5", "--epsilon", "3", "--method", "all", "--format", "json"});
  REQUIRE(rows.size() == 2);
  CHECK(close_rel(rows[1]["delta"].get<double>(), std::exp(-6.25 / 2), 1e-13));
  const double d = rows[0]["delta"].get<double>();
  CHECK(d < rows[1]["delta"].get<double>());
  CHECK(d >= dpb::test::analytic_gaussian_delta(1.0, 3));
  // ε at that δ is at most 3 plus the rounding of both directions.
  const auto back = zcdp_rows({"zcdp", "--rho", "0.5", "--delta", str(d), "--format", "json"});
  CHECK(close_rel(back[0]["epsilon"].get<double>(), 3, 1e-9));
}

TEST_CASE("zcdp --epsilon --delta: the largest rho whose conversion meets them, round trip") {
  for (const char* method : {"cks", "simple"}) {
    INFO(method);
    const auto rows = zcdp_rows({"zcdp", "--epsilon", "1", "--delta", "1e-6", "--steps", "10",
                                 "--method", method, "--format", "json"});
    REQUIRE(rows.size() == 1);
    const double rho = rows[0]["rho"].get<double>();
    CHECK(close_rel(rows[0]["rho_per_step"].get<double>(), rho / 10, 1e-15));
    // The printed ρ converted back by the verb meets ε = 1.
    const auto back = zcdp_rows(
        {"zcdp", "--rho", str(rho), "--delta", "1e-6", "--method", method, "--format", "json"});
    CHECK(back[0]["epsilon"].get<double>() <= 1);
    CHECK(back[0]["epsilon"].get<double>() > 1 - 1e-9);
    if (std::string(method) == "simple") {
      const double l = std::log(1e6), root = std::sqrt(l + 1) - std::sqrt(l);
      CHECK(close_rel(rho, root * root, 1e-10));
    }
  }
  const auto j = run_dpbudget({"zcdp", "--epsilon", "1", "--delta", "1e-6"});
  REQUIRE(j.status == 0);
  CHECK(j.out.find("does not say that an (epsilon, delta)-DP mechanism is rho-zCDP") !=
        std::string::npos);
}

TEST_CASE("zcdp in text and CSV: the same rows, labelled") {
  const auto t = run_dpbudget({"zcdp", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5"});
  REQUIRE(t.status == 0);
  CHECK(t.out.find("cks") != std::string::npos);
  CHECK(t.out.find("Canonne, Kamath & Steinke 2020, Prop. 12") != std::string::npos);
  CHECK(t.out.find("Prop. 1.6") != std::string::npos);
  const auto c = run_dpbudget(
      {"zcdp", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5", "--format", "csv"});
  REQUIRE(c.status == 0);
  CHECK(c.out.rfind("noise_multiplier,rho,bound,method,epsilon,delta", 0) == 0);
}

TEST_CASE("zcdp refusals: one line naming the flag, nothing on stdout") {
  check_refused({"zcdp"}, {"--epsilon", "--rho"});
  check_refused({"zcdp", "--epsilon", "1"}, {"--delta"});
  check_refused({"zcdp", "--rho", "0.5", "--sigma", "1"}, {"--sigma", "--rho"});
  check_refused({"zcdp", "--rho", "-1"}, {"--rho"});
  check_refused({"zcdp", "--sigma", "0"}, {"--sigma"});
  check_refused({"zcdp", "--rho", "0.5", "--delta", "1"}, {"--delta"});
  check_refused({"zcdp", "--rho", "0.5", "--delta", "1e-5", "--epsilon", "1"},
                {"--epsilon", "--delta"});
  check_refused({"zcdp", "--rho", "0.5", "-q", "0.1"}, {"--sampling-rate"});
  check_refused({"zcdp", "--sigma", "1", "-q", "1.5"}, {"--sampling-rate"});
  check_refused({"zcdp", "--sigma", "1", "--sensitivity", "2"}, {"--sensitivity"});
  check_refused({"zcdp", "--rho", "0.5", "--method", "all"}, {"--method"});
  check_refused({"zcdp", "--rho", "0.5", "--delta", "1e-5", "--method", "tight"}, {"--method"});
  check_refused({"zcdp", "--rho", "0.5", "--steps", "0"}, {"--steps"});
  check_refused({"zcdp", "--epsilon", "nan", "--delta", "1e-5"}, {"--epsilon"});
  check_refused({"zcdp", "--sigma", "1e-200", "--delta", "1e-5"}, {"--sigma", "beyond"});
  check_refused({"zcdp", "--pure-epsilon", "1e200", "--steps", "10"}, {"--pure-epsilon"});
}
