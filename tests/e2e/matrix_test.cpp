// The matrix-mechanism verbs (docs/matrix.md): the tree through mf-epsilon
// against the single_epoch_tree_aggregation event, amplified banded MF against
// `dpbudget epsilon` of ⌈n/b⌉ DP-SGD rounds for every accountant, σ solved and
// given back, sensitivities and errors against closed forms, refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run.hpp"
#include "run_json.hpp"
#include "support/close.hpp"

using dpb::test::check_refused;
using dpb::test::close_rel;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::TempFile;

namespace {

/// Two roundings of the same ε, each outward by a few ulps.
constexpr double kUlps = 1e-14;

/// ε per accountant of a JSON answer (the run's rows).
std::map<std::string, double> epsilons(const nlohmann::json& j) {
  std::map<std::string, double> out;
  for (const auto& row : j.at("results")) out[row.at("accountant")] = row.at("epsilon");
  return out;
}

}  // namespace

TEST_CASE("mf-epsilon: the tree equals the single_epoch_tree_aggregation event") {
  for (const char* steps : {"1000", "37"}) {
    CAPTURE(steps);
    const TempFile spec("tree.json",
                        std::string("{\"single_epoch_tree_aggregation\": {\"noise_multiplier\": "
                                    "3.0, \"step_counts\": ") +
                            steps + "}}");
    const auto tree = epsilons(
        json_of(run_dpbudget({"epsilon", "--spec", spec.path, "--neighbouring", "replace-special",
                              "--accountant", "all", "--delta", "1e-6", "--format", "json"})));
    const auto mf = epsilons(
        json_of(run_dpbudget({"mf-epsilon", "--strategy", "tree", "--steps", steps, "--sigma", "3",
                              "--delta", "1e-6", "--accountant", "all", "--format", "json"})));
    REQUIRE(tree.size() >= 3);
    for (const auto& row : tree) {  // no structured binding: clang 14 cannot capture one
      const std::string& accountant = row.first;
      const double eps = row.second;
      CAPTURE(accountant);
      REQUIRE(mf.count(accountant) == 1);
      // The same Gaussian: μ = √depth/σ there, 1/(σ/Δ) here, each rounded
      // toward more loss by its own few ulps.
      CHECK(close_rel(mf.at(accountant), eps, kUlps));
    }
  }
}

TEST_CASE("mf-sensitivity: the tree's depth, banded k, and the square root's sum") {
  const auto tree = json_of(run_dpbudget(
      {"mf-sensitivity", "--strategy", "tree", "--steps", "1000", "--format", "json"}));
  // ⌈log2(1001)⌉ = 10 levels of complete nodes.
  CHECK(close_rel(tree.at("results").at(0).at("sensitivity_squared"), 10.0, 1e-14));
  const auto banded =
      json_of(run_dpbudget({"mf-sensitivity", "--strategy", "banded", "--steps", "128", "--bands",
                            "4", "--participation", "min-sep", "--min-sep", "4", "--participations",
                            "8", "--format", "json"}));
  const auto& row = banded.at("results").at(0);
  CHECK(close_rel(row.at("sensitivity_squared"), 8.0, 1e-12));
  CHECK(row.at("sensitivity_bound") == "exact");
  // Coefficients that are not monotone: an upper bound, said as such.
  const TempFile coefficients("c.csv", "1, 0.2, 0.9, 0.1\n");
  const auto general =
      json_of(run_dpbudget({"mf-sensitivity", "--strategy", "toeplitz-file", "--coefficients",
                            coefficients.path, "--steps", "20", "--participation", "min-sep",
                            "--min-sep", "2", "--participations", "3", "--format", "json"}));
  CHECK(general.at("results").at(0).at("sensitivity_bound") == "upper");
}

