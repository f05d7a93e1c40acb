#pragma once
#include <string>

#include "report/record.hpp"

namespace dpb::report {

/// `v` with at most `digits` significant digits, rounded in direction `r`:
/// with Rounding::up the decimal shown is ≥ v, with Rounding::down ≤ v.
/// Infinite values print as "inf" / "-inf"; NaN as "nan" (callers never pass it).
std::string format_number(double v, int digits, Rounding r);

/// The shortest decimal that reads back as exactly `v` ("inf" for infinity).
std::string format_shortest(double v);

}  // namespace dpb::report
