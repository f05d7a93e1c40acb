#pragma once
// The CLI's error model. Exceptions are caught once, in run_cli(), which
// prints `dpbudget: error: <what>` on stderr and returns the exit status.
#include <stdexcept>
#include <string>

namespace dpb::cli {

/// Exit statuses, documented in README.md, the man page and --help.
enum ExitStatus : int {
  kOk = 0,
  kBudgetExceeded = 1,  ///< a --max-epsilon gate failed
  kUsage = 2,           ///< bad usage or input
  kNoSolution = 3,      ///< a solver found no value meeting the target
  /// A budget gate with no sound upper bound to decide on: every chosen
  /// accountant gives only an approximation (or nothing) for the run.
  kNoUpperBound = 4,
};

/// Bad usage or input; the message names the flag and what is allowed.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dpb::cli
