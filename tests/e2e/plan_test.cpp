// End-to-end tests of `dpbudget plan` (docs/calibration.md#plan): every row it
// lists fed back to `dpbudget epsilon` meets the budget and σ·(1 − 2·tolerance)
// does not; `sigma` gives the same σ for the same run; T and q from B, N and
// the compute budget or epochs by integer arithmetic here; the ranking by σ/B;
// refusals; the SVG; the run in docs/guide.md is this binary's output.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_json.hpp"
#include "support/refusal.hpp"

using dpb::test::check_refused;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::slurp;
using dpb::test::str;
using dpb::test::with;
using Json = nlohmann::json;

namespace {

/// The solver's default relative tolerance (docs/guide.md, "Solving for σ").
constexpr double kDefaultTolerance = 1e-4;
/// The pld case's (as calibration_test.cpp's pld round trip): above the
/// width of pld's interval, so σ·(1 − 2·tol) is clear of its grid's wobble.
constexpr double kPldTolerance = 1e-3;

/// ε of `dpbudget epsilon` for a row's q, σ and T under `accountant`.
double epsilon_back(const Json& row, double sigma, const std::string& accountant) {
  const auto j =
      json_of(run_dpbudget({"epsilon", "-q", str(row["sampling_rate"].get<double>()), "--sigma",
                            str(sigma), "--steps", std::to_string(row["steps"].get<std::int64_t>()),
                            "--delta", "1e-5", "--accountant", accountant, "--format", "json"}));
  return j.at("results").at(0).at("epsilon").get<double>();
}

/// Every row meets the target fed back to `epsilon`, σ·(1 − 2·tolerance)
/// does not, and rows come in increasing σ/B.
void check_rows(const Json& rows, double target, const std::string& accountant,
                double tolerance = kDefaultTolerance) {
  REQUIRE(!rows.empty());
  double previous = 0;
  for (const auto& r : rows) {
    const double sigma = r["noise_multiplier"].get<double>();
    const auto b = r["batch_size"].get<std::int64_t>();
    CAPTURE(b);
    CAPTURE(r["steps"].get<std::int64_t>());
    CHECK(epsilon_back(r, sigma, accountant) <= target);
    CHECK(epsilon_back(r, sigma * (1 - 2 * tolerance), accountant) > target);
    const double per_example = r["noise_per_example"].get<double>();
    CHECK(per_example >= sigma / static_cast<double>(b) * (1 - 1e-15));
    CHECK(per_example <= sigma / static_cast<double>(b) * (1 + 1e-15));
    CHECK(per_example >= previous);
    previous = per_example;
    CHECK(r["epsilon"].get<double>() <= target);
    CHECK(r["target_epsilon"].get<double>() == target);
    CHECK(r["accountant"] == accountant);
  }
}

const std::vector<std::string> kCompute{
    "plan", "--epsilon", "2", "--delta", "1e-5", "--dataset-size", "1000", "--compute", "10000"};

}  // namespace

TEST_CASE("plan: every row fed back to epsilon meets the budget, and 1 - 2 tol of sigma does not") {
  const auto j = json_of(run_dpbudget(with(kCompute, {"--format", "json"})));
  const Json& rows = j["results"];
  check_rows(rows, 2, "rdp");
  // The stated grid: powers of two and midpoints up to min(N, C) = 1000.
  std::vector<std::int64_t> batches;
  for (const auto& r : rows) {
    const auto b = r["batch_size"].get<std::int64_t>();
    batches.push_back(b);
    CHECK(r["steps"].get<std::int64_t>() == 10000 / b);
    CHECK(r["sampling_rate"].get<double>() == static_cast<double>(b) / 1000.0);
  }
  std::sort(batches.begin(), batches.end());
  CHECK(batches == std::vector<std::int64_t>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
                                             256, 384, 512, 768});
  for (std::size_t i = 0; i < rows.size(); ++i) CHECK(rows[i]["rank"].get<std::size_t>() == i + 1);
  CHECK(j["inputs"]["compute"].get<std::int64_t>() == 10000);
  CHECK(j["inputs"]["max_batch_size"].get<std::int64_t>() == 1000);
  // The ranking's assumption is stated.
  bool stated = false;
  for (const auto& n : j["notes"])
    stated = stated || n.get<std::string>().find("an approximation") != std::string::npos;
  CHECK(stated);
}

TEST_CASE("plan: sigma gives the same noise multiplier for a row's run") {
  const auto j =
      json_of(run_dpbudget(with(kCompute, {"--max-batch-size", "64", "--format", "json"})));
  for (const auto& r : j["results"]) {
    const auto s = json_of(run_dpbudget(
        {"sigma", "--epsilon", "2", "--delta", "1e-5", "--dataset-size", "1000", "--batch-size",
         std::to_string(r["batch_size"].get<std::int64_t>()), "--steps",
         std::to_string(r["steps"].get<std::int64_t>()), "--format", "json"}));
    CHECK(s["results"][0]["noise_multiplier"].get<double>() == r["noise_multiplier"].get<double>());
  }
}

