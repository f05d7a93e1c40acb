#include "cli/flags/accountant_flags.hpp"

#include <algorithm>
#include <string_view>
#include <variant>

#include "accounting/accountant_descriptor.hpp"
#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"

namespace dpb::cli {
namespace {

/// The values given for `setting`, or nullptr when its flag was not given.
const std::vector<std::string>* given(const AccountantFlags& f, const AccountantSetting& setting) {
  const auto it = f.settings.find(setting.flag);
  return it == f.settings.end() ? nullptr : &it->second;
}

/// `setting`'s values as typed, read as its form says (a UsageError naming
/// the flag when one is not what it takes).
SettingValue read_setting(const AccountantSetting& setting, const std::vector<std::string>& texts) {
  const SettingDomain& d = setting.domain;
  const Domain domain{d.lo, d.hi, d.lo_open, d.hi_open, d.description};
  SettingValue v;
  switch (setting.form) {
    case SettingForm::numbers:
      v.numbers = parse_list(setting.flag, texts, domain);
      break;
    case SettingForm::number:
      v.numbers = {parse_real(setting.flag, texts.front(), domain)};
      break;
    case SettingForm::choice: {
      const std::vector<std::string> names(setting.choices.begin(), setting.choices.end());
      const std::string name = parse_choice(setting.flag, texts.front(), names);
      v.choice =
          static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
      break;
    }
  }
  return v;
}

/// Refuses each setting given that nothing in `names` (as `read` says) reads.
void check_settings_read(const AccountantFlags& f, const std::vector<std::string>& names,
                         const SettingsRead& read) {
  std::string chosen;
  for (const auto& n : names) chosen += (chosen.empty() ? "" : ",") + n;
  if (f.accountant.empty()) chosen += ", the default";
  for (const auto& reader : accountants())
    for (const auto& s : reader.settings) {
      if (!given(f, s) || (s.shuffled_lower_bound && read.shuffled_lower_bound)) continue;
      const std::string flag(s.flag);
      const bool chose = std::find(names.begin(), names.end(), reader.name) != names.end();
      if (!chose)
        throw UsageError(flag + ": only the " + reader.name +
                         " accountant reads it, not among those chosen (" + chosen + "); add " +
                         reader.name + " to --accountant, or leave " + flag + " out");
      if (s.epsilon_delta_only && !read.epsilon_delta)
        throw UsageError(flag + ": " + reader.name +
                         " reads it only to state epsilon or delta; attack bounds come from the "
                         "Renyi curve itself (leave " +
                         flag + " out)");
    }
}

/// The registered accountants, then "all".
std::vector<std::string> accountant_choices() {
  std::vector<std::string> names;
  for (const auto& d : accountants()) names.push_back(d.name);
  names.push_back("all");
  return names;
}

/// Declares `setting`'s flag on `app`; what it is given goes to `f.settings`.
void add_setting_flag(CLI::App& app, AccountantFlags& f, const AccountantSetting& setting) {
  const std::string flag(setting.flag), help(setting.help);
  CLI::Option* option = nullptr;
  if (setting.form == SettingForm::numbers) {
    option = app.add_option_function<std::vector<std::string>>(
        flag, [&f, flag](const std::vector<std::string>& v) { f.settings[flag] = v; }, help);
  } else {
    option = app.add_option_function<std::string>(
        flag, [&f, flag](const std::string& v) { f.settings[flag] = {v}; }, help);
  }
  if (setting.form == SettingForm::choice)
    record_choices(option,
                   std::vector<std::string>(setting.choices.begin(), setting.choices.end()));
}

}  // namespace

void add_accountant_flags(CLI::App& app, AccountantFlags& f) {
  const auto choices = accountant_choices();
  std::string names;
  for (const auto& n : choices) names += (names.empty() ? "" : "|") + n;
  // Completions offer the single names; a comma list is typed by hand.
  record_choices(app.add_option("--accountant", f.accountant,
                                "which accountant(s): " + names +
                                    ", or a comma list (rdp,pld) or the flag repeated; rows "
                                    "in the order given (default " +
                                    default_accountant().name + ")"),
                 choices);
  for (const auto& d : accountants())
    for (const auto& setting : d.settings) add_setting_flag(app, f, setting);
}

void note_default_accountant(const AccountantFlags& f, Sampling sampling, std::ostream& err) {
  if (!f.accountant.empty() || sampling != Sampling::poisson) return;
  err << "dpbudget: note: " << default_accountant().name
      << ", the default accountant, gives a sound upper bound that is not tight (MNIST's 30 "
         "epochs at sigma 1.1: 1.79 where the true epsilon is 1.64); --accountant pld gives the "
         "tight interval (docs/claims.md#default-accountant)\n";
}

std::vector<std::string> parse_accountants(const std::vector<std::string>& texts) {
  const auto choices = accountant_choices();
  std::vector<std::string> out;
  auto add = [&out](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const auto& text : texts) {
    std::size_t start = 0;
    for (;;) {
      const auto comma = text.find(',', start);
      const std::string item =
          text.substr(start, comma == std::string::npos ? comma : comma - start);
      if (item.empty() || std::find(choices.begin(), choices.end(), item) == choices.end()) {
        std::string allowed;
        for (const auto& n : choices) allowed += (allowed.empty() ? "" : ", ") + n;
        throw UsageError("--accountant: each name must be one of " + allowed +
                         " (a comma list, or the flag repeated), got '" + item + "'" +
                         (item == text ? "" : " in '" + text + "'"));
      }
      if (item == "all") {
        for (const auto& d : accountants()) add(d.name);
      } else {
        add(item);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (out.empty()) out.push_back(default_accountant().name);
  return out;
}

AccountantChoice resolve(const AccountantFlags& f, const SettingsRead& read) {
  AccountantChoice c;
  c.names = parse_accountants(f.accountant);
  for (const auto& d : accountants())
    for (const auto& s : d.settings)
      if (const auto* texts = given(f, s)) s.set(c.options, read_setting(s, *texts));
  check_settings_read(f, c.names, read);
  return c;
}

std::optional<std::string> first_accountant_flag(const AccountantFlags& f) {
  if (!f.accountant.empty()) return "--accountant";
  for (const auto& d : accountants())
    for (const auto& s : d.settings)
      if (given(f, s)) return std::string(s.flag);
  return std::nullopt;
}

std::vector<std::string> accountant_setting_flags() {
  std::vector<std::string> flags;
  for (const auto& d : accountants())
    for (const auto& s : d.settings) flags.emplace_back(s.flag);
  return flags;
}

void add_inputs(report::Record& in, const AccountantChoice& c) {
  for (const auto& d : accountants()) {
    if (std::find(c.names.begin(), c.names.end(), d.name) == c.names.end()) continue;
    for (const auto& [key, value] : d.shown(c.options)) {
      if (const auto* text = std::get_if<std::string>(&value))
        in.add(key, report::text(*text));
      else if (const auto* number = std::get_if<double>(&value))
        in.add(key, report::number(*number));
      else
        in.add(key, report::numbers(std::get<std::vector<double>>(value)));
    }
  }
}

}  // namespace dpb::cli
