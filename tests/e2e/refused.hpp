#pragma once
// Refusals of the built binary: the shape of support/refusal.hpp (exit 2
// unless another status is named, nothing on stdout, one stderr line
// `dpbudget: error: ...` naming every one of `names`), on a Run or on the run
// of the given arguments.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "run.hpp"
#include "support/refusal.hpp"

namespace dpb::test {

/// Runs dpbudget with `args` (no stdin) and checks that it refuses them.
inline void check_refused(std::initializer_list<std::string> args,
                          const std::vector<std::string>& names, int status = kExitBadInput) {
  std::string joined;
  for (const auto& a : args) joined += a + ' ';
  INFO("args: ", joined);
  check_refused(run_dpbudget(args), names, status);
}

}  // namespace dpb::test
