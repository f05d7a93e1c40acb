// Run parameters honoured wherever they are given, or refused: the two
// silent wrong answers of issue 12 (--sampling beside sweep --input; run
// flags beside --spec) and the --input keys `sampling` and
// `group_noise_multipliers`, checked against the epsilon verb.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run_json.hpp"

using dpb::test::check_refused;
using dpb::test::json_lines;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using Json = nlohmann::json;

namespace {

const std::string kRunLine =
    R"("noise_multiplier":1,"steps":1000,"delta":1e-5,"dataset_size":1000,"batch_size":10)";

}  // namespace

TEST_CASE("sweep --input: --sampling beside the lines is refused, the sampling key is honoured") {
  // Issue 12: this computed Poisson sampling (epsilon 2.10), exit 0.
  check_refused(run_dpbudget({"sweep", "--input", "-", "--sampling", "without-replacement",
                              "--format", "jsonl"},
                             "{" + kRunLine + "}\n"),
                {"--sampling", "--input", "\"sampling\""});

  const auto by_flags = json_of(run_dpbudget(
      {"epsilon", "--sampling", "without-replacement", "--sigma", "1", "--steps", "1000",
       "--dataset-size", "1000", "--batch-size", "10", "--delta", "1e-5", "--format", "json"}));
  const double expected = by_flags["results"][0]["epsilon"].get<double>();
  CHECK(expected == doctest::Approx(20.99).epsilon(1e-3));

  const auto r =
      run_dpbudget({"sweep", "--input", "-", "--format", "jsonl"},
                   "{" + kRunLine + R"(,"sampling":"without-replacement"})" + "\n{" + kRunLine +
                       R"(,"sampling":"poisson"})" + "\n{" + kRunLine + "}\n");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = json_lines(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["sampling"] == "without_replacement");
  CHECK(rows[0]["neighbouring"] == "replace_one");
  CHECK(rows[0]["epsilon"].get<double>() == expected);
  // Without the key (or with poisson) a line is Poisson-sampled: epsilon 2.10.
  for (int i : {1, 2}) {
    CHECK(rows[i]["sampling"] == "poisson");
    CHECK(rows[i]["epsilon"].get<double>() == doctest::Approx(2.10).epsilon(1e-2));
  }

  const auto bad = run_dpbudget({"sweep", "--input", "-"},
                                R"({"sampling":"without-replacement","sampling_rate":0.01,)"
                                R"("noise_multiplier":1,"steps":10,"delta":1e-5})"
                                "\n");
  check_refused(bad,
                {"<stdin>:1: sampling: without-replacement needs dataset_size and batch_size"});
}

TEST_CASE("sweep --input: group_noise_multipliers equals --group-noise-multipliers") {
  const auto by_flags =
      json_of(run_dpbudget({"epsilon", "--group-noise-multipliers", "2,2,2,2", "-q", "0.01",
                            "--steps", "1000", "--delta", "1e-5", "--format", "json"}));
  const auto r = run_dpbudget(
      {"sweep", "--input", "-", "--format", "jsonl"},
      R"({"group_noise_multipliers":[2,2,2,2],"sampling_rate":0.01,"steps":1000,"delta":1e-5})"
      "\n");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = json_lines(r.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["group_noise_multipliers"] == by_flags["inputs"]["group_noise_multipliers"]);
  CHECK(rows[0]["noise_multiplier"] == by_flags["inputs"]["noise_multiplier"]);
  CHECK(rows[0]["epsilon"] == by_flags["results"][0]["epsilon"]);
  // z* = 1: the epsilon of sigma 1 (up to z* rounded down), about 2.10.
  CHECK(rows[0]["epsilon"].get<double>() == doctest::Approx(2.10).epsilon(1e-2));
  check_refused(run_dpbudget({"sweep", "--input", "-"},
                             R"({"group_noise_multipliers":[2,2],"noise_multiplier":1,)"
                             R"("sampling_rate":0.01,"steps":10,"delta":1e-5})"
                             "\n"),
                {"group_noise_multipliers", "noise_multiplier"});
}

TEST_CASE("--spec: run flags beside it are refused naming both") {
  const std::string spec =
      R"({"self_composed": {"count": 1000, "event": {"poisson_sampled": )"
      R"({"sampling_probability": 0.01, "event": {"gaussian": {"noise_multiplier": 1}}}}}})";
  // Issue 12: both flags were ignored, exit 0.
  check_refused(run_dpbudget({"epsilon", "--spec", "-", "--sampling", "without-replacement",
                              "--group-noise-multipliers", "1,2", "--delta", "1e-5"},
                             spec),
                {"--sampling", "--spec"});
  check_refused(
      run_dpbudget(
          {"epsilon", "--spec", "-", "--group-noise-multipliers", "1,2", "--delta", "1e-5"}, spec),
      {"--group-noise-multipliers", "--spec"});
  // Even the default value, given explicitly, cannot be honoured.
  check_refused(
      run_dpbudget({"delta", "--spec", "-", "--sampling", "poisson", "--epsilon", "1"}, spec),
      {"--sampling", "--spec"});
  // Alone, the spec gives the run's epsilon (q 0.01, sigma 1, 1000 steps).
  const auto j = json_of(
      run_dpbudget({"epsilon", "--spec", "-", "--delta", "1e-5", "--format", "json"}, spec));
  CHECK(j["results"][0]["epsilon"].get<double>() == doctest::Approx(2.10).epsilon(1e-2));
}

TEST_CASE("solving sigma refuses --group-noise-multipliers by name") {
  check_refused(run_dpbudget({"sigma", "--group-noise-multipliers", "1,2", "-q", "0.01", "--steps",
                              "10", "--epsilon", "1", "--delta", "1e-5"}),
                {"--group-noise-multipliers", "solved for"});
}
