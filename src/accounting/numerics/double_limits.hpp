#pragma once
// Two constants of double arithmetic, defined once for the accountants: +∞,
// the value they return when the truth is infinite (printed as `inf`), and
// the unit round-off u their error bounds count in.
#include <limits>

namespace dpb {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
/// The unit round-off of a double, u = 2⁻⁵³ (half the gap from 1 to the next
/// double): a correctly rounded operation has relative error at most u.
inline constexpr double kU = std::numeric_limits<double>::epsilon() / 2;

}  // namespace dpb
