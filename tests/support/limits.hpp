#pragma once
// Constants the test files share (the accounting tests compile in batches, so a
// name at namespace scope is defined once; tests/CMakeLists.txt).
#include <limits>

namespace dpb::test {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// Two routes to the same bound (another formula, another event kind reaching
/// the same profile, a closed form): relative agreement to a few roundings
/// and the code's round-ups of a few machine epsilons each.
inline constexpr double kSameBound = 1e-12;

}  // namespace dpb::test
