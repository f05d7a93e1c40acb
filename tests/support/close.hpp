#pragma once
// Relative closeness of a computed double to an independent value (a closed
// form, a reference file, another formula): the one comparison the tests share.
#include <cmath>

namespace dpb::test {

/// |actual − expected| ≤ rel·|expected| (or ≤ rel when expected is 0).
inline bool close_rel(double actual, double expected, double rel) {
  const double scale = expected == 0 ? 1.0 : std::abs(expected);
  return std::abs(actual - expected) <= rel * scale;
}

}  // namespace dpb::test
