#pragma once
// Small helpers for the mechanism verbs (compose, amplify, gaussian, laplace,
// gdp, tradeoff): one-value flags, either-or flag pairs, and warnings that go
// both under the text table and to stderr. Parsing itself is parse.hpp's.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "report/record.hpp"
#include "report/render.hpp"

namespace dpb::cli {

inline constexpr Domain kDelta{0, 1, false, true, "a number in [0, 1)"};
inline constexpr Domain kClosedUnit{0, 1, false, false, "a number in [0, 1]"};

/// The value of a one-value flag, or nullopt when it was not given. A list
/// or several occurrences are a UsageError naming the flag.
std::optional<double> optional_real(const char* flag, const std::vector<std::string>& texts,
                                    const Domain& domain);
/// An integer in [min, max] (forms like 1e4 accepted); the message names the range.
std::optional<std::int64_t> optional_integer(const char* flag,
                                             const std::vector<std::string>& texts,
                                             std::int64_t min,
                                             std::int64_t max = std::int64_t{1} << 53);

/// The same for a required flag: "<flag> is required" when missing.
double required_real(const char* flag, const std::vector<std::string>& texts, const Domain& domain);

/// Exactly one of two flags: throws "<a> is required (or <b>)" when neither
/// is given and "<b>: give either <a> or <b>, not both" when both are.
/// Returns true when `a` was given.
bool either(const char* a, bool has_a, const char* b, bool has_b);

/// A warning for the reader: a footnote `warning: ...` under the text table
/// (added once); finish() also prints it on stderr.
void warn(report::Report& report, const std::string& warning);

/// A note for the reader: a footnote under the text table, added once.
void note(report::Report& report, const std::string& text);

/// Prints the report's warnings on stderr as `dpbudget: warning: ...`, then
/// the report on `out` (all at once, see emit()). Warnings are held back
/// until here so that a call that fails prints its one error line only.
void finish(const report::Report& report, const OutputFlags& output, std::ostream& out,
            std::ostream& err);

/// `v` printed to 17 significant digits (for messages that quote a computed bound).
std::string shown(double v);

}  // namespace dpb::cli
