#pragma once
#include <cmath>
#include <limits>
#include <string>

#include "report/record.hpp"

namespace dpb::report {

/// `v` with at most `digits` significant digits, rounded in direction `r`:
/// with Rounding::up the decimal shown is ≥ v, with Rounding::down ≤ v.
/// Infinite values print as "inf" / "-inf"; NaN as "nan" (callers never pass it).
std::string format_number(double v, int digits, Rounding r);

/// The shortest decimal that reads back as exactly `v` ("inf" for infinity).
std::string format_shortest(double v);

/// Sign of (the decimal number `text`) − v, exactly: −1, 0 or 1. `text` is a
/// finite decimal as to_chars or a JSON writer prints it ("1e-05",
/// "4.377178095681223", "-12.5"); v finite.
int compare_decimal(const std::string& text, double v);

/// The double whose shortest decimal, as `print` writes it, lies on the safe
/// side of v (≥ v for Rounding::up, ≤ v for down): v itself when its decimal
/// does, else its neighbour toward that side, whose every round-trip decimal
/// lies beyond v (its rounding interval starts half an ulp past v). A JSON
/// or CSV reader then sees a number that is still a bound, and the shortest
/// text of a double. Rounding::nearest returns v.
template <typename Print>
double directed(double v, Rounding r, Print print) {
  if (r == Rounding::nearest || !std::isfinite(v)) return v;
  const int c = compare_decimal(print(v), v);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (r == Rounding::up && c < 0) return std::nextafter(v, kInf);
  if (r == Rounding::down && c > 0) return std::nextafter(v, -kInf);
  return v;
}

/// format_shortest of directed(v, r, format_shortest): the shortest decimal
/// of v or of its neighbour, on the safe side of v.
std::string format_shortest_directed(double v, Rounding r);

}  // namespace dpb::report
