#pragma once
// Two constants of double arithmetic, defined once for the accountants: +∞,
// the value they return when the truth is infinite (printed as `inf`), and
// the unit round-off u their error bounds count in.
#include <limits>

namespace dpb {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
/// Unit round-off u of double: 2⁻⁵³, half the gap from 1 to the next double.
inline constexpr double kU = std::numeric_limits<double>::epsilon() / 2;

}  // namespace dpb
