#pragma once
// Strict parsing of numeric flag values, with messages that name the flag and
// the allowed range. Lists accept comma-separated items, each a number or a
// `start:stop[:step]` range (step 1 when omitted; stop included when it falls
// on the grid, within rounding).
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace dpb::cli {

/// An interval of allowed values and how to say it in an error message.
struct Domain {
  double lo;
  double hi;
  bool lo_open;
  bool hi_open;
  const char* description;  ///< e.g. "a number in [0, 1]"
  bool contains(double v) const;
};

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr Domain kProbability{0, 1, false, false, "a number in [0, 1]"};
inline constexpr Domain kOpenUnit{0, 1, true, true, "a number in (0, 1)"};
inline constexpr Domain kPositive{0, kInf, true, true, "a finite number > 0"};
inline constexpr Domain kNonNegative{0, kInf, false, true, "a finite number >= 0"};
inline constexpr Domain kOrder{1, kInf, true, true, "a finite number > 1"};

/// 2^53, the largest integer flag value: every integer up to it is exact in
/// a double, and counts pass through doubles on the way.
inline constexpr double kMaxInteger = 9007199254740992.0;

/// The most items one list flag may expand to.
inline constexpr std::size_t kMaxListItems = 1'000'000;

/// A flag's values as typed, joined by commas ("1,2"), for messages.
std::string comma_joined(const std::vector<std::string>& texts);

/// What a number as typed holds that is no ASCII character of a number but
/// looks like one (U+2212 MINUS SIGN for '-', a no-break space, ...), as a
/// clause for a message (" (it holds U+2212 MINUS SIGN: type '-')"); "" if none.
std::string look_alike_hint(std::string_view text);

/// When a single-value flag's values, as typed, read as one number written
/// with a comma ("0,01", "1,000"): what the comma may be, as a clause for a
/// message (" (a decimal comma? write '0.01')"; for a whole number only a
/// thousands separator); "" otherwise.
std::string comma_number_hint(const std::vector<std::string>& texts, bool whole_number);

double parse_real(std::string_view flag, const std::string& text, const Domain& domain);

/// An integer in [min, 2^53]; accepts forms like 10000 and 1e4.
std::int64_t parse_integer(std::string_view flag, const std::string& text, std::int64_t min);

/// Every item of every text (each a comma list of numbers and ranges), in
/// order; never empty (an empty list or item is refused).
std::vector<double> parse_list(std::string_view flag, const std::vector<std::string>& texts,
                               const Domain& domain);

/// Integer lists: each item and each range value must be an integer ≥ min.
std::vector<std::int64_t> parse_integer_list(std::string_view flag,
                                             const std::vector<std::string>& texts,
                                             std::int64_t min);

/// Rows at most in a table of every combination of several lists' values
/// (gaussian, laplace: the rows are held until printed): as many as one list
/// may hold. Two lists of 10^6 values would otherwise ask for 10^12 rows in
/// memory, and the process would be killed for it.
inline constexpr std::size_t kMaxTableRows = kMaxListItems;

/// Refuses `rows` above kMaxTableRows with a UsageError naming `flag` (the
/// last list of the combination).
void check_table_rows(std::string_view flag, std::size_t rows);

/// `text` if it is one of `allowed`, else a UsageError listing them.
std::string parse_choice(std::string_view flag, const std::string& text,
                         const std::vector<std::string>& allowed);

}  // namespace dpb::cli
