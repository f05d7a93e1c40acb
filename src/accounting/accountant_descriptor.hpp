#pragma once
// Everything the program knows of an accountant beside its code, written
// once (ARCHITECTURE.md, "Adding an accountant"): its name and summary, how
// to make one, its settings (each setting's flag, help, default and when it
// is read), the sentence a report says of its method and whether `report`
// shows it by default, whether its DP-SGD figure is a bound, and where its σ
// search starts. registry.cpp lists the descriptors. The command line
// declares --accountant and the settings' flags from them, `report` its
// default accountants and its list of methods, the σ search its starting
// point, and the budget gate the accountants that would bound a run. Pure
// data: no parsing, no rendering.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accounting/accountant.hpp"

namespace dpb {

/// What a setting's flag takes.
enum class SettingForm {
  numbers,  ///< a list of numbers (comma lists and start:stop:step ranges; the flag repeatable)
  number,   ///< one number
  choice,   ///< one of the setting's `choices`
};

/// Where a setting's numbers must lie; the command line refuses a number
/// outside, naming the flag and `description`.
struct SettingDomain {
  double lo;
  double hi;
  bool lo_open;
  bool hi_open;
  const char* description;  ///< e.g. "a finite number > 1"
};

/// A setting as read from its flag: its numbers (one for SettingForm::number),
/// or the place of the name chosen in the setting's `choices`.
struct SettingValue {
  std::vector<double> numbers;
  std::size_t choice = 0;
};

/// A setting as an answer's `inputs` record shows it: its key and value.
struct ShownSetting {
  std::string key;
  std::variant<std::string, double, std::vector<double>> value;
  bool operator==(const ShownSetting&) const = default;
};

/// One setting of one accountant: a field of its own settings in
/// AccountantOptions (`set` writes it), and the flag that sets it on every
/// verb that takes --accountant. Given where no accountant chosen reads it,
/// the flag is refused, naming the accountant that does.
/// The fields without a default are required: g++ warns of one left out
/// (-Wextra's -Wmissing-field-initializers; an error with DPBUDGET_WERROR),
/// and tests/accounting/accountant_descriptor_test.cpp refuses one left empty.
struct AccountantSetting {
  std::string_view flag;  ///< "--orders"
  std::string_view help;  ///< the flag's help in --help and the man page
  /// Its default, as `help` states it ("improved", "1e-3", "automatic").
  std::string_view default_text;
  SettingForm form;
  SettingDomain domain{};  ///< numbers and number: where each must lie
  /// choice: the names the flag takes, in the order `set` numbers them.
  std::span<const std::string_view> choices{};
  /// Read only where an ε or δ is stated, not for attack bounds (rdp's come
  /// from the Rényi curve itself, whatever the conversion).
  bool epsilon_delta_only = false;
  /// Read too by the lower bound beside a shuffled run (answer(): pld's
  /// interval), whichever accountants are chosen.
  bool shuffled_lower_bound = false;
  /// Writes `value` into the accountant's own settings in `options`.
  void (*set)(AccountantOptions& options, const SettingValue& value);
};

/// What an accountant's figure for a subsampled DP-SGD run claims.
enum class DpSgdFigure {
  bound,          ///< a sound upper bound
  approximation,  ///< no bound either way (gdp's central-limit theorem)
};

/// As for AccountantSetting, a field without a default is required.
struct AccountantDescriptor {
  std::string name;     ///< its --accountant name, and Accountant::name()
  std::string summary;  ///< one line
  std::unique_ptr<Accountant> (*make)(const AccountantOptions& options);
  /// Its settings, in the order their flags are declared.
  std::span<const AccountantSetting> settings{};
  /// Its settings as an answer's `inputs` record shows them when it is
  /// chosen, in order (a key for each setting given a value).
  std::vector<ShownSetting> (*shown)(const AccountantOptions& options);
  /// The sentence `report` says of its method ("How this was computed").
  std::string_view report_method;
  /// `report` asks it unless --accountant says which (then drops it where
  /// its figure is only an approximation).
  bool report_default = false;
  /// Its place in a report: its method's line and, by default, its rows
  /// (smaller first; each accountant's its own).
  int report_order;
  /// The accountant asked when --accountant names none (exactly one is).
  bool asked_by_default = false;
  DpSgdFigure dp_sgd_figure = DpSgdFigure::bound;
  /// A cheaper accountant whose σ, solved coarsely, starts this one's σ
  /// search (docs/calibration.md#sigma); empty: the search starts from σ = 1.
  std::string_view sigma_hint_from{};
  /// The σ search accepts a σ only when this accountant's figure is below the
  /// target by this share (docs/calibration.md#sigma): a figure read off a
  /// grid chosen afresh for each question may differ in its last digits when
  /// the same question comes through another path (epsilon with the printed
  /// σ), and the printed σ must meet the target there too.
  double reask_margin = 0;
};

/// Every registered accountant, in the order `--accountant all` shows them.
std::span<const AccountantDescriptor> accountants();
/// The accountant registered as `name`, or nullptr.
const AccountantDescriptor* find_accountant(std::string_view name);
/// The accountant asked when --accountant names none.
const AccountantDescriptor& default_accountant();
/// The accountants `report` asks by default, in report order.
std::vector<std::string_view> report_default_accountants();
/// Every accountant in report order (its method's line in "How this was computed").
std::vector<const AccountantDescriptor*> accountants_in_report_order();

}  // namespace dpb
