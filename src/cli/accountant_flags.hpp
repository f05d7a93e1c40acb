#pragma once
// The accountant flags of the DP-SGD verbs: which accountants (--accountant)
// and their settings (--orders, --conversion, --composition, --pld-*).
#include <CLI/CLI.hpp>
#include <array>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/answer.hpp"
#include "cli/choices.hpp"
#include "report/record.hpp"

namespace dpb::cli {

inline constexpr std::array<Choice<RdpConversion>, 2> kConversionChoices{{
    {"improved", RdpConversion::improved},
    {"classic", RdpConversion::classic},
}};
inline constexpr std::array<Choice<CompositionMethod>, 3> kCompositionChoices{{
    {"basic", CompositionMethod::basic},
    {"advanced", CompositionMethod::advanced},
    {"optimal", CompositionMethod::optimal},
}};

/// Which accountants, and their settings.
struct AccountantFlags {
  /// --accountant as given: each a name, `all` or a comma list (none: rdp).
  std::vector<std::string> accountant;
  std::vector<std::string> orders;
  std::string conversion = "improved";
  std::string composition = "optimal";
  std::string pld_interval;   ///< empty = automatic
  std::string pld_tolerance;  ///< empty = AccountantOptions default
};

void add_accountant_flags(CLI::App& app, AccountantFlags& flags);
/// The accountants --accountant names: each text a name, `all` or a comma list
/// of them (the flag may be repeated). `all` is every registered accountant in
/// registry order; a name given twice (`rdp,rdp`, `pld,all`) keeps its first
/// place, so rows come in the order first given. An unknown or empty name is a
/// UsageError naming it. No text: rdp.
std::vector<std::string> parse_accountants(const std::vector<std::string>& texts);
AccountantChoice resolve(const AccountantFlags& flags);
/// The settings that apply to the chosen accountants, in report order.
void add_inputs(report::Record& inputs, const AccountantChoice& choice);

}  // namespace dpb::cli
