// Fuzzes the whole command line in-process: the input is split into argv on
// NUL and newline bytes and run by one CliSession (cli/app.hpp: each verb's
// parser built once, cleared and reset for each input; it answers as run_cli()
// does) with its output captured. A crash that needs the inputs before it
// (something a reset left behind) may not recur when its input is rerun alone:
// rerun the fuzzer on the same corpus with the seed its log names (-seed=N).
//
// Checks: the exit status is a documented one (0..6, README "Exit status"), no "internal error"
// (an exception the CLI did not expect), no NaN printed, (via the sanitizers)
// no memory error, undefined behaviour or leak, and for one check-mode input in
// kFreshRunEvery, the same status, stdout and stderr from a fresh run_cli().
//
// Most inputs run in RunMode::check: the verb parses and validates its flags
// and stops before it computes, so the fuzzer's time goes to parsing (about a
// millisecond an input under ASan, against tens for the accounting). One input
// in kFullRunEvery (chosen by a hash of its bytes, so a crash reproduces) runs
// to the end. Those full runs may ask for legitimately long work (a sweep over
// a million rows, 10^6 plot points, the PLD grid refined to its memory limit);
// such inputs are not run to the end, so that libFuzzer's -timeout only catches
// real hangs: every number in the arguments is at most 1000 in magnitude, at
// most one argument is a range (a ':'), its steps are at least 0.1, the
// arguments' values multiply to at most kQuickRows rows, and `pld`
// (the accountant whose answer may take seconds by design; tests/accounting/
// extreme_inputs_test.cpp covers it) is not asked for, nor `report` without
// --accountant (it runs every accountant); they run in RunMode::check instead.
// Arguments that name stdin ("-") or a path with '/' are skipped in both modes:
// the fuzzer runs in a scratch directory and may only read and write files there.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "cli/app.hpp"
#include "fuzz_util.hpp"

