#pragma once
// --neighbouring's values, shared by the verbs that take a spec and by
// `sweep --input` lines.
#include <array>

#include "accounting/events/neighbouring.hpp"
#include "cli/flags/choices.hpp"

namespace dpb::cli {

/// --neighbouring (and the "neighbouring" key of sweep --input lines with a
/// spec): which datasets count as neighbours, dp_accounting's
/// NeighboringRelation.
inline constexpr std::array<Choice<Neighbouring>, 3> kNeighbouringChoices{{
    {"add-remove", Neighbouring::add_remove},
    {"replace-one", Neighbouring::replace_one},
    {"replace-special", Neighbouring::replace_special},
}};

}  // namespace dpb::cli
