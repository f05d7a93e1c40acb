#pragma once
// "Did you mean ...?" for a misspelt flag or verb: the closest known name by
// edit distance, or none when nothing is close.
#include <optional>
#include <string>
#include <vector>

namespace dpb::cli {

/// Optimal-string-alignment distance (Damerau–Levenshtein with adjacent
/// transpositions, each substring edited once): insertions, deletions,
/// substitutions and swaps of two neighbours each cost 1.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The candidate closest to `typed`: the smallest edit distance within the
/// limit for the name's length, or else the shortest candidate `typed` is a
/// prefix of (at least kMinPrefix characters beyond the dashes); none when
/// nothing is close. Ties go to the earlier candidate.
std::optional<std::string> closest_name(const std::string& typed,
                                        const std::vector<std::string>& candidates);

}  // namespace dpb::cli
