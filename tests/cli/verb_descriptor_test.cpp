// The verbs' descriptors (cli/verbs.hpp): each verb is named once, says what
// it answers, and shows examples that are its own command lines and that
// its parser accepts; `dpbudget --help` lists exactly the descriptors, in
// their order.
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/errors.hpp"
#include "cli/verbs.hpp"
#include "cli/verbs/completions.hpp"
#include "in_process.hpp"

namespace verb_descriptor_test {

using dpb::cli::kVerbs;
using dpb::cli::VerbDescriptor;

/// An example's words after "dpbudget" (the examples quote nothing).
std::vector<std::string> words_after_program(std::string_view example) {
  std::istringstream in{std::string(example)};
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (!words.empty()) words.erase(words.begin());
  return words;
}

TEST_CASE("every verb has a unique name, a summary and examples of itself") {
  std::set<std::string_view> names;
  for (const VerbDescriptor* v : kVerbs) {
    CAPTURE(v->name);
    CHECK(names.insert(v->name).second);
    CHECK(!v->summary.empty());
    CHECK(v->summary.find("example:") == std::string_view::npos);
    CHECK(static_cast<bool>(v->declare));
    REQUIRE(!v->examples[0].empty());
    for (std::string_view example : v->examples) {
      if (example.empty()) continue;
      const std::string own = "dpbudget " + std::string(v->name) + " ";
      CHECK_MESSAGE(example.substr(0, own.size()) == own, example);
    }
  }
}

TEST_CASE("every example's flags are accepted (check mode: parsed and validated)") {
  for (const VerbDescriptor* v : kVerbs)
    for (std::string_view example : v->examples) {
      if (example.empty()) continue;
      const auto r =
          dpb::test::run_in_process(words_after_program(example), dpb::cli::RunMode::check);
      CHECK_MESSAGE(r.status == dpb::cli::kOk, example << ": " << r.err);
      // Notes (a sampling scheme assumed) may go to stderr; no error or warning.
      CHECK_MESSAGE(r.err.find("error") == std::string::npos, example << ": " << r.err);
      CHECK_MESSAGE(r.err.find("warning") == std::string::npos, example << ": " << r.err);
    }
}

TEST_CASE("dpbudget --help lists the descriptors' verbs in their order, each with its summary") {
  const auto r = dpb::test::run_in_process({"--help"});
  REQUIRE(r.status == dpb::cli::kOk);
  std::size_t at = 0;
  for (const VerbDescriptor* v : kVerbs) {
    const std::string line = "\n  " + std::string(v->name) + " ";
    const auto found = r.out.find(line, at);
    REQUIRE_MESSAGE(found != std::string::npos, v->name << " missing or out of order");
    const std::string first_line(v->summary.substr(0, v->summary.find('\n')));
    CHECK_MESSAGE(r.out.find(first_line, found) != std::string::npos, v->name);
    at = found + line.size();
  }
}

}  // namespace verb_descriptor_test

namespace help_choices_test {

/// The choice words of a help text's "a | b (note) | c" list: the word before
/// the first " | " (after any "prefix: "), and the first word of each part
/// after one. Empty when the help lists none.
std::set<std::string> listed_choices(const std::string& help) {
  std::set<std::string> words;
  if (help.find(" | ") == std::string::npos) return words;
  std::vector<std::string> parts;
  for (std::size_t from = 0;;) {
    const auto bar = help.find(" | ", from);
    parts.push_back(help.substr(from, bar == std::string::npos ? bar : bar - from));
    if (bar == std::string::npos) break;
    from = bar + 3;
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string part = parts[i];
    if (i == 0) {
      // The first part's choice follows the help's own words, if any, up to
      // their last ": " ("output: text (default)").
      const auto colon = part.rfind(": ");
      if (colon != std::string::npos) part = part.substr(colon + 2);
    }
    words.insert(part.substr(0, part.find_first_of(" (;,")));
  }
  return words;
}

TEST_CASE("a help text's list of choices names exactly the flag's choices") {
  CLI::App root;
  std::vector<dpb::cli::Verb> verbs;
  for (const dpb::cli::VerbDescriptor* v : dpb::cli::kVerbs)
    verbs.push_back(v->declare(*root.add_subcommand(std::string(v->name), v->description())));
  std::size_t checked = 0;
  for (const auto& verb : dpb::cli::describe(root))
    for (const auto& flag : verb.flags) {
      if (flag.choices.empty()) continue;
      const auto listed = listed_choices(flag.help);
      if (listed.empty()) continue;
      CAPTURE(verb.name);
      CAPTURE(flag.help);
      CHECK(listed == std::set<std::string>(flag.choices.begin(), flag.choices.end()));
      ++checked;
    }
  CHECK(checked > 20);  // --format, --composition, --strategy, ... on most verbs
}

}  // namespace help_choices_test
