// CliSession (cli/app.hpp): one parser per verb kept from one command line to
// the next, as the command-line fuzzer runs them. Each command line must get
// exactly what a fresh run_cli() gives it (status, stdout, stderr), whatever
// ran before it in the session: a flag given on one line and left out on the
// next must not carry over, a run-parameter default (default_val) must be back,
// and an error half-way through a parse must leave nothing behind.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/errors.hpp"
#include "fuzz/fuzz_util.hpp"

using namespace dpb::cli;

namespace {

struct SessionRun {
  int status;
  std::string out, err;
};

/// Runs `args` (without the program name) fresh, or in `session` when given.
SessionRun run_line(const std::vector<std::string>& args, RunMode mode,
                    CliSession* session = nullptr) {
  std::vector<const char*> argv{"dpbudget"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int argc = static_cast<int>(argv.size());
  const int status = session ? session->run(argc, argv.data(), out, err, mode)
                             : run_cli(argc, argv.data(), out, err, mode);
  return {status, out.str(), err.str()};
}

std::string line_text(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

/// Each line in `lines`, forwards then backwards, run in one session and
/// fresh: the same status, stdout and stderr every time.
void same_as_fresh(const std::vector<std::vector<std::string>>& lines, RunMode mode) {
  CliSession session;
  std::vector<std::size_t> order(lines.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<std::size_t> twice = order;
  twice.insert(twice.end(), order.rbegin(), order.rend());
  for (const std::size_t i : twice) {
    INFO(line_text(lines[i]));
    const SessionRun fresh = run_line(lines[i], mode);
    const SessionRun reused = run_line(lines[i], mode, &session);
    CHECK(reused.status == fresh.status);
    CHECK(reused.out == fresh.out);
    CHECK(reused.err == fresh.err);
  }
}

}  // namespace

TEST_CASE("a session answers each command line as a fresh run_cli does, whatever ran before") {
  const std::vector<std::string> run{"-q", "0.01", "--sigma", "1.1", "--steps", "100"};
  const auto with = [&run](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), run.begin(), run.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  // Quick lines (rdp, a few steps) with flags that the next line leaves out.
  const std::vector<std::vector<std::string>> lines = {
      with({"epsilon"}, {"--delta", "1e-5", "--accountant", "rdp"}),
      {"epsilon", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5", "--accountant", "rdp"},
      with({"epsilon"}, {"--delta", "1e-5,1e-6", "--accountant", "rdp", "--format", "json"}),
      with({"epsilon"}, {"--delta", "1e-5", "--accountant", "rdp", "--max-epsilon", "0.1"}),
      {"epsilon", "--sampling", "shuffle", "--dataset-size", "6000", "--batch-size", "60",
       "--epochs", "1", "--sigma", "1.1", "--delta", "1e-5", "--accountant", "rdp"},
      {"epsilon", "--dataset-size", "6000", "--batch-size", "60", "--epochs", "1", "--sigma", "1.1",
       "--delta", "1e-5", "--accountant", "rdp"},
      with({"epsilon"}, {"--delta", "1e-5", "--accountant", "rdp", "--sigam", "2"}),
      with({"epsilon"}, {"--delta", "1e-5", "stray"}),
      with({"delta"}, {"--epsilon", "1,2", "--accountant", "rdp"}),
      {"sigma", "-q", "0.01", "--steps", "100", "--epsilon", "1", "--delta", "1e-5", "--accountant",
       "rdp"},
      {"sigma", "-q", "0.01", "--steps", "100", "--epsilon", "1", "--delta", "1e-5", "--accountant",
       "rdp", "--max-sigma", "0.5"},
      {"sweep", "-q", "0.01,0.02", "--sigma", "1:2:0.5", "--steps", "100", "--delta", "1e-5",
       "--accountant", "rdp", "--format", "csv"},
      {"sweep", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5", "--accountant",
       "rdp"},
      {"compose", "--epsilon", "0.1", "--delta", "1e-8", "--count", "10", "--target-delta", "1e-5"},
      {"gaussian", "--sigma", "2", "--delta", "1e-5"},
      {"mf-sensitivity", "--strategy", "sqrt", "--steps", "100"},
      {"mf-sensitivity", "--strategy", "banded", "--steps", "100"},
      {"events", "--format", "csv"},
      {"events"},
      {"completions", "list"},
      {"completions", "fish"},
      {"completions"},
      {"--help"},
      {"epsilon", "--help"},
      {"--version"},
      {"--sigma", "1", "epsilon"},
      {"-x"},
      {"epsilno", "-q", "0.01"},
      {},
  };
  same_as_fresh(lines, RunMode::run);
  same_as_fresh(lines, RunMode::check);
}

TEST_CASE("a session answers the fuzzer's seed inputs as fresh run_cli calls do") {
  // Check mode (the fuzzer's): every seed input's parse and validation.
  std::vector<std::vector<std::string>> lines;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(DPBUDGET_FUZZ_DIR) + "/corpus/cli")) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    // Split and skipped as the fuzzer splits and skips them.
    const auto words = dpb::fuzz::command_words(bytes);
    if (dpb::fuzz::stays_in_scratch(words)) lines.push_back(words);
  }
  std::sort(lines.begin(), lines.end());
  REQUIRE(lines.size() >= 20);
  same_as_fresh(lines, RunMode::check);
}
