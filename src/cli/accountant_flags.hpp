#pragma once
// The accountant flags of the DP-SGD verbs: which accountants (--accountant)
// and their settings (--orders, --conversion, --composition, --pld-*).
#include <CLI/CLI.hpp>
#include <array>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
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
  std::string accountant = "rdp";
  std::vector<std::string> orders;
  std::string conversion = "improved";
  std::string composition = "optimal";
  std::string pld_interval;   ///< empty = automatic
  std::string pld_tolerance;  ///< empty = AccountantOptions default
};

void add_accountant_flags(CLI::App& app, AccountantFlags& flags);
struct AccountantChoice {
  std::vector<std::string> names;  ///< one, or all registered for "all"
  AccountantOptions options;
};
AccountantChoice resolve(const AccountantFlags& flags);
/// The settings that apply to the chosen accountants, in report order.
void add_inputs(report::Record& inputs, const AccountantChoice& choice);

}  // namespace dpb::cli
