#pragma once
// The shape of a refusal (README, "Exit status"): exit 2, nothing on stdout,
// one stderr line `dpbudget: error: ...` naming every one of `names`.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "run.hpp"

namespace dpb::test {

inline void check_refused(const Run& r, const std::vector<std::string>& names) {
  INFO("stderr: ", r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("dpbudget: error: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
  for (const auto& n : names) CHECK_MESSAGE(r.err.find(n) != std::string::npos, n);
}

}  // namespace dpb::test
