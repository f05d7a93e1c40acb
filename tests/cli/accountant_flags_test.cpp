// The accountant settings (--orders, --conversion, --composition, --pld-*):
// each is read by one accountant, and given where none reads it, refused
// naming the flag and that accountant (issue 26, item 6), by every verb.
#include "cli/flags/accountant_flags.hpp"

#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/errors.hpp"
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
  const std::string flag = s.flag;
  if (flag == "--orders") f.orders = {s.value};
  if (flag == "--conversion") f.conversion = s.value;
  if (flag == "--composition") f.composition = s.value;
  if (flag == "--pld-interval") f.pld_interval = s.value;
  if (flag == "--pld-tolerance") f.pld_tolerance = s.value;
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
