#pragma once
// The command line run in-process: run_cli (what the binary's main() calls),
// its standard output and error captured, its standard input given as text.
// For the CLI tests that run many command lines: each run of the binary
// costs a process start (under the sanitizers ~0.1 s of CPU; issue 25), and
// tests/e2e/ checks what only the process shows (exit status, the streams).
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/errors.hpp"

namespace dpb::test {

struct CliRun {
  int status;
  std::string out, err;
};

/// run_cli on `args` (without the program name) in `mode`, reading
/// `stdin_text` as standard input (empty: an empty input, as </dev/null).
inline CliRun run_in_process(const std::vector<std::string>& args,
                             dpb::cli::RunMode mode = dpb::cli::RunMode::run,
                             const std::string& stdin_text = "") {
  std::vector<const char*> argv{"dpbudget"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  std::istringstream in(stdin_text);
  // rdbuf() also clears std::cin's state flags, here and when restored.
  std::streambuf* const saved = std::cin.rdbuf(in.rdbuf());
  int status = 0;
  try {
    status = dpb::cli::run_cli(static_cast<int>(argv.size()), argv.data(), out, err, mode);
  } catch (...) {
    std::cin.rdbuf(saved);
    throw;
  }
  std::cin.rdbuf(saved);
  return {status, out.str(), err.str()};
}

}  // namespace dpb::test
