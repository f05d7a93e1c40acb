#include "cli/flags/suggest.hpp"

#include <algorithm>

namespace dpb::cli {
namespace {

/// Two edits catch a swapped pair plus a missing letter ("--sgiam"); more
/// would pair unrelated short flags.
constexpr std::size_t kMaxEdits = 2;
/// Names (without dashes) shorter than this allow one edit only: two edits
/// turn any 3-letter name into most others ("--pld" -> "--gdp").
constexpr std::size_t kTwoEditsFromLength = 5;
/// A one-letter name (`-x`) is never "close" to another: every pair is one edit apart.
constexpr std::size_t kMinSuggestLength = 2;
/// A prefix suggests its flag from this many letters on ("--acc" -> "--accountant").
constexpr std::size_t kMinPrefix = 3;

std::string bare(const std::string& s) {
  const auto start = s.find_first_not_of('-');
  return start == std::string::npos ? std::string() : s.substr(start);
}

/// The length of bare(s), without building it.
std::size_t bare_size(const std::string& s) {
  const auto start = s.find_first_not_of('-');
  return start == std::string::npos ? 0 : s.size() - start;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  // One flat table, d(i, j) at i * (m + 1) + j: one allocation, not n + 1.
  std::vector<std::size_t> table((n + 1) * (m + 1));
  const auto d = [&](std::size_t i, std::size_t j) -> std::size_t& {
    return table[i * (m + 1) + j];
  };
  for (std::size_t i = 0; i <= n; ++i) d(i, 0) = i;
  for (std::size_t j = 0; j <= m; ++j) d(0, j) = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d(i, j) = std::min({d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d(i, j) = std::min(d(i, j), d(i - 2, j - 2) + 1);
    }
  return d(n, m);
}

std::optional<std::string> closest_name(const std::string& typed,
                                        const std::vector<std::string>& candidates) {
  const std::string word = bare(typed);
  if (word.size() < kMinSuggestLength) return std::nullopt;
  const std::size_t limit = word.size() >= kTwoEditsFromLength ? kMaxEdits : 1;
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    if (bare_size(c) < kMinSuggestLength) continue;
    // The distance is at least the difference in length: a candidate that
    // differs by as much as the best so far cannot win (a typed word of any
    // length costs no table then).
    const std::size_t gap =
        typed.size() > c.size() ? typed.size() - c.size() : c.size() - typed.size();
    if (gap >= best_distance) continue;
    const std::size_t d = edit_distance(typed, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (best) return best;
  // A prefix of several names suggests the shortest, the one it leaves least
  // to add ("--clip" -> "--clipping-norm", not "--clipping-count-noise").
  if (word.size() >= kMinPrefix)
    for (const auto& c : candidates)
      if (bare(c).rfind(word, 0) == 0 && (!best || bare_size(c) < bare_size(*best))) best = c;
  return best;
}

}  // namespace dpb::cli
