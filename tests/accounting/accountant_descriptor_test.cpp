// Every registered accountant is described in full (accountant_descriptor.hpp):
// what --accountant and the settings' flags, `report`, the budget gate and
// the σ search read of it. An accountant registered with a field of its
// descriptor left out, or one that says something its code does not do,
// fails here; the command line's side is tests/cli/accountant_flags_test.cpp.
#include "accounting/accountant_descriptor.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "accounting/events/events.hpp"

using dpb::AccountantDescriptor;
using dpb::AccountantOptions;
using dpb::accountants;
using dpb::AccountantSetting;
using dpb::SettingForm;

namespace {

/// A value `setting` takes other than its default: the first choice that is
/// not the default, or a number inside its domain.
dpb::SettingValue descriptor_sample_value(const AccountantSetting& setting) {
  dpb::SettingValue v;
  if (setting.form == SettingForm::choice) {
    while (v.choice + 1 < setting.choices.size() &&
           setting.choices[v.choice] == setting.default_text)
      ++v.choice;
    return v;
  }
  const dpb::SettingDomain& d = setting.domain;
  v.numbers = {std::isfinite(d.hi) ? (d.lo + d.hi) / 2 : d.lo + 1};
  return v;
}

/// The key of `flag` in an answer's inputs: "--pld-interval" -> "pld_interval".
std::string descriptor_input_key(std::string_view flag) {
  std::string key(flag.substr(2));
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

bool shows(const AccountantDescriptor& d, const AccountantOptions& o, const std::string& key) {
  const auto shown = d.shown(o);
  return std::any_of(shown.begin(), shown.end(), [&](const auto& s) { return s.key == key; });
}

}  // namespace

TEST_CASE("every accountant has a name, a summary, a factory of itself and a report sentence") {
  REQUIRE_FALSE(accountants().empty());
  std::set<std::string> names;
  std::set<int> places;
  for (const AccountantDescriptor& d : accountants()) {
    INFO("accountant '", d.name, "'");
    CHECK_FALSE(d.name.empty());
    // --accountant takes `all` and comma lists beside the names.
    CHECK(d.name != "all");
    CHECK(d.name.find(',') == std::string::npos);
    CHECK(names.insert(d.name).second);
    CHECK_FALSE(d.summary.empty());
    CHECK(d.summary.find('\n') == std::string::npos);
    CHECK_FALSE(d.report_method.empty());
    CHECK(d.report_method.find('\n') == std::string_view::npos);
    CHECK(d.report_order > 0);
    CHECK(places.insert(d.report_order).second);
    REQUIRE((d.make != nullptr));
    REQUIRE((d.shown != nullptr));
    const auto accountant = d.make(AccountantOptions{});
    REQUIRE(accountant != nullptr);
    CHECK(accountant->name() == d.name);
    CHECK(dpb::make_accountant(d.name, AccountantOptions{})->name() == d.name);
    CHECK(dpb::find_accountant(d.name) == &d);
  }
  CHECK(dpb::find_accountant("all") == nullptr);
}

TEST_CASE("one accountant is asked by default, and report's defaults give a bound for DP-SGD") {
  int asked = 0;
  for (const AccountantDescriptor& d : accountants()) asked += d.asked_by_default ? 1 : 0;
  CHECK(asked == 1);
  CHECK(dpb::default_accountant().asked_by_default);
  CHECK(dpb::default_accountant().dp_sgd_figure == dpb::DpSgdFigure::bound);
  const auto defaults = dpb::report_default_accountants();
  REQUIRE_FALSE(defaults.empty());
  CHECK(std::any_of(defaults.begin(), defaults.end(), [](std::string_view n) {
    return dpb::find_accountant(n)->dp_sgd_figure == dpb::DpSgdFigure::bound;
  }));
  // Report order: every accountant once, each place after the one before.
  const auto ordered = dpb::accountants_in_report_order();
  CHECK(ordered.size() == accountants().size());
  for (std::size_t i = 1; i < ordered.size(); ++i)
    CHECK(ordered[i - 1]->report_order < ordered[i]->report_order);
}

TEST_CASE("an accountant's DP-SGD figure is the claim its accountant makes") {
  const dpb::EventPtr run = dpb::make_dp_sgd(0.01, 1.0, 100);
  for (const AccountantDescriptor& d : accountants()) {
    INFO("accountant '", d.name, "'");
    const auto accountant = d.make(AccountantOptions{});
    if (accountant->unsupported_reason(*run)) {
      // One that cannot account DP-SGD claims nothing of it.
      CHECK(d.dp_sgd_figure == dpb::DpSgdFigure::bound);
      CHECK_FALSE(d.report_default);
      continue;
    }
    accountant->compose(*run);
    const dpb::BoundKind claim = accountant->epsilon(1e-5).bound;
    CHECK(claim == (d.dp_sgd_figure == dpb::DpSgdFigure::bound ? dpb::BoundKind::upper
                                                               : dpb::BoundKind::approximate));
  }
}

TEST_CASE("a sigma search starts from another registered accountant, one that bounds DP-SGD") {
  for (const AccountantDescriptor& d : accountants()) {
    if (d.sigma_hint_from.empty()) continue;
    INFO("accountant '", d.name, "' from '", d.sigma_hint_from, "'");
    const AccountantDescriptor* from = dpb::find_accountant(d.sigma_hint_from);
    REQUIRE(from != nullptr);
    CHECK(from != &d);
    CHECK(from->sigma_hint_from.empty());  // no chain of hints
    CHECK(from->dp_sgd_figure == dpb::DpSgdFigure::bound);
  }
}

TEST_CASE("every setting has a flag, help, a default its help states, and what it takes") {
  std::set<std::string> flags;
  for (const AccountantDescriptor& d : accountants())
    for (const AccountantSetting& s : d.settings) {
      INFO("accountant '", d.name, "', setting '", s.flag, "'");
      CHECK(s.flag.size() > 2);
      CHECK(s.flag.substr(0, 2) == "--");
      CHECK(s.flag != "--accountant");
      CHECK(flags.insert(std::string(s.flag)).second);  // one accountant reads each flag
      CHECK_FALSE(s.help.empty());
      CHECK_FALSE(s.default_text.empty());
      CHECK(s.help.find(s.default_text) != std::string_view::npos);
      CHECK(s.help.find("default") != std::string_view::npos);
      CHECK((s.set != nullptr));
      if (s.form == SettingForm::choice) {
        REQUIRE_FALSE(s.choices.empty());
        CHECK(std::find(s.choices.begin(), s.choices.end(), s.default_text) != s.choices.end());
        for (std::string_view c : s.choices) CHECK_FALSE(c.empty());
      } else {
        REQUIRE(s.domain.description != nullptr);
        CHECK(std::string_view(s.domain.description).size() > 0);
        CHECK(s.domain.lo < s.domain.hi);
      }
    }
}

TEST_CASE("what an accountant's inputs show is its settings, each under its flag's name") {
  for (const AccountantDescriptor& d : accountants()) {
    INFO("accountant '", d.name, "'");
    AccountantOptions options;
    std::set<std::string> keys;
    for (const AccountantSetting& s : d.settings) {
      s.set(options, descriptor_sample_value(s));
      keys.insert(descriptor_input_key(s.flag));
    }
    std::set<std::string> shown;
    for (const auto& s : d.shown(options)) CHECK(shown.insert(s.key).second);
    CHECK(shown == keys);
  }
}

TEST_CASE("a setting sets its own accountant's settings, which that accountant's inputs show") {
  for (const AccountantDescriptor& d : accountants())
    for (const AccountantSetting& s : d.settings) {
      INFO("accountant '", d.name, "', setting '", s.flag, "'");
      REQUIRE((s.set != nullptr));
      AccountantOptions options;
      s.set(options, descriptor_sample_value(s));
      CHECK(shows(d, options, descriptor_input_key(s.flag)));
      CHECK(d.make(options)->name() == d.name);
      // No other accountant's inputs change: the setting is its accountant's own.
      for (const AccountantDescriptor& other : accountants())
        if (&other != &d) CHECK(other.shown(options) == other.shown(AccountantOptions{}));
    }
}
