// --accumulation-steps k (issue 24, item 8;
// docs/sampling.md#gradient-accumulation): with gradient
// accumulation the logical batch B·k is what is sampled and the steps are
// optimizer steps, so a micro-batch B with k accumulation steps is exactly
// the run of batch B·k; k = 1 changes nothing; mistakes are refused.
#include <doctest/doctest.h>

#include <cmath>
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
using dpb::test::with;
using Json = nlohmann::json;

namespace {

/// The text output below its inputs block: the table of rows and the notes.
std::string rows_of_text(const std::string& out) {
  const auto blank = out.find("\n\n");
  REQUIRE(blank != std::string::npos);
  return out.substr(blank + 2);
}

}  // namespace

TEST_CASE("accumulation: batch 64 x 4 steps prints the rows of batch 256 (rdp, pld, schemes)") {
  struct Case {
    std::vector<std::string> run;  ///< without the batch flags
    double dataset_size, epochs;   ///< for the closed-form T (0 epochs: --steps given)
    std::int64_t steps;            ///< T when --steps is given
  };
  const std::vector<Case> cases = {
      {{"--dataset-size", "6000", "--epochs", "3"}, 6000, 3, 0},
      {{"--dataset-size", "6400", "--epochs", "3", "--sampling", "shuffle"}, 6400, 3, 0},
      {{"--dataset-size", "6000", "--epochs", "3", "--sampling", "shuffle"}, 6000, 3, 0},
      {{"--dataset-size", "6000", "--steps", "50"}, 6000, 0, 50},
      {{"--dataset-size", "6000", "--epochs", "3", "--last-batch", "drop"}, 6000, 3, 0},
  };
  for (const auto& c : cases) {
    const auto base =
        with({"epsilon", "--sigma", "1.1", "--delta", "1e-5", "--accountant", "rdp,pld"}, c.run);
    const auto logical = with(base, {"--batch-size", "256"});
    const auto accumulated = with(base, {"--batch-size", "64", "--accumulation-steps", "4"});
    CAPTURE(c.run);
    const auto a = json_of(run_dpbudget(with(accumulated, {"--format", "json"})));
    const auto b = json_of(run_dpbudget(with(logical, {"--format", "json"})));
    CHECK(a.at("results") == b.at("results"));
    CHECK(a.value("notes", Json()) == b.value("notes", Json()));
    // Shuffle with 256 dividing 6400: an upper, a lower and an estimate row per accountant.
    CHECK(a.at("results").size() >= 2);
    // The inputs: the physical batch as given, k, the logical batch, and
    // q and T of the logical batch (closed forms, docs/sampling.md#gradient-accumulation).
    const auto& in = a.at("inputs");
    CHECK(in.at("batch_size") == 64);
    CHECK(in.at("accumulation_steps") == 4);
    CHECK(in.at("logical_batch_size") == 256);
    CHECK(in.at("sampling_rate").get<double>() == 256.0 / c.dataset_size);
    // A shuffled loader's epochs are whole batches, the last partial one kept: E·⌈N/B⌉
    // (docs/sampling.md#last-batch).
    const std::int64_t t =
        c.epochs == 0            ? c.steps
        : c.run.back() == "drop" ? static_cast<std::int64_t>(c.epochs) *
                                       static_cast<std::int64_t>(std::floor(c.dataset_size / 256))
        : c.run.back() == "shuffle"
            ? static_cast<std::int64_t>(c.epochs) *
                  static_cast<std::int64_t>(std::ceil(c.dataset_size / 256))
            : static_cast<std::int64_t>(std::ceil(c.epochs * c.dataset_size / 256));
    CHECK(in.at("steps").get<std::int64_t>() == t);
    CHECK(b.at("inputs").at("steps") == in.at("steps"));
    // Text: the same table, digit for digit.
    const auto ta = run_dpbudget(accumulated), tb = run_dpbudget(logical);
    REQUIRE(ta.status == 0);
    CHECK(rows_of_text(ta.out) == rows_of_text(tb.out));
    CHECK(ta.out.find("logical_batch_size") != std::string::npos);
  }
}

