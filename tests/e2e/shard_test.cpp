// sweep --shard K/N: the N outputs, concatenated in order, are the unsharded
// output (JSON Lines and CSV with its header once), for grids and --input
// files, for N larger than the number of rows; bad shards are refused; CSV
// rows that would not line up across shards are an error, never misaligned.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "refused.hpp"
#include "run.hpp"

using namespace dpb::test;

namespace {

std::string concatenated(const std::vector<std::string>& args, std::size_t n,
                         const std::string& stdin_text = "") {
  std::string all;
  for (std::size_t k = 1; k <= n; ++k) {
    std::vector<std::string> a = args;
    a.push_back("--shard");
    a.push_back(std::to_string(k) + "/" + std::to_string(n));
    const auto r = run_dpbudget(a, stdin_text);
    INFO("shard ", k, "/", n, " stderr: ", r.err);
    CHECK(r.status == 0);
    all += r.out;
  }
  return all;
}

}  // namespace

TEST_CASE("sweep --shard: the shards concatenated are the whole sweep (grid, CSV and JSON Lines)") {
  const std::vector<std::string> base{"sweep",       "-q",           "0.01,0.02",      "--sigma",
                                      "0.8:1.2:0.1", "--steps",      "100,1000,10000", "--delta",
                                      "1e-5,1e-6",   "--accountant", "rdp,gdp"};
  for (const char* format : {"csv", "jsonl"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--format", format});
    const auto whole = run_dpbudget(args);
    REQUIRE(whole.status == 0);
    // 2 × 5 × 3 configurations, 2 δ × 2 accountants each: 120 rows.
    std::size_t lines = 0;
    for (char c : whole.out) lines += c == '\n';
    CHECK(lines == (std::string(format) == "csv" ? 121u : 120u));
    for (std::size_t n : {1u, 2u, 3u, 7u, 30u, 45u}) {
      INFO(format, " N = ", n);
      CHECK(concatenated(args, n) == whole.out);
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
    const auto whole = run_dpbudget(args, configs);
    REQUIRE(whole.status == 0);
    for (std::size_t n : {1u, 2u, 3u, 5u, 10u}) {
      INFO(format, " N = ", n);
      CHECK(concatenated(args, n, configs) == whole.out);
    }
  }
  const std::vector<std::string> solve{"sweep", "--solve",  "sigma",   "--epsilon",      "1,2",
                                       "-q",    "0.01",     "--steps", "1000,2000,4000", "--delta",
                                       "1e-5",  "--format", "csv"};
  const auto whole = run_dpbudget(solve);
  REQUIRE(whole.status == 0);
  CHECK(concatenated(solve, 4) == whole.out);
  // A shard with no configuration prints nothing (and shard 1 the header).
  const auto empty = run_dpbudget({"sweep", "-q", "0.01", "--sigma", "1", "--steps", "10",
                                   "--delta", "1e-5", "--format", "csv", "--shard", "2/5"});
  CHECK(empty.status == 0);
  CHECK(empty.out.empty());
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
