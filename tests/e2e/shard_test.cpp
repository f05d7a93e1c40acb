// sweep --shard K/N through the binary: the N outputs, concatenated in order,
// are the unsharded output (CSV with its header once, JSON Lines from an
// --input file on stdin, N larger than the number of rows); bad shards are
// refused; CSV rows that would not line up across shards are an error, never
// misaligned. Many more grids, formats and N, in-process:
// tests/cli/sweep_shard_test.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "refused.hpp"
#include "run.hpp"
#include "support/shards.hpp"

using namespace dpb::test;

namespace {

/// Shards 1/n … n/n of `args`, each a run of the binary, concatenated.
std::string concatenated(const std::vector<std::string>& args, std::size_t n,
                         const std::string& stdin_text = "") {
  const auto binary = [](const std::vector<std::string>& a, const std::string& in) {
    return run_dpbudget(a, in);
  };
  return shards_concatenated(binary, args, n, stdin_text);
}

}  // namespace

// The binary's shards, on stdout, for a grid and an --input file on stdin
// (tests/cli/sweep_shard_test.cpp checks many more N in-process).
TEST_CASE("sweep --shard: the binary's shards concatenated are the whole sweep") {
  const std::vector<std::string> grid{"sweep",       "-q",       "0.01,0.02", "--sigma",
                                      "0.8:1.2:0.1", "--steps",  "100,1000",  "--delta",
                                      "1e-5",        "--format", "csv"};
  const auto whole = run_dpbudget(grid);
  REQUIRE(whole.status == 0);
  std::size_t lines = 0;
  for (char c : whole.out) lines += c == '\n';
  CHECK(lines == 21u);  // the header, 2 × 5 × 2 configurations
  CHECK(concatenated(grid, 3) == whole.out);
  const std::string configs =
      R"({"name": "a", "sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 1000, "delta": 1e-5})"
      "\n"
      R"({"name": "b", "sampling_rate": 0.02, "noise_multiplier": 0.9, "steps": 500, "delta": 1e-5})"
      "\n";
  const std::vector<std::string> input{"sweep", "--input", "-", "--format", "jsonl"};
  const auto from_input = run_dpbudget(input, configs);
  REQUIRE(from_input.status == 0);
  CHECK(concatenated(input, 3, configs) == from_input.out);  // N above the number of configurations
}

TEST_CASE("sweep --shard: bad shards get one line and exit 2") {
  for (const char* bad : {"0/3", "4/3", "1/0", "3", "a/b", "1/", "/2", "1/2/3", "-1/2", "1.5/2"}) {
    INFO(bad);
    check_refused(run_dpbudget({"sweep", "-q", "0.01", "--sigma", "1", "--steps", "10", "--delta",
                                "1e-5", "--shard", bad}),
                  {"--shard", "K/N"});
  }
}

TEST_CASE("sweep --shard with CSV: rows that would not line up are an error") {
  // The first line has no name; a later one does: its CSV row has a column
  // the first configuration's rows lack.
  const std::string configs =
      R"({"sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 1000, "delta": 1e-5})"
      "\n"
      R"({"name": "b", "sampling_rate": 0.02, "noise_multiplier": 0.9, "steps": 500, "delta": 1e-5})"
      "\n";
  const auto r =
      run_dpbudget({"sweep", "--input", "-", "--format", "csv", "--shard", "1/1"}, configs);
  CHECK(r.status == 2);
  CHECK(r.err.find("--shard") != std::string::npos);
  CHECK(r.err.find("'name'") != std::string::npos);
  CHECK(r.err.find("--format jsonl") != std::string::npos);
  // Unsharded, the same CSV has every column (the union), and JSON Lines shards work.
  CHECK(run_dpbudget({"sweep", "--input", "-", "--format", "csv"}, configs).status == 0);
  const auto whole = run_dpbudget({"sweep", "--input", "-", "--format", "jsonl"}, configs);
  CHECK(concatenated({"sweep", "--input", "-", "--format", "jsonl"}, 2, configs) == whole.out);
}
