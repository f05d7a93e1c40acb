#pragma once
// A guarantee's named detail (the order chosen, the per-step δ, μ, ...), read
// by the tests that check a reported detail against an independent value.
#include <doctest/doctest.h>

#include <string>

#include "accounting/accountant.hpp"

namespace dpb::test {

/// The value of detail `key` in `g`; the test case fails if `g` has none.
inline double detail_of(const Guarantee& g, const std::string& key) {
  for (const auto& [k, v] : g.details)
    if (k == key) return v;
  FAIL("no detail " << key);
  return 0;
}

}  // namespace dpb::test
