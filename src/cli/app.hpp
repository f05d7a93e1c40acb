#pragma once
#include <memory>
#include <ostream>

#include "cli/errors.hpp"

namespace dpb::cli {

/// The whole command line: parses argv, runs the verb, prints errors as
/// `dpbudget: error: ...` on `err`, and returns the exit status (errors.hpp).
/// RunMode::check stops each verb once its flags are validated (the fuzzer's
/// mode; see RunMode).
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            RunMode mode = RunMode::run);

/// Command lines one after another in one process: run() answers each exactly
/// as run_cli() would, but builds each parser once (a verb's, and the one with
/// every verb that --help, an unknown verb or flag and the completions need)
/// and only clears it and resets its flags (Verb::reset) before the next
/// command line. For a caller that runs many short command lines, such as the
/// fuzzer: building a verb's parser costs more than parsing with it.
class CliSession {
 public:
  CliSession();
  ~CliSession();
  CliSession(const CliSession&) = delete;
  CliSession& operator=(const CliSession&) = delete;

  int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
          RunMode mode = RunMode::run);

 private:
  struct Parsers;
  std::unique_ptr<Parsers> parsers_;
};

}  // namespace dpb::cli
