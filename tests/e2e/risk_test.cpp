// dpbudget risk through the binary: the rows and fields, closed forms of one
// Gaussian release, the precision column from the TPR and the prior, the
// drawing, and the refusals.
#include <doctest/doctest.h>

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run.hpp"
#include "run_json.hpp"
#include "support/analytic_gaussian.hpp"

using namespace dpb::test;

TEST_CASE("risk: one Gaussian release, every accountant, by the closed form") {
  const auto doc = json_of(run_dpbudget({"risk", "-q", "1", "--sigma", "2", "--steps", "1",
                                         "--accountant", "all", "--format", "json"}));
  const auto& rows = doc["results"];
  // Four accountants × the three default rates.
  REQUIRE(rows.size() == 12);
  CHECK(doc["inputs"]["fpr"] == nlohmann::json::array({0.001, 0.01, 0.1}));
  CHECK(doc["inputs"]["prior"] == nlohmann::json::array({0.5, 0.01}));
  for (const auto& r : rows) {
    const double x = r["fpr"].get<double>();
    const double exact = gaussian_tpr(0.5, x);
    const double tpr = r["tpr"].get<double>();
    INFO(r.dump());
    CHECK(tpr >= exact * (1 - 1e-9));
    CHECK(tpr <= 1);
    if (r["accountant"] == "gdp") CHECK(tpr == doctest::Approx(exact).epsilon(1e-9));
    if (r["accountant"] == "pld") {
      CHECK(r["tpr_lower"].get<double>() <= exact * (1 + 1e-9));
      CHECK(tpr <= exact * (1 + 2e-3));
    }
    // The precision columns follow from the TPR bound and the prior.
    for (double prior : {0.5, 0.01}) {
      const std::string key = prior == 0.5 ? "precision_prior_0.5" : "precision_prior_0.01";
      const double want = prior * tpr / (prior * tpr + (1 - prior) * x);
      CHECK(r[key].get<double>() == doctest::Approx(want).epsilon(1e-9));
    }
    const double adv = 2 * boost::math::cdf(boost::math::normal{}, 0.25) - 1;
    CHECK(r["advantage"].get<double>() >= adv * (1 - 1e-9));
    CHECK(r["neighbouring"] == "add_remove");
    CHECK(r["bound"] == "upper");
  }
}

TEST_CASE("risk: a DP-SGD run, gdp's CLT figure is labelled approximate, pld <= rdp") {
  const auto doc = json_of(
      run_dpbudget({"risk", "-q", "0.01", "--sigma", "1", "--steps", "1000", "--accountant",
                    "rdp,gdp,pld", "--fpr", "0.001,0.1", "--prior", "0.3", "--format", "json"}));
  const auto& rows = doc["results"];
  REQUIRE(rows.size() == 6);
  CHECK(rows[2]["accountant"] == "gdp");
  CHECK(rows[2]["bound"] == "approximate");
  for (int i : {0, 1}) {
    CHECK(rows[i]["accountant"] == "rdp");
    CHECK(rows[4 + i]["accountant"] == "pld");
    CHECK(rows[4 + i]["tpr"].get<double>() <= rows[i]["tpr"].get<double>());
    CHECK(rows[4 + i]["tpr_lower"].get<double>() <= rows[4 + i]["tpr"].get<double>());
    CHECK(rows[i].contains("precision_prior_0.3"));
  }
}

TEST_CASE("risk: text, csv and markdown name the columns, -o draws the curves") {
  const auto text = run_dpbudget(
      {"risk", "-q", "0.01", "--sigma", "1", "--steps", "100", "--accountant", "rdp,pld"});
  CHECK(text.status == 0);
  CHECK(text.out.find("tpr") != std::string::npos);
  CHECK(text.out.find("precision_prior_0.01") != std::string::npos);
  CHECK(text.out.find("advantage") != std::string::npos);
  const auto csv =
      run_dpbudget({"risk", "-q", "0.01", "--sigma", "1", "--steps", "100", "--format", "csv"});
  CHECK(csv.status == 0);
  CHECK(csv.out.rfind("accountant,neighbouring,bound,fpr,tpr,", 0) == 0);
  const auto svg = run_dpbudget(
      {"risk", "-q", "0.01", "--sigma", "1", "--steps", "100", "--accountant", "all", "-o", "-"});
  CHECK(svg.status == 0);
  CHECK(svg.out.find("<svg") != std::string::npos);
  CHECK(svg.out.find("random guess") != std::string::npos);
  CHECK(svg.out.find("pld: upper bound") != std::string::npos);
  CHECK(svg.out.find("gdp: approximation") != std::string::npos);
  CHECK(svg.out.find("--fpr") == std::string::npos);  // legends in words, no flag names
}

TEST_CASE("risk: a spec file's ledger, and --print-spec") {
  const auto doc = json_of(run_dpbudget(
      {"risk", "--spec", "-", "--accountant", "pld", "--fpr", "0.01", "--format", "json"},
      R"({"epsilon_delta": {"epsilon": 1, "delta": 0}})"));
  const auto& r = doc["results"][0];
  // The canonical (1, 0) pair: TPR = e·x at x = 0.01. It only dominates the
  // mechanism the event stands for, so its lower end is the accuracy of the
  // upper end, not a lower bound on the mechanism.
  CHECK(r["tpr"].get<double>() >= std::exp(1.0) * 0.01 * (1 - 1e-9));
  CHECK_FALSE(r.contains("tpr_lower"));
  CHECK(r["lower_end"] == "accuracy");
  CHECK(r["tpr"].get<double>() - r["tpr_accuracy"].get<double>() <=
        std::exp(1.0) * 0.01 * (1 + 1e-9));
  const auto spec =
      run_dpbudget({"risk", "-q", "0.01", "--sigma", "1", "--steps", "10", "--print-spec"});
  CHECK(spec.status == 0);
  CHECK(spec.out.find("poisson_sampled") != std::string::npos);
}

