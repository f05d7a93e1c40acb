#pragma once
// The accountant flags of the DP-SGD verbs: which accountants (--accountant)
// and their settings (--orders, --conversion, --composition, --pld-*).
#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/answer.hpp"
#include "cli/flags/choices.hpp"
#include "report/record.hpp"

namespace dpb::cli {

/// Which accountants, and their settings as given (none: the default).
struct AccountantFlags {
  /// --accountant as given: each a name, `all` or a comma list (none: the
  /// default accountant, default_accountant()).
  std::vector<std::string> accountant;
  /// Each accountant setting given (AccountantSetting, declared from the
  /// accountants' descriptors), by its flag: its values as typed.
  std::map<std::string, std::vector<std::string>, std::less<>> settings;
};

/// What a verb asks of the accountants, which decides the settings it reads
/// (AccountantSetting::epsilon_delta_only and shuffled_lower_bound).
struct SettingsRead {
  /// An (epsilon, delta) is stated (not only attack bounds, which rdp takes
  /// from the Renyi curve itself): rdp reads --conversion.
  bool epsilon_delta = true;
  /// A shuffled run's lower bound may be computed, with pld: the pld
  /// settings are read whatever the accountants chosen.
  bool shuffled_lower_bound = false;
};

/// Declares --accountant and every registered accountant's settings' flags.
void add_accountant_flags(CLI::App& app, AccountantFlags& flags);
/// With no --accountant on a verb that states or solves for a DP-SGD run's
/// figure, and the run Poisson-sampled (where pld's interval is tight), one
/// line on stderr: the default accountant's figure is a sound upper bound,
/// not a tight one, and which accountant gives the tight one
/// (docs/claims.md#default-accountant).
void note_default_accountant(const AccountantFlags& flags, Sampling sampling, std::ostream& err);
/// The accountants --accountant names: each text a name, `all` or a comma list
/// of them (the flag may be repeated). `all` is every registered accountant in
/// registry order; a name given twice (`rdp,rdp`, `pld,all`) keeps its first
/// place, so rows come in the order first given. An unknown or empty name is a
/// UsageError naming it. No text: the default accountant (rdp).
std::vector<std::string> parse_accountants(const std::vector<std::string>& texts);
/// The accountants and their settings; a setting given that none of the
/// chosen accountants reads (as `read` says) is a UsageError naming the flag
/// and the accountant that reads it: it could only be a mistake.
AccountantChoice resolve(const AccountantFlags& flags, const SettingsRead& read = {});
/// The first accountant flag given (--accountant or a setting), as messages
/// name it; none when none was given.
std::optional<std::string> first_accountant_flag(const AccountantFlags& flags);
/// The flags of the accountants' settings, in the order they are declared.
std::vector<std::string> accountant_setting_flags();
/// The settings that apply to the chosen accountants, in report order.
void add_inputs(report::Record& inputs, const AccountantChoice& choice);

}  // namespace dpb::cli