TEST_CASE("mf-epsilon: amplified banded MF is DP-SGD of ceil(n/b) rounds, every accountant") {
  for (const char* bands : {"8", "3"}) {
    CAPTURE(bands);
    const int rounds = static_cast<int>(std::ceil(1000.0 / std::stod(bands)));
    const auto dp_sgd = epsilons(json_of(
        run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", std::to_string(rounds),
                      "--delta", "1e-5", "--accountant", "all", "--format", "json"})));
    const auto mf = epsilons(json_of(
        run_dpbudget({"mf-epsilon", "--strategy", "banded", "--steps", "1000", "--bands", bands,
                      "--participation", "cyclic-poisson", "-q", "0.01", "--sigma", "1.1",
                      "--delta", "1e-5", "--accountant", "all", "--format", "json"})));
    REQUIRE(dp_sgd.size() >= 3);
    CHECK(mf == dp_sgd);
  }
}

TEST_CASE("mf-epsilon: amplification refuses a strategy not b-banded or of column norm above 1") {
  const TempFile wide("wide.csv", "0.9, 0.3, 0.1\n");
  check_refused(run_dpbudget({"mf-epsilon", "--strategy", "toeplitz-file", "--coefficients",
                              wide.path, "--steps", "100", "--bands", "2", "--participation",
                              "cyclic-poisson", "-q", "0.01", "--sigma", "1", "--delta", "1e-5"}),
                {"--bands", "3 bands"});
  const TempFile heavy("heavy.csv", "1, 0.1\n");
  check_refused(run_dpbudget({"mf-epsilon", "--strategy", "toeplitz-file", "--coefficients",
                              heavy.path, "--steps", "100", "--bands", "2", "--participation",
                              "cyclic-poisson", "-q", "0.01", "--sigma", "1", "--delta", "1e-5"}),
                {"--strategy", "above 1"});
  check_refused(run_dpbudget({"mf-epsilon", "--strategy", "tree", "--steps", "100", "--bands", "4",
                              "--participation", "cyclic-poisson", "-q", "0.01", "--sigma", "1",
                              "--delta", "1e-5"}),
                {"--bands", "tree"});
}

TEST_CASE("mf-sigma: the sigma found, given back to mf-epsilon, meets the target") {
  for (const char* pattern : {"single", "cyclic-poisson"}) {
    CAPTURE(pattern);
    std::vector<std::string> strategy{"--strategy", "banded", "--steps", "500", "--bands", "5"};
    if (std::string(pattern) == "cyclic-poisson")
      strategy = dpb::test::with(strategy, {"--participation", pattern, "-q", "0.02"});
    for (const char* accountant : {"rdp", "pld", "gdp"}) {
      CAPTURE(accountant);
      const auto solved = json_of(run_dpbudget(dpb::test::with(
          dpb::test::with({"mf-sigma"}, strategy),
          {"--epsilon", "2", "--delta", "1e-6", "--accountant", accountant, "--format", "json"})));
      const double sd = solved.at("results").at(0).at("noise_sd");
      const auto back =
          json_of(run_dpbudget(dpb::test::with(dpb::test::with({"mf-epsilon"}, strategy),
                                               {"--sigma", dpb::test::str(sd), "--delta", "1e-6",
                                                "--accountant", accountant, "--format", "json"})));
      CHECK(back.at("results").at(0).at("epsilon").get<double>() <= 2.0);
    }
  }
}

TEST_CASE("mf-error: DP-SGD's identity and the square root against closed forms") {
  const auto j = json_of(run_dpbudget({"mf-error", "--strategy", "identity,sqrt,banded", "--steps",
                                       "64", "--bands", "1,4", "--format", "json"}));
  const auto& rows = j.at("results");
  REQUIRE(rows.size() == 4);
  // Identity: query t sums t + 1 noises: max 64, mean 32.5.
  CHECK(close_rel(rows.at(0).at("max_error_unit"), 64.0, 1e-14));
  CHECK(close_rel(rows.at(0).at("mean_error_unit"), 32.5, 1e-14));
  // The square root: max error at unit noise = its sensitivity² = Σ (binom(2j,j)/4^j)².
  double closed = 0;
  for (int k = 0; k < 64; ++k) {
    const double c =
        std::exp(std::lgamma(2.0 * k + 1) - 2 * std::lgamma(k + 1.0) - 2.0 * k * std::log(2.0));
    closed += c * c;
  }
  CHECK(close_rel(rows.at(1).at("max_error_unit"), closed, 1e-10));
  CHECK(close_rel(rows.at(1).at("sensitivity_squared"), closed, 1e-10));
  // One band is the identity, normalised.
  CHECK(close_rel(rows.at(2).at("max_error_unit"), 64.0, 1e-12));
}