namespace {

bool number_char(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

/// Whether every number-looking run of `arg` is allowed (see above).
bool numbers_small(const std::string& arg, bool in_range) {
  std::size_t i = 0;
  while (i < arg.size()) {
    if (!number_char(arg[i]) || arg[i] == 'e' || arg[i] == 'E') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < arg.size() && number_char(arg[j])) ++j;
    const std::string run = arg.substr(i, j - i);
    char* end = nullptr;
    const double v = std::strtod(run.c_str(), &end);
    if (end != run.c_str()) {
      if (!(std::fabs(v) <= 1000)) return false;
      if (in_range && v != 0 && std::fabs(v) < 0.1) return false;
    }
    i = j;
  }
  return true;
}

/// One input in this many runs its verb to the end (see above): the full runs'
/// accounting costs 10-30 ms an input under ASan, parsing about 1 ms.
constexpr std::uint32_t kFullRunEvery = 16;

/// One check-mode input in this many (by its hash) is run a second time by a
/// fresh run_cli() and compared with the session's answer: a parser built per
/// input costs several session inputs, so this is about a tenth of the time.
constexpr std::uint32_t kFreshRunEvery = 64;

/// FNV-1a of the input: which inputs run to the end, the same on every run.
std::uint32_t input_hash(const std::uint8_t* data, std::size_t size) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

/// Rows at most in a full run: gaussian and laplace make a row for each
/// combination of their lists (up to 10^6 under the row limit: tens of seconds
/// under ASan), a sweep one per grid point.
constexpr double kQuickRows = 1000;

/// How many values `arg` may stand for: a comma list's items, a range
/// `start:stop[:step]` (step 1 when omitted) counted by its ends and step.
double values_in(const std::string& arg) {
  double n = 0;
  std::size_t start = 0;
  while (start <= arg.size()) {
    const std::size_t end = std::min(arg.find(',', start), arg.size());
    const std::string item = arg.substr(start, end - start);
    double count = 1;
    if (const auto colon = item.find(':'); colon != std::string::npos) {
      const auto second = item.find(':', colon + 1);
      const double lo = std::strtod(item.c_str(), nullptr);
      const double hi = std::strtod(item.c_str() + colon + 1, nullptr);
      const double step =
          second == std::string::npos ? 1 : std::strtod(item.c_str() + second + 1, nullptr);
      if (step > 0) count = std::floor(std::fabs(hi - lo) / step) + 1;
    }
    n += count;
    start = end + 1;
  }
  return n;
}

/// Whether an input's full run is quick (see above).
bool quick_to_run(const std::vector<std::string>& args) {
  // `report` runs every accountant (pld too) unless --accountant says which.
  bool report = false, accountant = false;
  for (const auto& a : args) {
    report = report || a == "report";
    accountant = accountant || a.rfind("--accountant", 0) == 0;
  }
  if (report && !accountant) return false;
  int ranges = 0;
  double rows = 1;
  for (const auto& a : args) {
    if (a.find("pld") != std::string::npos) return false;
    const bool range = a.find(':') != std::string::npos;
    ranges += range;
    if (ranges > 1 || !numbers_small(a, range)) return false;
    rows *= values_in(a);
  }
  return rows <= kQuickRows;
}

/// The scratch directory the fuzzer runs in; removed when libFuzzer ends the
/// run with exit() (a crash leaves it, beside the input that did it).
char g_scratch[] = "/tmp/dpbudget-fuzz-XXXXXX";

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A scratch directory for files the verbs may write (plot -o NAME).
  if (mkdtemp(g_scratch) == nullptr || chdir(g_scratch) != 0) std::abort();
  std::atexit([] {
    std::error_code ignored;  // a directory that cannot be removed is only litter
    std::filesystem::remove_all(g_scratch, ignored);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"dpbudget"};
  const auto words = dpb::fuzz::command_words({reinterpret_cast<const char*>(data), size});
  args.insert(args.end(), words.begin(), words.end());
  if (args.size() > 64 || !dpb::fuzz::stays_in_scratch(args))
    return -1;  // -1: not added to the corpus
  const std::uint32_t hash = input_hash(data, size);
  const bool full_run = hash % kFullRunEvery == 0 && quick_to_run(args);

  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  // One session for every input: each verb's parser is built once and reset
  // before each input, which run_cli() would build anew (most of an input's
  // time under ASan); tests/cli/cli_session_test.cpp checks that a session
  // answers as run_cli() does.
  static dpb::cli::CliSession session;
  const int status = session.run(static_cast<int>(argv.size()), argv.data(), out, err,
                                 full_run ? dpb::cli::RunMode::run : dpb::cli::RunMode::check);
  if (status < 0 || status > 6) dpb::fuzz::fail("exit status", std::to_string(status));
  // The prefix run_cli() gives an unexpected exception, at the start of a
  // line: a message may quote the user's own arguments, which can contain any
  // text but never a newline (arguments are split at newlines).
  const std::string e = "\n" + err.str();
  if (e.find("\ndpbudget: error: internal error: ") != std::string::npos)
    dpb::fuzz::fail("internal error", err.str());
  if (dpb::fuzz::has_nan_token(out.str())) dpb::fuzz::fail("NaN in output", out.str());
  // Some check-mode inputs again through a fresh run_cli(): the session must
  // answer exactly as it does, or a reset left something of an earlier input.
  if (!full_run && (hash / kFullRunEvery) % kFreshRunEvery == 0) {
    std::ostringstream fresh_out, fresh_err;
    const int fresh = dpb::cli::run_cli(static_cast<int>(argv.size()), argv.data(), fresh_out,
                                        fresh_err, dpb::cli::RunMode::check);
    if (fresh != status || fresh_out.str() != out.str() || fresh_err.str() != err.str())
      dpb::fuzz::fail("the session's answer is not a fresh run_cli()'s",
                      "session: " + std::to_string(status) + " " + err.str() +
                          "fresh: " + std::to_string(fresh) + " " + fresh_err.str());
  }
  return 0;
}
