// --schedule FILE (issue 27, item 1): a run in phases. Checked against
// independent values: the spec that composes each phase's --print-spec (the
// phases' own events, composed by hand here), one phase of the summed steps,
// and the solved values fed back to `epsilon --schedule` (the σ scale meets
// the target, (1 − 2·tolerance) of it does not; the steps found fit, one
// more does not).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run_json.hpp"

using dpb::test::json_of;
using dpb::test::phase_spec;
using dpb::test::run_dpbudget;
using dpb::test::str;
using dpb::test::TempFile;
using dpb::test::with;
using Json = nlohmann::json;

namespace {

/// A file under /tmp holding `text`, removed at the end of the test case.
/// A warm-up of one epoch at batch 128 and σ 2, then 4 epochs at batch 256
/// and σ 1.1, on N = 60,000 (given on the command line, inherited).
const char* kTwoPhases = R"([
  {"name": "warmup", "batch_size": 128, "noise_multiplier": 2, "epochs": 1},
  {"name": "main", "batch_size": 256, "noise_multiplier": 1.1, "epochs": 4}
])";

double row_epsilon(const Json& doc, const std::string& accountant) {
  for (const auto& row : doc["results"])
    if (row["accountant"] == accountant) return row["epsilon"].get<double>();
  FAIL("no row of ", accountant);
  return 0;
}

const std::vector<std::string> kAccountants = {"rdp", "pld", "gdp", "composition"};

}  // namespace

TEST_CASE(
    "a schedule's epsilon is the epsilon of the spec composing its phases, every accountant") {
  const TempFile schedule("two.json", kTwoPhases);
  // The same run with the phases' flags, each printed as a spec and composed here.
  const Json composed = {{"composed",
                          {phase_spec({"--dataset-size", "60000", "--batch-size", "128", "--sigma",
                                       "2", "--epochs", "1"}),
                           phase_spec({"--dataset-size", "60000", "--batch-size", "256", "--sigma",
                                       "1.1", "--epochs", "4"})}}};
  const TempFile spec("composed.json", composed.dump());
  for (const auto& accountant : kAccountants) {
    INFO("accountant ", accountant);
    const auto got =
        run_dpbudget({"epsilon", "--schedule", schedule.path, "--dataset-size", "60000", "--delta",
                      "1e-5", "--accountant", accountant, "--format", "json"});
    const auto want = run_dpbudget({"epsilon", "--spec", spec.path, "--delta", "1e-5",
                                    "--accountant", accountant, "--format", "json"});
    CHECK(got.status == want.status);
    if (want.status != 0) {
      // An accountant that refuses the composed spec refuses the schedule alike.
      CHECK(got.err == want.err);
      continue;
    }
    CHECK(row_epsilon(json_of(got), accountant) == row_epsilon(json_of(want), accountant));
  }
  // And --print-spec of the schedule is that spec.
  const auto printed = run_dpbudget(
      {"epsilon", "--print-spec", "--schedule", schedule.path, "--dataset-size", "60000"});
  REQUIRE(printed.status == 0);
  CHECK(Json::parse(printed.out) == composed);
}

TEST_CASE("two phases of equal parameters are one phase of the summed steps") {
  const TempFile schedule("equal.jsonl",
                          "{\"sampling_rate\": 0.01, \"noise_multiplier\": 1.1, \"steps\": 300}\n"
                          "{\"sampling_rate\": 0.01, \"noise_multiplier\": 1.1, \"steps\": 700}\n");
  for (const auto& accountant : {"rdp", "pld", "gdp"}) {
    INFO("accountant ", accountant);
    const double phases =
        row_epsilon(json_of(run_dpbudget({"epsilon", "--schedule", schedule.path, "--delta", "1e-5",
                                          "--accountant", accountant, "--format", "json"})),
                    accountant);
    const double one = row_epsilon(
        json_of(run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "1000",
                              "--delta", "1e-5", "--accountant", accountant, "--format", "json"})),
        accountant);
    // RDP and GDP add the same terms in another order (to rounding); PLD
    // convolves two grids instead of one (within its tolerance, 1e-3).
    const double tolerance = std::string(accountant) == "pld" ? 1e-3 : 1e-12;
    CHECK(std::abs(phases - one) <= tolerance * one);
  }
}

