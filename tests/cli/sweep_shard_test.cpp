// sweep --shard K/N, in-process (run_cli): the N outputs, concatenated in
// order, are the unsharded output (JSON Lines and CSV with its header once),
// for grids, --input files and solving, for N larger than the number of rows.
// Each shard was a process of the binary (about 230 of them, ~20 CPU-s under
// the sanitizers; issue 25); tests/e2e/shard_test.cpp runs a few through the
// binary, with bad shards and CSV rows that would not line up.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "in_process.hpp"
#include "support/shards.hpp"

using dpb::test::run_in_process;

namespace {

/// Shards 1/n … n/n of `args`, each run in-process, concatenated.
std::string shards_concatenated(const std::vector<std::string>& args, std::size_t n,
                                const std::string& stdin_text = "") {
  const auto in_process = [](const std::vector<std::string>& a, const std::string& in) {
    return run_in_process(a, dpb::cli::RunMode::run, in);
  };
  return dpb::test::shards_concatenated(in_process, args, n, stdin_text);
}

}  // namespace

TEST_CASE("sweep --shard: the shards concatenated are the whole sweep (grid, CSV and JSON Lines)") {
  const std::vector<std::string> base{"sweep",       "-q",           "0.01,0.02",      "--sigma",
                                      "0.8:1.2:0.1", "--steps",      "100,1000,10000", "--delta",
                                      "1e-5,1e-6",   "--accountant", "rdp,gdp"};
  for (const char* format : {"csv", "jsonl"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--format", format});
    const auto whole = run_in_process(args);
    REQUIRE(whole.status == 0);
    // 2 × 5 × 3 configurations, 2 δ × 2 accountants each: 120 rows.
    std::size_t lines = 0;
    for (char c : whole.out) lines += c == '\n';
    CHECK(lines == (std::string(format) == "csv" ? 121u : 120u));
    for (std::size_t n : {1u, 2u, 3u, 7u, 30u, 45u}) {
      INFO(format, " N = ", n);
      CHECK(shards_concatenated(args, n) == whole.out);
    }
  }
}

TEST_CASE("sweep --shard: --input files, solving, and N above the number of configurations") {
  const std::string configs =
      R"({"name": "a", "sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 1000, "delta": 1e-5})"
      "\n"
      R"({"name": "b", "sampling_rate": 0.02, "noise_multiplier": 0.9, "steps": 500, "delta": 1e-5})"
      "\n"
      R"({"name": "c", "sampling_rate": 0.05, "noise_multiplier": 2, "steps": 60, "delta": 1e-6})"
      "\n";
  for (const char* format : {"csv", "jsonl"}) {
    const std::vector<std::string> args{"sweep", "--input", "-", "--format", format};
    const auto whole = run_in_process(args, dpb::cli::RunMode::run, configs);
    REQUIRE(whole.status == 0);
    CHECK(!whole.out.empty());
    for (std::size_t n : {1u, 2u, 3u, 5u, 10u}) {
      INFO(format, " N = ", n);
      CHECK(shards_concatenated(args, n, configs) == whole.out);
    }
  }
  const std::vector<std::string> solve{"sweep", "--solve",  "sigma",   "--epsilon",      "1,2",
                                       "-q",    "0.01",     "--steps", "1000,2000,4000", "--delta",
                                       "1e-5",  "--format", "csv"};
  const auto whole = run_in_process(solve);
  REQUIRE(whole.status == 0);
  CHECK(shards_concatenated(solve, 4) == whole.out);
  // A shard with no configuration prints nothing (and shard 1 the header).
  const auto empty = run_in_process({"sweep", "-q", "0.01", "--sigma", "1", "--steps", "10",
                                     "--delta", "1e-5", "--format", "csv", "--shard", "2/5"});
  CHECK(empty.status == 0);
  CHECK(empty.out.empty());
}