TEST_CASE("plan: epochs grid, T = ceil(E N / B), and the pld accountant's rows fed back") {
  const auto j =
      json_of(run_dpbudget({"plan", "--epsilon", "2", "--delta", "1e-5", "--dataset-size", "1000",
                            "--epochs", "1,3", "--max-batch-size", "16", "--format", "json"}));
  const Json& rows = j["results"];
  CHECK(rows.size() == 2 * 8);  // B in {1, 2, 3, 4, 6, 8, 12, 16}, E in {1, 3}
  check_rows(rows, 2, "rdp");
  for (const auto& r : rows) {
    const auto b = r["batch_size"].get<std::int64_t>();
    const auto e = static_cast<std::int64_t>(r["epochs"].get<double>());
    CHECK(r["steps"].get<std::int64_t>() == (e * 1000 + b - 1) / b);
  }
  const auto p =
      json_of(run_dpbudget({"plan", "--epsilon", "1", "--delta", "1e-5", "--dataset-size", "1000",
                            "--compute", "1000", "--max-batch-size", "2", "--accountant", "pld",
                            "--tolerance", str(kPldTolerance), "--format", "json"}));
  CHECK(p["results"].size() == 2);
  check_rows(p["results"], 1, "pld", kPldTolerance);
}

TEST_CASE("plan: text, csv and markdown carry the rows and the ranking note") {
  for (const std::string format : {"text", "csv", "markdown"}) {
    const auto r = run_dpbudget(with(kCompute, {"--max-batch-size", "4", "--format", format}));
    CAPTURE(format);
    REQUIRE(r.status == 0);
    // Markdown escapes the underscores of a column name.
    CHECK(r.out.find(format == "markdown" ? "noise\\_per\\_example" : "noise_per_example") !=
          std::string::npos);
    if (format != "csv") CHECK(r.out.find("ranking: by noise") != std::string::npos);
  }
}

TEST_CASE("plan: the frontier as SVG") {
  const auto r = run_dpbudget(with(kCompute, {"-o", "-"}));
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("<?xml", 0) == 0);
  CHECK(r.out.find("</svg>") != std::string::npos);
  CHECK(r.out.find("compute 10000 examples") != std::string::npos);
  const auto e = run_dpbudget({"plan", "--epsilon", "2", "--delta", "1e-5", "--dataset-size",
                               "1000", "--epochs", "1,10", "--max-batch-size", "64", "-o", "-"});
  REQUIRE(e.status == 0);
  CHECK(e.out.find("10 epochs") != std::string::npos);
  CHECK(e.out.find("frontier") != std::string::npos);
}

TEST_CASE("plan: bad input is one line naming the flag, exit 2, nothing on stdout") {
  const std::vector<std::string> base{"plan", "--epsilon", "2", "--delta", "1e-5"};
  check_refused(run_dpbudget(base), {"--dataset-size"});
  check_refused(run_dpbudget(with(base, {"--dataset-size", "0"})), {"--dataset-size"});
  check_refused(run_dpbudget({"plan", "--delta", "1e-5", "--dataset-size", "1000"}), {"--epsilon"});
  check_refused(
      run_dpbudget({"plan", "--epsilon", "0", "--delta", "1e-5", "--dataset-size", "1000"}),
      {"--epsilon"});
  check_refused(run_dpbudget({"plan", "--epsilon", "2", "--delta", "1", "--dataset-size", "1000"}),
                {"--delta"});
  check_refused(run_dpbudget(with(base, {"--dataset-size", "1000", "--max-batch-size", "2000"})),
                {"--max-batch-size", "--dataset-size"});
  check_refused(run_dpbudget(with(base, {"--dataset-size", "1000", "--compute", "100",
                                         "--max-batch-size", "256"})),
                {"--compute", "--max-batch-size"});
  check_refused(
      run_dpbudget(with(base, {"--dataset-size", "1000", "--compute", "100", "--epochs", "3"})),
      {"--epochs", "--compute"});
  check_refused(run_dpbudget(with(base, {"--dataset-size", "1000", "--epochs", "0"})),
                {"--epochs"});
  check_refused(run_dpbudget(with(base, {"--dataset-size", "1000", "--epochs", "1e16"})),
                {"--epochs"});
  check_refused(run_dpbudget(with(base, {"--dataset-size", "1000", "--accountant", "rdp,pld"})),
                {"--accountant"});
  check_refused(run_dpbudget(with(base, {"--dataset-size", "1000", "--format", "jsonl"})),
                {"--format"});
  check_refused(run_dpbudget(with(base, {"--dataset-size", "1000", "--compute", "1.5"})),
                {"--compute"});
  // No candidate meets the budget: no solution (exit 3), nothing on stdout.
  check_refused(run_dpbudget(with(base, {"--dataset-size", "1000", "--max-sigma", "0.01"})),
                {"no candidate batch size"}, dpb::test::kExitNoSolution);
}

TEST_CASE("docs/guide.md: the plan example is this binary's output") {
  const std::string guide = slurp(DPBUDGET_GUIDE);
  const std::string begin = "<!-- BEGIN dpbudget plan -->\n";
  const auto from = guide.find(begin);
  REQUIRE(from != std::string::npos);
  const auto to = guide.find("<!-- END dpbudget plan -->", from);
  REQUIRE(to != std::string::npos);
  const std::string block = guide.substr(from + begin.size(), to - from - begin.size());
  const std::string command =
      "dpbudget plan --epsilon 8 --delta 1e-5 --dataset-size 60000 --compute 600000 "
      "--max-batch-size 4096";
  const auto r = run_dpbudget({"plan", "--epsilon", "8", "--delta", "1e-5", "--dataset-size",
                               "60000", "--compute", "600000", "--max-batch-size", "4096"});
  REQUIRE(r.status == 0);
  CHECK(block == "```console\n$ " + command + "\n" + r.out + "```\n");
}