TEST_CASE(
    "accumulation: the issue's run, batch 64 x 4 is batch 256 (0.919), not batch 64 (0.417)") {
  const std::vector<std::string> run = {
      "epsilon", "--dataset-size", "60000",        "--epochs", "10",       "--sigma", "1.1",
      "--delta", "1e-5",           "--accountant", "pld",      "--format", "json"};
  const auto accumulated =
      json_of(run_dpbudget(with(run, {"--batch-size", "64", "--accumulation-steps", "4"})));
  const auto logical = json_of(run_dpbudget(with(run, {"--batch-size", "256"})));
  const auto physical = json_of(run_dpbudget(with(run, {"--batch-size", "64"})));
  CHECK(accumulated.at("results") == logical.at("results"));
  const double eps = accumulated.at("results").at(0).at("epsilon").get<double>();
  const double wrong = physical.at("results").at(0).at("epsilon").get<double>();
  CHECK(eps == doctest::Approx(0.919).epsilon(1e-3));
  CHECK(wrong == doctest::Approx(0.417).epsilon(1e-3));
}

TEST_CASE("accumulation: k = 1 is the default and changes nothing") {
  for (const std::vector<std::string>& run :
       {std::vector<std::string>{"epsilon", "--dataset-size", "6000", "--batch-size", "64",
                                 "--epochs", "2", "--sigma", "1", "--delta", "1e-5"},
        std::vector<std::string>{"epsilon", "-q", "0.01", "--steps", "100", "--sigma", "1",
                                 "--delta", "1e-5"},
        std::vector<std::string>{"steps", "--dataset-size", "6000", "--batch-size", "64", "--sigma",
                                 "1", "--delta", "1e-5", "--epsilon", "2"}})
    for (const char* format : {"text", "json"}) {
      CAPTURE(run);
      const auto plain = run_dpbudget(with(run, {"--format", format}));
      const auto one = run_dpbudget(with(run, {"--format", format, "--accumulation-steps", "1"}));
      REQUIRE(plain.status == 0);
      CHECK(one.status == 0);
      CHECK(one.out == plain.out);
      CHECK(one.err == plain.err);
      CHECK(plain.out.find("accumulation") == std::string::npos);
    }
  const std::string line =
      R"({"dataset_size": 6000, "batch_size": 64, "epochs": 2, "noise_multiplier": 1, "delta": 1e-5)";
  const auto plain = run_dpbudget({"sweep", "--input", "-", "--format", "jsonl"}, line + "}\n");
  const auto one = run_dpbudget({"sweep", "--input", "-", "--format", "jsonl"},
                                line + R"(, "accumulation_steps": 1})" + "\n");
  REQUIRE(plain.status == 0);
  CHECK(one.out == plain.out);
}

TEST_CASE("accumulation: mistakes are refused, exit 2, one line naming the flags") {
  const std::vector<std::string> run = {"epsilon", "--sigma", "1", "--delta", "1e-5"};
  check_refused(run_dpbudget(with(run, {"--dataset-size", "600", "--batch-size", "64", "--epochs",
                                        "1", "--accumulation-steps", "0"})),
                {"--accumulation-steps", "integer >= 1"});
  check_refused(run_dpbudget(with(run, {"--dataset-size", "600", "--batch-size", "64", "--epochs",
                                        "1", "--accumulation-steps", "2.5"})),
                {"--accumulation-steps", "integer >= 1"});
  // q given directly is already the rate of one optimizer step.
  check_refused(
      run_dpbudget(with(run, {"-q", "0.01", "--steps", "10", "--accumulation-steps", "4"})),
      {"--accumulation-steps", "--sampling-rate", "optimizer step", "--batch-size"});
  // The logical batch B·k larger than N.
  check_refused(run_dpbudget(with(run, {"--dataset-size", "200", "--batch-size", "64", "--steps",
                                        "10", "--accumulation-steps", "4"})),
                {"--accumulation-steps", "--batch-size", "--dataset-size", "256", "200"});
  // No micro-batch to accumulate.
  check_refused(run_dpbudget(with(
                    run, {"--dataset-size", "200", "--steps", "10", "--accumulation-steps", "4"})),
                {"--accumulation-steps", "--batch-size"});
  // Solving for the sampling rate without N: there is no micro-batch to solve for.
  check_refused(run_dpbudget({"sampling-rate", "--sigma", "1", "--steps", "10", "--delta", "1e-5",
                              "--epsilon", "1", "--accumulation-steps", "4"}),
                {"--accumulation-steps", "--dataset-size"});
  // As keys on an --input line.
  check_refused(run_dpbudget({"sweep", "--input", "-"},
                             R"({"dataset_size": 200, "batch_size": 64, "accumulation_steps": 4, )"
                             R"("steps": 10, "noise_multiplier": 1, "delta": 1e-5})"
                             "\n"),
                {"<stdin>:1: accumulation_steps", "batch_size", "dataset_size"});
  check_refused(run_dpbudget({"sweep", "--input", "-"},
                             R"({"dataset_size": 200, "batch_size": 64, "accumulation_steps": 0, )"
                             R"("steps": 10, "noise_multiplier": 1, "delta": 1e-5})"
                             "\n"),
                {"<stdin>:1: accumulation_steps: must be an integer >= 1"});
}

