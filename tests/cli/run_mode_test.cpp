// RunMode::check (cli/errors.hpp), the command-line fuzzer's mode: a verb
// parses and validates its flags and stops before it computes. Checked
// against RunMode::run on the same command lines: a command both accept
// writes nothing in check mode and its answer in run mode; a command run
// mode refuses at a flag, check mode refuses with the same line and status.
// Also: an unknown verb said from the verb table (without building every
// verb's parser) is the message the parser's path gives.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/errors.hpp"

using namespace dpb::cli;

namespace {

struct ModeRun {
  int status;
  std::string out, err;
};

ModeRun run(std::vector<std::string> args, RunMode mode) {
  args.insert(args.begin(), "dpbudget");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int status = run_cli(static_cast<int>(argv.size()), argv.data(), out, err, mode);
  return {status, out.str(), err.str()};
}

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

TEST_CASE("check mode stops each verb that computes once its flags are valid") {
  // One valid command per verb that asks only_checking().
  const std::vector<std::vector<std::string>> valid = {
      {"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5"},
      {"delta", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--epsilon", "1"},
      {"sigma", "-q", "0.01", "--steps", "100", "--epsilon", "1", "--delta", "1e-5"},
      {"steps", "-q", "0.01", "--sigma", "1.1", "--epsilon", "1", "--delta", "1e-5"},
      {"sampling-rate", "--sigma", "1.1", "--steps", "100", "--epsilon", "1", "--delta", "1e-5"},
      {"sweep", "-q", "0.01", "--sigma", "1:2:0.5", "--steps", "100", "--delta", "1e-5"},
      {"compose", "--epsilon", "0.1", "--delta", "1e-8", "--count", "10", "--target-delta", "1e-5"},
      {"gdp", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5"},
      {"plot", "-q", "0.01", "--sigma", "1.1", "--steps", "1:100", "--delta", "1e-5", "-o", "-"},
      {"audit", "--tp", "55", "--fn", "45", "--fp", "45", "--tn", "55", "-q", "0.01", "--sigma",
       "1.1", "--steps", "100", "--delta", "1e-5"},
      {"risk", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--accountant", "rdp"},
      {"report", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5",
       "--accountant", "rdp"},
      {"plan", "--epsilon", "8", "--delta", "1e-5", "--dataset-size", "1000", "--compute", "10000",
       "--max-batch-size", "64"},
      {"mf-sensitivity", "--strategy", "sqrt", "--steps", "100"},
      {"mf-epsilon", "--strategy", "tree", "--steps", "100", "--sigma", "2", "--delta", "1e-5"},
      {"mf-sigma", "--strategy", "banded", "--steps", "100", "--bands", "4", "--participation",
       "cyclic-poisson", "-q", "0.1", "--epsilon", "2", "--delta", "1e-5"},
      {"mf-error", "--strategy", "identity,banded", "--steps", "100", "--bands", "2,4", "--epsilon",
       "2", "--delta", "1e-5"},
      // A row per value of a list or a range (up to 10^6 values each): quick per
      // row, not in all.
      {"laplace", "--epsilon", "0.5,1"},
      {"laplace", "--scale", "2", "--delta", "1e-5,1e-3"},
      {"gaussian", "--epsilon", "0.5", "--delta", "1e-5"},
      {"gaussian", "--sigma", "2,3", "--delta", "1e-5"},
      {"gaussian", "--sigma", "5,9", "--delta", "1e-5,1e-3", "--method", "classic"},
      {"gaussian", "--sigma", "5", "--epsilon", "0.5", "--method", "classic"},
      {"tradeoff", "--mu", "1"},
  };
  for (const auto& args : valid) {
    INFO(joined(args));
    const ModeRun full = run(args, RunMode::run);
    CHECK(full.status == kOk);
    CHECK_FALSE(full.out.empty());
    const ModeRun checked = run(args, RunMode::check);
    CHECK(checked.status == kOk);
    CHECK(checked.out.empty());
    CHECK(checked.err.find("error") == std::string::npos);
  }
}

TEST_CASE("check mode refuses what run mode refuses, with the same line") {
  const std::vector<std::vector<std::string>> refused = {
      {"epsilon", "-q", "2", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5"},
      {"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "100"},
      {"delta", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--epsilon", "-1"},
      {"sigma", "-q", "0.01", "--steps", "100", "--epsilon", "1", "--delta", "1"},
      {"steps", "-q", "0.01", "--sigma", "0", "--epsilon", "1", "--delta", "1e-5"},
      {"sweep", "-q", "0.01", "--sigma", "2:1:0.5", "--steps", "100", "--delta", "1e-5"},
      {"sweep", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5", "--keep-going"},
      {"compose", "--epsilon", "0.1", "--delta", "1e-8", "--target-delta", "1e-5"},
      {"gdp", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--group", "0", "--delta", "1e-5"},
      {"plot", "-q", "0.01", "--sigma", "1.1", "--steps", "1:100", "--delta", "1e-5"},
      {"audit", "--tp", "90", "--fn", "10", "--fp", "10", "--tn", "90", "-q", "0.01", "--sigma",
       "1.1", "--steps", "100", "--delta", "0"},
      {"risk", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--fpr", "0"},
      {"report", "-q", "0.01", "--sigma", "1.1", "--steps", "100"},
      {"plan", "--epsilon", "8", "--delta", "1e-5"},
      {"mf-sensitivity", "--strategy", "banded", "--steps", "100"},
      {"mf-epsilon", "--strategy", "tree", "--steps", "100", "--sigma", "2", "--bands", "4",
       "--participation", "cyclic-poisson", "-q", "0.1", "--delta", "1e-5"},
      {"mf-sigma", "--strategy", "sqrt", "--steps", "100", "--epsilon", "2"},
      {"mf-error", "--strategy", "banded", "--steps", "100"},
      {"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5",
       "--accountant", "pld", "--conversion", "tight"},
      {"gaussian", "--sigma", "1,5", "--delta", "0.5,1e-5", "--method", "classic"},
      {"gaussian", "--sigma", "5", "--epsilon", "0.5,1", "--method", "classic"},
      {"laplace", "--scale", "2", "--delta", "1"},
      {"tradeoff", "--mu", "1", "--points", "1"},
  };
  for (const auto& args : refused) {
    INFO(joined(args));
    const ModeRun full = run(args, RunMode::run);
    CHECK(full.status == kUsage);
    CHECK(full.out.empty());
    REQUIRE(full.err.rfind("dpbudget: error: ", 0) == 0);
    const ModeRun checked = run(args, RunMode::check);
    CHECK(checked.status == full.status);
    CHECK(checked.err == full.err);
    CHECK(checked.out.empty());
  }
}

TEST_CASE("gaussian --method classic names the first pair, in the rows' order, not covered") {
  // sigma 1 at delta 0.5: epsilon = sqrt(2 ln 2.5) = 1.35373 >= 1, the first row
  // not covered (delta 1e-5 gives 4.85 after it); sigma 10 is covered at both.
  for (const auto mode : {RunMode::run, RunMode::check}) {
    const ModeRun r =
        run({"gaussian", "--sigma", "10,1", "--delta", "0.5,1e-5", "--method", "classic"}, mode);
    CHECK(r.status == kUsage);
    CHECK(r.err.find("would give epsilon = 1.35373 ") != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("gaussian and laplace refuse a table of more rows than one list may hold") {
  // 2000 values x 999 values = 1998000 rows, each held until printed (two lists of
  // 10^6 would be 10^12): one line naming the flag, in both modes.
  const std::vector<std::vector<std::string>> big = {
      {"gaussian", "--sigma", "1:2000", "--delta", "0.001:0.999:0.001"},
      {"gaussian", "--epsilon", "1:2000", "--delta", "0.001:0.999:0.001"},
      {"laplace", "--scale", "1:2000", "--delta", "0.001:0.999:0.001"},
  };
  for (const auto& args : big)
    for (const auto mode : {RunMode::run, RunMode::check}) {
      INFO(joined(args));
      const ModeRun r = run(args, mode);
      CHECK(r.status == kUsage);
      CHECK(r.err ==
            "dpbudget: error: --delta: with the other lists' values this makes 1998000 rows (one "
            "for each combination); at most 1000000\n");
      CHECK(r.out.empty());
    }
  // 1001 x 999 = 999999 rows: allowed.
  CHECK(run({"gaussian", "--sigma", "1:1001", "--delta", "0.001:0.999:0.001"}, RunMode::check)
            .status == kOk);
}

TEST_CASE("check mode: a run whose answer would take long returns at once, valid") {
  // pld at a million steps: seconds to compute; check mode only validates.
  const ModeRun checked = run({"epsilon", "-q", "0.01", "--sigma", "0.6", "--steps", "1000000",
                               "--delta", "1e-5", "--accountant", "pld"},
                              RunMode::check);
  CHECK(checked.status == kOk);
  CHECK(checked.out.empty());
}

TEST_CASE("an unknown verb: the table's message is the parser's") {
  // Without a help-like word the message comes from the verb table; with
  // one that is not help (--helpx), from the parser's error path.
  for (const std::string word : {"epsilom", "sigam", "xyzzy", "", "completion"}) {
    INFO("verb '", word, "'");
    const ModeRun fast = run({word, "--x"}, RunMode::run);
    const ModeRun parsed = run({word, "--helpx"}, RunMode::run);
    CHECK(fast.status == kUsage);
    CHECK(parsed.status == kUsage);
    CHECK(fast.err.rfind("dpbudget: error: unknown verb '" + word + "'", 0) == 0);
    CHECK(fast.err == parsed.err);
    CHECK(fast.out.empty());
  }
  // Help and the version still win after an unknown word, as before.
  CHECK(run({"xyzzy", "--help"}, RunMode::run).status == kOk);
  CHECK(run({"xyzzy", "-h"}, RunMode::run).status == kOk);
  CHECK(run({"xyzzy", "--version"}, RunMode::run).out.rfind("dpbudget ", 0) == 0);
}