TEST_CASE("mf-error: at one epsilon every strategy's sigma is z times its sensitivity") {
  const auto j =
      json_of(run_dpbudget({"mf-error", "--strategy", "identity,tree,sqrt", "--steps", "256",
                            "--epsilon", "4", "--delta", "1e-6", "--format", "json"}));
  for (const auto& row : j.at("results")) {
    const double z = row.at("noise_multiplier");
    const double sd = row.at("noise_sd");
    CHECK(sd >= z * std::sqrt(row.at("sensitivity_squared").get<double>()));
    CHECK(close_rel(row.at("max_error"), row.at("max_error_unit").get<double>() * sd * sd, 1e-12));
  }
}

TEST_CASE("mf verbs: bad input is refused naming the flag") {
  check_refused({"mf-sensitivity", "--strategy", "spiral", "--steps", "10"}, {"--strategy"});
  check_refused({"mf-sensitivity", "--strategy", "banded", "--steps", "10"}, {"--bands"});
  check_refused({"mf-sensitivity", "--strategy", "banded", "--steps", "10", "--bands", "11"},
                {"--bands"});
  check_refused({"mf-sensitivity", "--strategy", "sqrt"}, {"--steps"});
  check_refused({"mf-sensitivity", "--strategy", "sqrt", "--steps", "10", "--participation",
                 "min-sep", "--min-sep", "2"},
                {"--participations"});
  check_refused({"mf-sensitivity", "--strategy", "sqrt", "--steps", "10", "--restart", "2"},
                {"--restart"});
  check_refused({"mf-epsilon", "--strategy", "sqrt", "--steps", "10", "--delta", "1e-5"},
                {"--sigma"});
  check_refused(
      {"mf-epsilon", "--strategy", "sqrt", "--steps", "10", "--sigma", "-1", "--delta", "1e-5"},
      {"--sigma"});
  check_refused({"mf-sensitivity", "--strategy", "toeplitz-file", "--coefficients",
                 "/nonexistent/c.csv", "--steps", "10"},
                {"--coefficients"});
  const TempFile upper("upper.csv", "1, 0.5\n0.2, 1\n");
  check_refused({"mf-sensitivity", "--strategy", "matrix-file", "--matrix", upper.path},
                {"--matrix"});
}

TEST_CASE("docs/guide.md: the correlated-noise examples are this binary's output") {
  const std::string guide = dpb::test::slurp(DPBUDGET_GUIDE);
  const std::string start = "```console\n$ dpbudget mf-";
  int blocks = 0;
  for (auto from = guide.find(start); from != std::string::npos;
       from = guide.find(start, from + 1)) {
    const auto line_end = guide.find('\n', from + 12);
    const std::string command = guide.substr(from + 13, line_end - from - 13);
    const auto end = guide.find("```\n", line_end);
    REQUIRE(end != std::string::npos);
    const std::string shown = guide.substr(line_end + 1, end - line_end - 1);
    std::vector<std::string> args;
    std::istringstream words(command.substr(std::string("dpbudget ").size()));
    for (std::string w; words >> w;) args.push_back(w);
    CAPTURE(command);
    const auto r = run_dpbudget(args);
    REQUIRE(r.status == 0);
    CHECK(shown == r.out);
    ++blocks;
  }
  CHECK(blocks == 2);
}

TEST_CASE("mf-error -o -: the error against the bands as SVG") {
  const auto r =
      run_dpbudget({"mf-error", "--strategy", "identity,banded", "--steps", "200", "--bands",
                    "1,4,16", "--epsilon", "4", "--delta", "1e-6", "-o", "-"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("<svg") != std::string::npos);
  CHECK(r.out.find("banded") != std::string::npos);
  CHECK(r.out.find("identity") != std::string::npos);
  // Without banded rows there is no axis of bands to draw on.
  check_refused(run_dpbudget({"mf-error", "--strategy", "identity", "--steps", "200", "-o", "-"}),
                {"-o"});
}
