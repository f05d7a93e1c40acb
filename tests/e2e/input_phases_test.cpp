// A `phases` key in sweep --input lines (issue 27): a line is a run in
// phases, each phase inheriting the line's own run keys. Checked against
// independent values: `epsilon --spec` of the phases' own events (each
// phase's flags printed by --print-spec, composed here), and `epsilon
// --schedule` of the same phases; refusals name the line, the phase and the key.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run_json.hpp"

using dpb::test::json_lines;
using dpb::test::json_of;
using dpb::test::phase_spec;
using dpb::test::run_dpbudget;
using dpb::test::with;
using Json = nlohmann::json;

namespace {

double epsilon_in(const Json& row) { return row.at("epsilon").get<double>(); }

}  // namespace

TEST_CASE("sweep --input: a line's phases are the composition of its phases' events") {
  // Two schedules on N = 60,000 (the line's key, inherited by each phase).
  const std::string input =
      R"({"name": "warm", "dataset_size": 60000, "phases": [{"batch_size": 128, "noise_multiplier": 2, "epochs": 1}, {"batch_size": 256, "noise_multiplier": 1.1, "epochs": 4}]})"
      "\n"
      R"({"name": "flat", "dataset_size": 60000, "noise_multiplier": 1.1, "phases": [{"batch_size": 256, "epochs": 5}]})"
      "\n";
  for (const char* accountant : {"rdp", "pld"}) {
    CAPTURE(accountant);
    const auto rows = json_lines(run_dpbudget({"sweep", "--input", "-", "--delta", "1e-5",
                                               "--accountant", accountant, "--format", "jsonl"},
                                              input)
                                     .out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["name"] == "warm");
    const Json warm = {{"composed",
                        {phase_spec({"--dataset-size", "60000", "--batch-size", "128", "--sigma",
                                     "2", "--epochs", "1"}),
                         phase_spec({"--dataset-size", "60000", "--batch-size", "256", "--sigma",
                                     "1.1", "--epochs", "4"})}}};
    const Json by_spec = json_of(run_dpbudget({"epsilon", "--spec", "-", "--delta", "1e-5",
                                               "--accountant", accountant, "--format", "json"},
                                              warm.dump()));
    CHECK(epsilon_in(rows[0]) == epsilon_in(by_spec["results"][0]));
    // One phase: the line's σ inherited; the run itself.
    const Json by_flags = json_of(run_dpbudget(
        {"epsilon", "--dataset-size", "60000", "--batch-size", "256", "--sigma", "1.1", "--epochs",
         "5", "--delta", "1e-5", "--accountant", accountant, "--format", "json"}));
    CHECK(rows[1]["name"] == "flat");
    CHECK(epsilon_in(rows[1]) == epsilon_in(by_flags["results"][0]));
  }
}

TEST_CASE("sweep --input: bad phases are refused naming the line, the phase and the key") {
  auto refused = [](const std::string& line, const std::vector<std::string>& names) {
    INFO("line: ", line);
    dpb::test::check_refused(
        run_dpbudget({"sweep", "--input", "-", "--delta", "1e-5"}, line + "\n"), names);
  };
  refused(
      R"({"phases": [{"sampling_rate": 0.01, "noise_multiplier": 1, "steps": 10}, {"sampling_rate": 0.01, "noise_multipler": 1, "steps": 10}]})",
      {"1", "phases: phase 2", "noise_multipler", "noise_multiplier"});
  refused(R"({"phases": []})", {"1", "phases", "non-empty array"});
  refused(R"({"phases": [{"sampling_rate": 0.01, "noise_multiplier": 1}]})",
          {"1", "phases: phase 1", "steps"});
  refused(
      R"({"phases": [{"sampling_rate": 0.01, "noise_multiplier": 1, "steps": 10}], "spec": {"gaussian": {"noise_multiplier": 1}}})",
      {"1", "phases", "spec"});
  refused(R"({"epsilon": 1, "solve": "sigma", "phases": [{"sampling_rate": 0.01, "steps": 10}]})",
          {"1", "solve", "phases", "--schedule"});
  refused(
      R"({"dataset_size": 1000, "phases": [{"batch_size": 10, "noise_multiplier": 1, "steps": 10}, {"batch_size": 10, "noise_multiplier": 1, "steps": 10, "sampling": "without-replacement"}]})",
      {"1", "phases: phase 2", "sampling", "relation"});
}
