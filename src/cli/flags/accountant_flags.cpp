#include "cli/flags/accountant_flags.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"

namespace dpb::cli {
namespace {

/// One accountant setting: its flag, the accountant that reads it and when.
/// Given where nothing reads it, the flag is refused (resolve()).
struct AccountantSetting {
  std::string_view flag;
  std::string_view reader;  ///< the one accountant that reads it
  /// Read only where an (epsilon, delta) is stated (SettingsRead::epsilon_delta).
  bool epsilon_delta_only;
  /// Read too by a shuffled run's lower bound (SettingsRead::shuffled_lower_bound).
  bool shuffled_lower_bound;
  bool (*given)(const AccountantFlags&);
};

constexpr std::array<AccountantSetting, 5> kAccountantSettings{{
    {"--orders", "rdp", false, false, [](const AccountantFlags& f) { return !f.orders.empty(); }},
    {"--conversion", "rdp", true, false,
     [](const AccountantFlags& f) { return f.conversion.has_value(); }},
    {"--composition", "composition", false, false,
     [](const AccountantFlags& f) { return f.composition.has_value(); }},
    {"--pld-interval", "pld", false, true,
     [](const AccountantFlags& f) { return f.pld_interval.has_value(); }},
    {"--pld-tolerance", "pld", false, true,
     [](const AccountantFlags& f) { return f.pld_tolerance.has_value(); }},
}};

/// Refuses each setting given that nothing in `names` (as `read` says) reads.
void check_settings_read(const AccountantFlags& f, const std::vector<std::string>& names,
                         const SettingsRead& read) {
  std::string chosen;
  for (const auto& n : names) chosen += (chosen.empty() ? "" : ",") + n;
  if (f.accountant.empty()) chosen += ", the default";
  for (const auto& s : kAccountantSettings) {
    if (!s.given(f) || (s.shuffled_lower_bound && read.shuffled_lower_bound)) continue;
    const std::string flag(s.flag), reader(s.reader);
    const bool chose = std::find(names.begin(), names.end(), reader) != names.end();
    if (!chose)
      throw UsageError(flag + ": only the " + reader +
                       " accountant reads it, not among those chosen (" + chosen + "); add " +
                       reader + " to --accountant, or leave " + flag + " out");
    if (s.epsilon_delta_only && !read.epsilon_delta)
      throw UsageError(flag + ": " + reader +
                       " reads it only to state epsilon or delta; attack bounds come from the "
                       "Renyi curve itself (leave " +
                       flag + " out)");
  }
}

/// The registered accountants, then "all".
std::vector<std::string> accountant_choices() {
  std::vector<std::string> names;
  for (const auto& info : accountants()) names.push_back(info.name);
  names.push_back("all");
  return names;
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
                                    "in the order given (default rdp)"),
                 choices);
  app.add_option("--orders", f.orders,
                 "Renyi orders > 1: comma list and start:stop:step ranges (default: "
                 "dp_accounting's orders plus every integer 2..64)");
  record_choices(app.add_option("--conversion", f.conversion,
                                "RDP to (epsilon, delta): improved (Balle et al. 2020, default) "
                                "| classic"),
                 choice_names(kConversionChoices));
  record_choices(app.add_option("--composition", f.composition,
                                "composition accountant's theorem: optimal (Kairouz et al., "
                                "default) | advanced (Dwork-Rothblum-Vadhan) | basic"),
                 choice_names(kCompositionChoices));
  app.add_option("--pld-interval", f.pld_interval,
                 "PLD: first discretisation step of the loss grid, > 0 (default automatic)");
  app.add_option("--pld-tolerance", f.pld_tolerance,
                 "PLD: refine the grid until the epsilon interval is narrower than this, "
                 "relative to its upper end, in (0, 1) (default 1e-3)");
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
        for (const auto& info : accountants()) add(info.name);
      } else {
        add(item);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (out.empty()) out.emplace_back("rdp");
  return out;
}

AccountantChoice resolve(const AccountantFlags& f, const SettingsRead& read) {
  AccountantChoice c;
  c.names = parse_accountants(f.accountant);
  if (!f.orders.empty()) c.options.orders = parse_list("--orders", f.orders, kOrder);
  if (f.conversion)
    c.options.conversion = parse_choice("--conversion", *f.conversion, kConversionChoices);
  if (f.composition)
    c.options.composition = parse_choice("--composition", *f.composition, kCompositionChoices);
  if (f.pld_interval)
    c.options.pld_interval = parse_real("--pld-interval", *f.pld_interval, kPositive);
  if (f.pld_tolerance)
    c.options.pld_tolerance = parse_real("--pld-tolerance", *f.pld_tolerance, kOpenUnit);
  check_settings_read(f, c.names, read);
  return c;
}

std::optional<std::string> first_accountant_flag(const AccountantFlags& f) {
  if (!f.accountant.empty()) return "--accountant";
  for (const auto& s : kAccountantSettings)
    if (s.given(f)) return std::string(s.flag);
  return std::nullopt;
}

std::vector<std::string> accountant_setting_flags() {
  std::vector<std::string> flags;
  for (const auto& s : kAccountantSettings) flags.emplace_back(s.flag);
  return flags;
}

void add_inputs(report::Record& in, const AccountantChoice& c) {
  auto uses = [&c](const char* name) {
    return std::find(c.names.begin(), c.names.end(), name) != c.names.end();
  };
  if (uses("rdp"))
    in.add("conversion",
           report::text(std::string(choice_name(kConversionChoices, c.options.conversion))));
  if (uses("rdp") && !c.options.orders.empty()) in.add("orders", report::numbers(c.options.orders));
  if (uses("composition"))
    in.add("composition", report::text(std::string(to_string(c.options.composition))));
  if (uses("pld")) {
    in.add("pld_tolerance", report::number(c.options.pld_tolerance));
    if (c.options.pld_interval > 0) in.add("pld_interval", report::number(c.options.pld_interval));
  }
}

}  // namespace dpb::cli