TEST_CASE(
    "sigma on a schedule: the scale found meets the target and (1 - 2 tolerance) of it does not") {
  const TempFile schedule("scale.json", kTwoPhases);
  const double tolerance = 1e-4;
  for (const auto& accountant : {"rdp", "pld"}) {
    INFO("accountant ", accountant);
    const Json solved = json_of(
        run_dpbudget({"sigma", "--schedule", schedule.path, "--dataset-size", "60000", "--epsilon",
                      "1", "--delta", "1e-5", "--accountant", accountant, "--format", "json"}));
    const Json& row = solved["results"][0];
    const double scale = row["sigma_scale"].get<double>();
    const auto sigmas = row["noise_multipliers"].get<std::vector<double>>();
    REQUIRE(sigmas.size() == 2);
    // Each printed σ is at least σ_i times the printed scale's double.
    CHECK(sigmas[0] >= 2 * scale * (1 - 1e-15));
    CHECK(sigmas[1] >= 1.1 * scale * (1 - 1e-15));
    auto epsilon_at = [&](double s0, double s1) {
      const TempFile scaled(
          "scaled.json",
          Json::array({{{"batch_size", 128}, {"noise_multiplier", s0}, {"epochs", 1}},
                       {{"batch_size", 256}, {"noise_multiplier", s1}, {"epochs", 4}}})
              .dump());
      return row_epsilon(json_of(run_dpbudget({"epsilon", "--schedule", scaled.path,
                                               "--dataset-size", "60000", "--delta", "1e-5",
                                               "--accountant", accountant, "--format", "json"})),
                         accountant);
    };
    CHECK(epsilon_at(sigmas[0], sigmas[1]) <= 1);
    const double less = scale * (1 - 2 * tolerance);
    CHECK(epsilon_at(2 * less, 1.1 * less) > 1);
  }
}

TEST_CASE("sigma --phase solves one phase's sigma, the others fixed") {
  const TempFile schedule("phase.jsonl",
                          "{\"name\": \"warmup\", \"batch_size\": 128, \"noise_multiplier\": 2, "
                          "\"epochs\": 1}\n{\"name\": \"main\", \"batch_size\": 256, \"epochs\": "
                          "4}\n");
  const Json solved = json_of(
      run_dpbudget({"sigma", "--schedule", schedule.path, "--dataset-size", "60000", "--phase",
                    "main", "--epsilon", "1", "--delta", "1e-5", "--format", "json"}));
  const Json& row = solved["results"][0];
  CHECK(row["phase"] == "main");
  const double sigma = row["noise_multiplier"].get<double>();
  auto epsilon_at = [&](double s) {
    const TempFile filled(
        "filled.json", Json::array({{{"batch_size", 128}, {"noise_multiplier", 2}, {"epochs", 1}},
                                    {{"batch_size", 256}, {"noise_multiplier", s}, {"epochs", 4}}})
                           .dump());
    return row_epsilon(
        json_of(run_dpbudget({"epsilon", "--schedule", filled.path, "--dataset-size", "60000",
                              "--delta", "1e-5", "--accountant", "rdp", "--format", "json"})),
        "rdp");
  };
  CHECK(epsilon_at(sigma) <= 1);
  CHECK(epsilon_at(sigma * (1 - 2e-4)) > 1);
  // By number too.
  const Json by_number = json_of(
      run_dpbudget({"sigma", "--schedule", schedule.path, "--dataset-size", "60000", "--phase", "2",
                    "--epsilon", "1", "--delta", "1e-5", "--format", "json"}));
  CHECK(by_number["results"][0]["noise_multiplier"] == row["noise_multiplier"]);
}

TEST_CASE("steps on a schedule: the last phase's steps found fit, one more does not") {
  const TempFile schedule("steps.jsonl",
                          "{\"name\": \"warmup\", \"batch_size\": 128, \"noise_multiplier\": 2, "
                          "\"epochs\": 1}\n{\"name\": \"main\", \"batch_size\": 256, "
                          "\"noise_multiplier\": 1.1}\n");
  for (const auto& accountant : {"rdp", "pld"}) {
    INFO("accountant ", accountant);
    const Json solved = json_of(
        run_dpbudget({"steps", "--schedule", schedule.path, "--dataset-size", "60000", "--epsilon",
                      "1", "--delta", "1e-5", "--accountant", accountant, "--format", "json"}));
    const Json& row = solved["results"][0];
    const auto steps = row["steps"].get<std::int64_t>();
    CHECK(row["phase"] == "main");
    CHECK(row["total_steps"] == 469 + steps);  // the warm-up: ⌈60000/128⌉ steps
    CHECK(row["epochs"].get<double>() ==
          doctest::Approx(static_cast<double>(steps) * 256.0 / 60000).epsilon(1e-12));
    auto epsilon_at = [&](std::int64_t t) {
      const TempFile filled(
          "filled.json",
          Json::array({{{"batch_size", 128}, {"noise_multiplier", 2}, {"epochs", 1}},
                       {{"batch_size", 256}, {"noise_multiplier", 1.1}, {"steps", t}}})
              .dump());
      return row_epsilon(json_of(run_dpbudget({"epsilon", "--schedule", filled.path,
                                               "--dataset-size", "60000", "--delta", "1e-5",
                                               "--accountant", accountant, "--format", "json"})),
                         accountant);
    };
    CHECK(epsilon_at(steps) <= 1);
    CHECK(epsilon_at(steps + 1) > 1);
  }
}