TEST_CASE("accumulation: the JSON Lines key and sweep grids give the logical batch's rows") {
  const auto r = run_dpbudget(
      {"sweep", "--input", "-", "--format", "jsonl", "--accountant", "rdp"},
      R"({"dataset_size": 6000, "batch_size": 64, "accumulation_steps": 4, "epochs": 3, )"
      R"("noise_multiplier": 1.1, "delta": 1e-5})"
      "\n"
      R"({"dataset_size": 6000, "batch_size": 256, "epochs": 3, "noise_multiplier": 1.1, )"
      R"("delta": 1e-5})"
      "\n");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto rows = json_lines(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("accumulation_steps") == 4);
  CHECK(rows[0].at("logical_batch_size") == 256);
  CHECK(rows[0].at("batch_size") == 64);
  CHECK(rows[0].at("steps") == 71);  // ⌈3 · 6000 / 256⌉
  CHECK(rows[0].at("epsilon") == rows[1].at("epsilon"));

  // A grid over k: k = 1 is batch 64, k = 4 is batch 256.
  const auto grid = run_dpbudget({"sweep", "--dataset-size", "6000", "--batch-size", "64",
                                  "--accumulation-steps", "1,4", "--epochs", "3", "--sigma", "1.1",
                                  "--delta", "1e-5", "--format", "jsonl"});
  REQUIRE_MESSAGE(grid.status == 0, grid.err);
  const auto g = json_lines(grid.out);
  REQUIRE(g.size() == 2);
  auto eps = [](const std::vector<std::string>& batch) {
    return json_of(run_dpbudget(with({"epsilon", "--dataset-size", "6000", "--epochs", "3",
                                      "--sigma", "1.1", "--delta", "1e-5", "--format", "json"},
                                     batch)))
        .at("results")
        .at(0)
        .at("epsilon");
  };
  CHECK(g[0].at("epsilon") == eps({"--batch-size", "64"}));
  CHECK(g[1].at("epsilon") == eps({"--batch-size", "256"}));
  CHECK(g[0].at("epsilon") != g[1].at("epsilon"));
}

TEST_CASE("accumulation: sampling-rate solves for the micro-batch, k times the logical batch") {
  // ε grows with the batch (epochs fixed), so the largest micro-batch b with
  // k = 4 is ⌊B*/4⌋ for the largest batch B* without accumulation.
  const std::vector<std::string> run = {
      "sampling-rate", "--dataset-size", "60000",   "--epochs", "10",       "--sigma", "1.1",
      "--epsilon",     "0.919",          "--delta", "1e-5",     "--format", "json"};
  const auto plain = json_of(run_dpbudget(run)).at("results").at(0);
  const auto acc =
      json_of(run_dpbudget(with(run, {"--accumulation-steps", "4"}))).at("results").at(0);
  const std::int64_t best = plain.at("batch_size").get<std::int64_t>();
  CHECK(acc.at("batch_size").get<std::int64_t>() == best / 4);
  CHECK(acc.at("logical_batch_size").get<std::int64_t>() == best / 4 * 4);
  // q = B/N printed on its safe side (down): the double or the one below it.
  const double q = static_cast<double>(best / 4 * 4) / 60000;
  CHECK(acc.at("sampling_rate").get<double>() <= q);
  CHECK(acc.at("sampling_rate").get<double>() >= std::nextafter(q, 0.0));
  CHECK(acc.at("epsilon").get<double>() <= 0.919);
}
