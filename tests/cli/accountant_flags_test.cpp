// The accountant settings (--orders, --conversion, --composition, --pld-*):
// each is read by one accountant, and given where none reads it, refused
// naming the flag and that accountant (issue 26, item 6), by every verb.
#include "cli/flags/accountant_flags.hpp"

#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "accounting/accountant_descriptor.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/verbs.hpp"
#include "in_process.hpp"

using dpb::cli::AccountantFlags;
using dpb::cli::SettingsRead;

namespace {

/// Each setting, a value it accepts and the accountant that reads it (written
/// out here: what the flags' help and the man page say).
struct Setting {
  const char* flag;
  const char* value;
  const char* reader;
};
const Setting kSettings[] = {
    {"--orders", "2,3", "rdp"},
    {"--conversion", "classic", "rdp"},
    {"--composition", "basic", "composition"},
    {"--pld-interval", "0.01", "pld"},
    {"--pld-tolerance", "0.01", "pld"},
};

AccountantFlags with(const Setting& s, std::vector<std::string> accountants) {
  AccountantFlags f;
  f.accountant = std::move(accountants);
  f.settings[s.flag] = {s.value};
  return f;
}

std::string refusal(const AccountantFlags& f, const SettingsRead& read = {}) {
  try {
    dpb::cli::resolve(f, read);
  } catch (const dpb::cli::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every accountant flag but --accountant is in the settings table, and only those") {
  CLI::App app;
  AccountantFlags f;
  dpb::cli::add_accountant_flags(app, f);
  std::vector<std::string> declared;
  for (const CLI::Option* opt : app.get_options())
    for (const auto& l : opt->get_lnames())
      if (l != "accountant" && l != "help") declared.push_back("--" + l);
  auto table = dpb::cli::accountant_setting_flags();
  std::sort(declared.begin(), declared.end());
  std::sort(table.begin(), table.end());
  CHECK(declared == table);
  std::vector<std::string> here;
  for (const auto& s : kSettings) here.emplace_back(s.flag);
  std::sort(here.begin(), here.end());
  CHECK(here == table);
}

TEST_CASE("a setting given beside accountants none of which reads it is refused, naming both") {
  for (const Setting& s : kSettings) {
    for (const char* accountant : {"rdp", "gdp", "composition", "pld"}) {
      INFO(s.flag, " with ", accountant);
      const std::string why = refusal(with(s, {accountant}));
      if (std::string(accountant) == s.reader) {
        CHECK(why.empty());
      } else {
        CHECK(why == std::string(s.flag) + ": only the " + s.reader +
                         " accountant reads it, not among those chosen (" + accountant + "); add " +
                         s.reader + " to --accountant, or leave " + s.flag + " out");
      }
    }
    INFO(s.flag);
    // Among several, or all, one reader is enough.
    CHECK(refusal(with(s, {std::string("gdp,") + s.reader})).empty());
    CHECK(refusal(with(s, {"all"})).empty());
    // No --accountant: rdp, said to be the default.
    const std::string by_default = refusal(with(s, {}));
    CHECK(by_default.empty() == (std::string(s.reader) == "rdp"));
    if (!by_default.empty()) CHECK(by_default.find("(rdp, the default)") != std::string::npos);
  }
}

TEST_CASE("settings read only for epsilon or delta, and by a shuffled run's lower bound") {
  // rdp's attack bounds come from its Renyi curve: --conversion is not read,
  // --orders is.
  const SettingsRead attack{false, false};
  CHECK(refusal(with(kSettings[1], {"rdp"}), attack) ==
        "--conversion: rdp reads it only to state epsilon or delta; attack bounds come from "
        "the Renyi curve itself (leave --conversion out)");
  CHECK(refusal(with(kSettings[0], {"rdp"}), attack).empty());
  // A shuffled run's lower bound is computed with pld, whatever is chosen.
  const SettingsRead shuffled{true, true};
  CHECK(refusal(with(kSettings[3], {"rdp"}), shuffled).empty());
  CHECK(refusal(with(kSettings[4], {"gdp"}), shuffled).empty());
  CHECK_FALSE(refusal(with(kSettings[2], {"rdp"}), shuffled).empty());
}

TEST_CASE("first_accountant_flag names the first accountant flag given") {
  CHECK_FALSE(dpb::cli::first_accountant_flag(AccountantFlags{}));
  CHECK(dpb::cli::first_accountant_flag(with(kSettings[2], {})) == "--composition");
  CHECK(dpb::cli::first_accountant_flag(with(kSettings[2], {"pld"})) == "--accountant");
}

// Through run_cli, in-process (each command line was a process of the binary:
// 50 of them, ~7 CPU-s under the sanitizers; issue 25); the binary's own:
// tests/e2e/scripts_ci_test.cpp.
TEST_CASE("an accountant setting no chosen accountant reads is refused, in every verb") {
  const std::vector<std::vector<std::string>> verbs = {
      {"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5"},
      {"delta", "-q", "0.01", "--sigma", "1", "--steps", "100", "--epsilon", "1"},
      {"sigma", "-q", "0.01", "--steps", "100", "--epsilon", "1", "--delta", "1e-5"},
      {"steps", "-q", "0.01", "--sigma", "1", "--epsilon", "1", "--delta", "1e-5"},
      {"sampling-rate", "--sigma", "1", "--steps", "100", "--epsilon", "1", "--delta", "1e-5"},
      {"sweep", "-q", "0.01", "--sigma", "1,2", "--steps", "100", "--delta", "1e-5"},
      {"plot", "-q", "0.01", "--sigma", "1", "--steps", "1:100", "--delta", "1e-5", "-o", "-"},
      {"report", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5"},
      {"risk", "-q", "0.01", "--sigma", "1", "--steps", "100"},
      {"audit", "--tp", "6", "--fn", "4", "--fp", "1", "--tn", "9", "--delta", "1e-5", "-q", "0.01",
       "--sigma", "1", "--steps", "100"},
  };
  // Each setting with accountants none of which reads it: one line naming
  // the flag, the accountant that reads it and those chosen.
  struct Case {
    std::string flag, value, reader, chosen;
  };
  const std::vector<Case> cases = {
      {"--conversion", "classic", "rdp", "pld"},
      {"--orders", "2,3", "rdp", "gdp,pld"},
      {"--pld-tolerance", "0.01", "pld", "rdp"},
      {"--pld-interval", "0.01", "pld", "composition"},
      {"--composition", "basic", "composition", "rdp,pld"},
  };
  for (const auto& verb : verbs)
    for (const auto& c : cases) {
      auto args = verb;
      args.insert(args.end(), {c.flag, c.value, "--accountant", c.chosen});
      const auto r = dpb::test::run_in_process(args);
      INFO(args[0], " ", c.flag, ": ", r.err);
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK(r.err.substr(r.err.find("dpbudget: error: ")) ==
            "dpbudget: error: " + c.flag + ": only the " + c.reader +
                " accountant reads it, not among those chosen (" + c.chosen + "); add " + c.reader +
                " to --accountant, or leave " + c.flag + " out\n");
    }
}

// What the command line reads of every registered accountant's descriptor
// (accounting/accountant_descriptor.hpp; its own checks:
// tests/accounting/accountant_descriptor_test.cpp): an accountant registered
// without a field a flag or a report needs fails here.
namespace {

/// A value of `setting` as typed, other than its default.
std::string flags_sample_text(const dpb::AccountantSetting& setting) {
  if (setting.form == dpb::SettingForm::choice) {
    for (std::string_view c : setting.choices)
      if (c != setting.default_text) return std::string(c);
    return setting.choices.empty() ? "" : std::string(setting.choices.front());
  }
  const dpb::SettingDomain& d = setting.domain;
  char text[32];
  std::snprintf(text, sizeof text, "%g", std::isfinite(d.hi) ? (d.lo + d.hi) / 2 : d.lo + 1);
  return text;
}

/// The accountant names and `all`, as --accountant takes them.
std::vector<std::string> registered_names() {
  std::vector<std::string> names;
  for (const auto& d : dpb::accountants()) names.push_back(d.name);
  return names;
}

}  // namespace

TEST_CASE("--accountant takes every registered name, all of them, and the default") {
  const auto names = registered_names();
  for (const auto& n : names) CHECK(dpb::cli::parse_accountants({n}) == std::vector{n});
  CHECK(dpb::cli::parse_accountants({"all"}) == names);
  CHECK(dpb::cli::parse_accountants({}) ==
        std::vector<std::string>{dpb::default_accountant().name});
  CLI::App app;
  AccountantFlags f;
  dpb::cli::add_accountant_flags(app, f);
  auto with_all = names;
  with_all.emplace_back("all");
  CHECK(dpb::cli::choices_of(*app.get_option("--accountant")) == with_all);
  CHECK(app.get_option("--accountant")
            ->get_description()
            .find("(default " + dpb::default_accountant().name + ")") != std::string::npos);
}

TEST_CASE("every verb with --accountant declares every setting's flag from its descriptor") {
  int verbs = 0;
  for (const dpb::cli::VerbDescriptor* v : dpb::cli::kVerbs) {
    CLI::App app;
    CLI::App* cmd = app.add_subcommand(std::string(v->name));
    [[maybe_unused]] const dpb::cli::Verb verb = v->declare(*cmd);  // keeps its flags alive
    if (!cmd->get_option_no_throw("--accountant")) continue;
    ++verbs;
    for (const auto& d : dpb::accountants())
      for (const auto& s : d.settings) {
        INFO("verb ", v->name, ", ", d.name, "'s ", s.flag);
        CLI::Option* opt = cmd->get_option_no_throw(std::string(s.flag));
        REQUIRE(opt != nullptr);
        CHECK(opt->get_description() == s.help);
        const std::vector<std::string> choices(s.choices.begin(), s.choices.end());
        CHECK(dpb::cli::choices_of(*opt) == choices);
        // A list takes the flag repeated; one value, once.
        CHECK((opt->get_expected_max() > 1) == (s.form == dpb::SettingForm::numbers));
      }
  }
  CHECK(verbs >= 10);  // epsilon, delta, sigma, steps, sampling-rate, plan, sweep, ...
}

TEST_CASE("each setting is read as its descriptor says: the accountant, the claims, the inputs") {
  for (const auto& d : dpb::accountants())
    for (const auto& s : d.settings) {
      INFO(d.name, "'s ", s.flag);
      AccountantFlags f;
      f.settings[std::string(s.flag)] = {flags_sample_text(s)};
      // Read beside its accountant; refused beside one that does not read it
      // (unless a shuffled run's lower bound reads it anyway).
      f.accountant = {d.name};
      CHECK(refusal(f).empty());
      for (const auto& other : dpb::accountants()) {
        if (other.name == d.name) continue;
        f.accountant = {other.name};
        CHECK(refusal(f).rfind(std::string(s.flag) + ": only the " + d.name, 0) == 0);
        CHECK(refusal(f, {true, true}).empty() == s.shuffled_lower_bound);
      }
      // Where only attack bounds are stated, as the descriptor says.
      f.accountant = {d.name};
      CHECK(refusal(f, {false, false}).empty() == !s.epsilon_delta_only);
      // Given on the command line, it is in the answer's inputs.
      const auto r = dpb::test::run_in_process(
          {"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "1e-5",
           "--accountant", d.name, std::string(s.flag), flags_sample_text(s), "--format", "json"});
      CHECK(r.status == 0);
      std::string key(s.flag.substr(2));
      std::replace(key.begin(), key.end(), '-', '_');
      CHECK(r.out.find("\"" + key + "\": ") != std::string::npos);
    }
}

TEST_CASE("report asks its default accountants and states every accountant's method") {
  const auto r = dpb::test::run_in_process(
      {"report", "-q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "1e-5"});
  REQUIRE(r.status == 0);
  // By default the report_default accountants, in report order; those whose
  // DP-SGD figure is an approximation left out of a DP-SGD run.
  std::string asked, left_out;
  for (const auto* d : dpb::accountants_in_report_order()) {
    if (!d->report_default) continue;
    std::string& list = d->dp_sgd_figure == dpb::DpSgdFigure::bound ? asked : left_out;
    list += (list.empty() ? "" : ", ") + d->name;
  }
  CHECK(r.out.find("| accountants | " + asked + " |\n") != std::string::npos);
  if (left_out.empty())
    CHECK(r.out.find("\nLeft out: ") == std::string::npos);
  else
    CHECK(r.out.find("\nLeft out: " + left_out + ", whose figure") != std::string::npos);
  // Every accountant's method, in report order.
  std::size_t at = 0;
  for (const auto* d : dpb::accountants_in_report_order()) {
    INFO(d->name);
    const auto found = r.out.find("- " + d->name + ": " + std::string(d->report_method) + "\n");
    REQUIRE(found != std::string::npos);
    CHECK(found >= at);
    at = found;
  }
}