TEST_CASE("risk: bad rates and priors are refused naming the flag") {
  for (const char* bad : {"0", "1", "-0.1", "1.5", "nan", "abc"}) {
    INFO(bad);
    check_refused(
        run_dpbudget({"risk", "-q", "0.01", "--sigma", "1", "--steps", "10", "--fpr", bad}),
        {"--fpr"});
    check_refused(
        run_dpbudget({"risk", "-q", "0.01", "--sigma", "1", "--steps", "10", "--prior", bad}),
        {"--prior"});
  }
  // One accountant that cannot handle the event: its reason, exit 2.
  check_refused(
      run_dpbudget({"risk", "--spec", "-", "--accountant", "gdp"}, R"({"laplace": {"scale": 1}})"),
      {"gdp"});
}

namespace {

/// The TPR bound (or advantage) `risk` prints for one run and accountant.
double risk_of(const std::string& accountant, const std::string& sigma, const std::string& key,
               const std::string& fpr = "0.001") {
  const auto doc =
      json_of(run_dpbudget({"risk", "-q", "0.01", "--steps", "1000", "--sigma", sigma,
                            "--accountant", accountant, "--fpr", fpr, "--format", "json"}));
  return doc["results"][0][key].get<double>();
}

std::string text_of(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

TEST_CASE(
    "calibrating to a risk: the sigma found meets the target in risk, and a little less does not") {
  const double tolerance = 1e-4;  // sigma's default --tolerance
  for (const char* accountant : {"rdp", "gdp", "pld"}) {
    INFO(accountant);
    const auto doc = json_of(
        run_dpbudget({"sigma", "-q", "0.01", "--steps", "1000", "--max-tpr", "0.01", "--at-fpr",
                      "0.001", "--accountant", accountant, "--format", "json"}));
    const auto& row = doc["results"][0];
    CHECK(row["target_tpr"] == 0.01);
    CHECK(row["at_fpr"] == 0.001);
    const double sigma = row["noise_multiplier"].get<double>();
    CHECK(row["tpr"].get<double>() <= 0.01);
    CHECK(risk_of(accountant, text_of(sigma), "tpr") <= 0.01);
    // pld's bound moves with its grid by up to its interval width (1e-3
    // relative), so a step of 2·tolerance below is only checked for the
    // smooth bounds.
    if (std::string(accountant) != "pld")
      CHECK(risk_of(accountant, text_of(sigma * (1 - 2 * tolerance)), "tpr") > 0.01);
    else
      CHECK(risk_of(accountant, text_of(sigma * (1 - 2e-2)), "tpr") > 0.01);
  }
  // The advantage, through steps: the largest T within it, and T + 1 is over.
  const auto doc = json_of(run_dpbudget({"steps", "-q", "0.01", "--sigma", "1", "--max-advantage",
                                         "0.2", "--accountant", "rdp", "--format", "json"}));
  const auto steps = doc["results"][0]["steps"].get<std::int64_t>();
  CHECK(doc["results"][0]["advantage"].get<double>() <= 0.2);
  auto advantage_at = [](std::int64_t t) {
    const auto d =
        json_of(run_dpbudget({"risk", "-q", "0.01", "--sigma", "1", "--steps", std::to_string(t),
                              "--accountant", "rdp", "--format", "json"}));
    return d["results"][0]["advantage"].get<double>();
  };
  CHECK(advantage_at(steps) <= 0.2);
  CHECK(advantage_at(steps + 1) > 0.2);
}

TEST_CASE("calibrating to a risk: one target at a time, each with its own companions") {
  const std::vector<std::string> run{"sigma", "-q", "0.01", "--steps", "1000"};
  auto with = [&](std::initializer_list<std::string> more) {
    std::vector<std::string> args = run;
    args.insert(args.end(), more);
    return run_dpbudget(args);
  };
  check_refused(with({"--max-tpr", "0.1", "--epsilon", "1", "--delta", "1e-5"}),
                {"--epsilon", "--max-tpr", "--max-advantage"});
  check_refused(with({"--max-tpr", "0.1"}), {"--at-fpr"});
  check_refused(with({"--at-fpr", "0.1", "--epsilon", "1", "--delta", "1e-5"}),
                {"--at-fpr", "--max-tpr"});
  check_refused(with({"--max-tpr", "0.1", "--at-fpr", "0.01", "--delta", "1e-5"}),
                {"--delta", "--max-tpr"});
  check_refused(with({"--max-tpr", "0.001", "--at-fpr", "0.01"}), {"--max-tpr", "--at-fpr"});
  check_refused(with({"--max-tpr", "1.5", "--at-fpr", "0.01"}), {"--max-tpr"});
  check_refused(with({"--max-advantage", "0"}), {"--max-advantage"});
  check_refused(with({"--max-advantage", "0.1", "--delta", "1e-5"}), {"--delta"});
  check_refused(with({}), {"--epsilon", "--max-tpr", "--max-advantage"});
}
