#pragma once
// The shape of a refusal (README, "Exit status"): the exit status (2, bad
// input, unless another is named), nothing on stdout, and one stderr line
// `dpbudget: error: ...` naming every one of `names`. For any result with
// `status`, `out` and `err`: a run of the binary (tests/e2e/run.hpp, whose
// tests/e2e/refused.hpp also runs it) or of the CLI in-process.
#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace dpb::test {

/// README, "Exit status": 2 is bad input, 3 no solution.
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNoSolution = 3;

template <class Result>
void check_refused(const Result& r, const std::vector<std::string>& names,
                   int status = kExitBadInput) {
  INFO("stderr: ", r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("dpbudget: error: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // exactly one line
  for (const auto& n : names) CHECK_MESSAGE(r.err.find(n) != std::string::npos, n);
}

/// The text of the one-line usage error `r` (exit 2, nothing on stdout, one
/// stderr line `dpbudget: error: TEXT`): TEXT, without the prefix and the
/// newline.
template <class Result>
std::string usage_error_text(const Result& r) {
  INFO("stderr: ", r.err);
  CHECK(r.status == kExitBadInput);
  CHECK(r.out.empty());
  const std::string prefix = "dpbudget: error: ";
  REQUIRE(r.err.rfind(prefix, 0) == 0);
  REQUIRE(r.err.find('\n') == r.err.size() - 1);  // exactly one line
  return r.err.substr(prefix.size(), r.err.size() - prefix.size() - 1);
}

}  // namespace dpb::test
