#pragma once
// Neighbouring datasets: which pairs of datasets a guarantee is about, and
// what one record can change under each relation.
#include <string_view>

namespace dpb {

/// Which datasets count as neighbours (dp_accounting's NeighboringRelation):
/// one record added or removed; one record replaced by another; one record
/// replaced by a special "null" record (Kairouz et al. 2021, Def. II.3).
enum class Neighbouring { add_remove, replace_one, replace_special };
std::string_view to_string(Neighbouring n);

/// L2 sensitivity of the sum of clipped records under replace-one, in units of
/// the clipping norm.
inline constexpr double kReplaceOneSensitivity = 2.0;

}  // namespace dpb
