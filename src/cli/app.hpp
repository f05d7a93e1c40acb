#pragma once
#include <ostream>

#include "cli/errors.hpp"

namespace dpb::cli {

/// The whole command line: parses argv, runs the verb, prints errors as
/// `dpbudget: error: ...` on `err`, and returns the exit status (errors.hpp).
/// RunMode::check stops each verb once its flags are validated (the fuzzer's
/// mode; see RunMode).
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
            RunMode mode = RunMode::run);

}  // namespace dpb::cli
