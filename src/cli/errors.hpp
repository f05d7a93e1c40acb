#pragma once
// The CLI's error model. Exceptions are caught once, in run_cli(), which
// prints `dpbudget: error: <what>` on stderr and returns the exit status.
#include <stdexcept>
#include <string>

namespace dpb::cli {

/// Exit statuses, documented in README.md (in full: docs/errors.md#exit-status), the man page
/// and --help.
enum ExitStatus : int {
  kOk = 0,
  kBudgetExceeded = 1,  ///< a --max-epsilon gate failed
  kUsage = 2,           ///< bad usage or input
  kNoSolution = 3,      ///< a solver found no value meeting the target
  /// A budget gate with no sound upper bound to decide on: every chosen
  /// accountant gives only an approximation (or nothing) for the run.
  kNoUpperBound = 4,
  /// Output could not be written (stdout or an -o file: a full disk, a
  /// closed pipe with SIGPIPE ignored); what was written is incomplete.
  kWriteFailed = 5,
  /// Nothing to compute: a sweep's --input holds no configuration (an empty
  /// file, only blank lines or comments).
  kNoConfigurations = 6,
  /// A ledger that cannot be used: no such file, not a ledger, a newer
  /// schema, a wrong or missing key, a file that cannot be read or written
  /// (permissions, a full disk); a server that cannot be reached, a
  /// connection lost before COMMIT, a role without the right, contention
  /// past the bounded retries. The ledger is unchanged.
  kLedgerUnavailable = 7,
  /// ledger-verify found the ledger altered: an entry edited, removed,
  /// inserted or swapped, or a head other than the one expected.
  kLedgerAltered = 8,
  /// A ledger on a server lost the connection while COMMIT was in flight and
  /// the outcome could not be established again: the entry may or may not
  /// be recorded (ledger-history shows which).
  kLedgerOutcomeUnknown = 9,
};

/// How run_cli() runs a verb. `check` parses the command line and validates
/// its flags, and stops where the verb would start computing: the verb asks
/// only_checking() there and returns kOk with nothing written when it says
/// so. Only the command-line fuzzer uses it (tests/fuzz/cli_fuzz.cpp), so
/// that its time goes to parsing rather than to accounting.
enum class RunMode { run, check };

/// Whether this run_cli() call only checks flags (RunMode::check): a verb
/// asks once its flags are validated, before its first computation, and
/// returns kOk when it is so.
[[nodiscard]] bool only_checking();

/// Bad usage or input; the message names the flag and what is allowed.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Output that could not be written; the message names where to and why.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An input with nothing in it to compute (exit status 6): a sweep's --input
/// with no configuration, which must not pass a budget gate unnoticed.
class NoConfigurations : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A ledger that cannot be used (exit status 7); the message names the file
/// and what is wrong with it.
class LedgerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A ledger error whose outcome is unknown (exit status 9, not 7): the
/// connection to the ledger's server was lost while an append's COMMIT was
/// in flight and could not be made again to look; the message says to look
/// with ledger-history.
class LedgerOutcomeUnknown : public LedgerError {
 public:
  using LedgerError::LedgerError;
};

/// A ledger whose hash chain does not hold (exit status 8): no verb decides
/// or reports on it; ledger-verify names every entry at fault.
class LedgerAltered : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dpb::cli
