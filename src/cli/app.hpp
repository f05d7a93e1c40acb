#pragma once
#include <ostream>

namespace dpb::cli {

/// The whole command line: parses argv, runs the verb, prints errors as
/// `dpbudget: error: ...` on `err`, and returns the exit status (errors.hpp).
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace dpb::cli
