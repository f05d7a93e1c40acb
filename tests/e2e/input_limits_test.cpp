// The binary enforces the documented `sweep --input` limits
// (docs/guide.md#sweeps-and-the-budget-gate). The unit tests (tests/cli/config_input_test.cpp)
// cross every limit, the file and row limits at smaller sizes; this checks,
// with the one that is cheap to cross at full size, that `sweep` reads with
// the documented limits: a line of exactly 1 MiB is read, one byte more is
// refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "run.hpp"

using dpb::test::run_dpbudget;

TEST_CASE("sweep --input: a line of 1 MiB is read, one byte more is refused") {
  const std::string config =
      R"({"sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 100, "delta": 1e-5})";
  std::string line = config;
  line.insert(1, std::string((1u << 20) - config.size(), ' '));  // still valid JSON
  REQUIRE(line.size() == 1u << 20);
  const auto fits = run_dpbudget({"sweep", "--input", "-", "--format", "jsonl"}, line + "\n");
  CHECK(fits.status == 0);
  CHECK(fits.err.empty());
  CHECK(fits.out.find("\"epsilon\"") != std::string::npos);
  // Standard input with --format jsonl is answered line by line: line 1's row
  // is out before line 2 is refused. Any other format reads the whole input
  // first and writes nothing.
  const auto over =
      run_dpbudget({"sweep", "--input", "-", "--format", "jsonl"}, config + "\n " + line + "\n");
  CHECK(over.status == 2);
  CHECK(std::count(over.out.begin(), over.out.end(), '\n') == 1);
  CHECK(over.out.find("\"epsilon\"") != std::string::npos);
  CHECK(over.err == "dpbudget: error: --input: <stdin>:2: line longer than 1 MiB\n");
  const auto whole =
      run_dpbudget({"sweep", "--input", "-", "--format", "csv"}, config + "\n " + line + "\n");
  CHECK(whole.status == 2);
  CHECK(whole.out.empty());
  CHECK(whole.err == over.err);
}