TEST_CASE("a phase inherits the flags it does not set, JSON Lines and a JSON array alike") {
  // The flags give N, σ and the scheme; each phase its batch and epochs.
  const TempFile lines("inherit.jsonl",
                       "{\"batch_size\": 128, \"epochs\": 1}\n"
                       "{\"batch_size\": 256, \"epochs\": 4, \"noise_multiplier\": 1.5}\n");
  const TempFile array("inherit.json",
                       R"([{"batch_size": 128, "epochs": 1, "noise_multiplier": 1.1,
                           "dataset_size": 60000},
                          {"batch_size": 256, "epochs": 4, "noise_multiplier": 1.5,
                           "dataset_size": 60000}])");
  const Json a =
      json_of(run_dpbudget({"epsilon", "--schedule", lines.path, "--dataset-size", "60000",
                            "--sigma", "1.1", "--delta", "1e-5", "--format", "json"}));
  const Json b = json_of(
      run_dpbudget({"epsilon", "--schedule", array.path, "--delta", "1e-5", "--format", "json"}));
  CHECK(a["results"] == b["results"]);
  const Json& phases = a["inputs"]["phases"];
  REQUIRE(phases.size() == 2);
  CHECK(phases[0]["noise_multiplier"] == 1.1);  // inherited
  CHECK(phases[1]["noise_multiplier"] == 1.5);  // its own
  CHECK(phases[0]["steps"] == 469);
  CHECK(phases[1]["steps"] == 938);  // ⌈4 · 60000 / 256⌉
  CHECK(a["inputs"]["total_steps"] == 469 + 938);
  // A phase's batch size replaces the flags' -q (it is not inherited beside it).
  const Json c =
      json_of(run_dpbudget({"epsilon", "--schedule", lines.path, "--dataset-size", "60000", "-q",
                            "0.5", "--sigma", "1.1", "--delta", "1e-5", "--format", "json"}));
  CHECK(c["results"] == a["results"]);
}

TEST_CASE("bad schedules are refused in one line naming the phase and the key") {
  using dpb::test::check_refused;
  const TempFile unknown("unknown.jsonl",
                         "{\"sampling_rate\": 0.01, \"noise_multiplier\": 1, \"steps\": 10}\n"
                         "{\"sampling_rate\": 0.01, \"noise_multipler\": 1, \"steps\": 10}\n");
  check_refused({"epsilon", "--schedule", unknown.path, "--delta", "1e-5"},
                {"--schedule", "phase 2", "noise_multipler", "did you mean noise_multiplier"});
  const TempFile both("both.json",
                      R"([{"sampling_rate": 0.01, "noise_multiplier": 1, "steps": 10,
                           "epochs": 2}])");
  check_refused({"epsilon", "--schedule", both.path, "--delta", "1e-5"},
                {"phase 1", "epochs", "steps"});
  const TempFile mixed("mixed.json",
                       R"([{"sampling_rate": 0.01, "noise_multiplier": 1, "steps": 10},
                           {"sampling": "without-replacement", "batch_size": 10,
                            "dataset_size": 1000, "noise_multiplier": 1, "steps": 10}])");
  check_refused({"epsilon", "--schedule", mixed.path, "--delta", "1e-5"},
                {"phase 2", "sampling", "replace_one", "add_remove"});
  const TempFile twice("twice.json", R"([{"name": "a", "sampling_rate": 0.01,
      "noise_multiplier": 1, "steps": 10}, {"name": "a", "sampling_rate": 0.01,
      "noise_multiplier": 1, "steps": 10}])");
  check_refused({"epsilon", "--schedule", twice.path, "--delta", "1e-5"}, {"phase 2", "name"});
  const TempFile empty("empty.json", "[]");
  check_refused({"epsilon", "--schedule", empty.path, "--delta", "1e-5"},
                {"--schedule", "no phase"});
  const TempFile good("good.json", kTwoPhases);
  check_refused({"sigma", "--schedule", good.path, "--dataset-size", "60000", "--phase", "tail",
                 "--epsilon", "1", "--delta", "1e-5"},
                {"--phase", "tail", "warmup, main"});
  check_refused({"sigma", "--schedule", good.path, "--dataset-size", "60000", "--phase", "main",
                 "--epsilon", "1", "--delta", "1e-5"},
                {"phase 2", "noise_multiplier", "solved"});
  check_refused({"steps", "--schedule", good.path, "--dataset-size", "60000", "--epsilon", "1",
                 "--delta", "1e-5"},
                {"phase 2", "epochs", "solved"});
  check_refused({"epsilon", "--schedule", good.path, "--spec", good.path, "--delta", "1e-5"},
                {"--schedule", "--spec"});
  check_refused({"sigma", "--phase", "main", "-q", "0.01", "--steps", "10", "--epsilon", "1",
                 "--delta", "1e-5"},
                {"--phase", "--schedule"});
}
