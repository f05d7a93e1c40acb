// "Did you mean": edit distance and the closest name (cli/flags/suggest.hpp), and
// the usage error run_cli (what the binary's main() runs) gives for every flag
// of every verb misspelt. The binary's own exit status and streams for a
// misspelt flag or verb: tests/e2e/unknown_flag_test.cpp.
#include "cli/flags/suggest.hpp"

#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "in_process.hpp"
#include "support/refusal.hpp"

using dpb::cli::closest_name;
using dpb::cli::edit_distance;

TEST_CASE("edit_distance: insertions, deletions, substitutions and adjacent swaps cost 1") {
  CHECK(edit_distance("sigma", "sigma") == 0);
  CHECK(edit_distance("sigam", "sigma") == 1);  // swap
  CHECK(edit_distance("sigm", "sigma") == 1);   // insertion
  CHECK(edit_distance("sigmaa", "sigma") == 1);
  CHECK(edit_distance("sogma", "sigma") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("ca", "abc") == 3);  // optimal string alignment, not full Damerau
}

TEST_CASE("closest_name: within two edits (one for short names), else a prefix, else none") {
  const std::vector<std::string> flags = {"-q",      "--sampling-rate", "--sigma", "--steps",
                                          "--delta", "--accountant",    "--format"};
  CHECK(closest_name("--sigam", flags) == "--sigma");
  CHECK(closest_name("--stpes", flags) == "--steps");
  CHECK(closest_name("--sgiam", flags) == "--sigma");
  CHECK(closest_name("--acc", flags) == "--accountant");
  CHECK(closest_name("--bogus", flags) == std::nullopt);
  CHECK(closest_name("-x", flags) == std::nullopt);      // one letter: every pair is one edit apart
  CHECK(closest_name("--frmt", flags) == std::nullopt);  // 4 letters: one edit only
  CHECK(closest_name("--fomat", flags) == "--format");
}

// In-process (each command line was a process of the binary: 375 of them, 37
// CPU-s under the sanitizers; issue 25): the verbs and flags come from
// `completions list`, the parser's own table.
TEST_CASE("every flag of every verb, misspelt by a swap, is suggested back") {
  const auto listed = dpb::test::run_in_process({"completions", "list"});
  REQUIRE(listed.status == 0);
  std::istringstream lines(listed.out);
  std::string line;
  std::set<std::string> verbs;
  int checked = 0;
  while (std::getline(lines, line)) {
    const auto tab = line.find('\t');
    const std::string verb = line.substr(0, tab);
    const std::string flag = line.substr(tab + 1, line.find('\t', tab + 1) - tab - 1);
    if (verb.empty() || flag.rfind("--", 0) != 0 || flag.size() < 7) continue;
    verbs.insert(verb);
    // Swap two neighbouring letters in the middle: "--sigma" -> "--sgima".
    std::string typo = flag;
    const std::size_t at = 2 + (flag.size() - 2) / 2 - 1;
    if (typo[at] == typo[at + 1] || typo[at] == '-' || typo[at + 1] == '-') continue;
    std::swap(typo[at], typo[at + 1]);
    INFO(verb, " ", flag, " typed as ", typo);
    CHECK(dpb::test::usage_error_text(dpb::test::run_in_process({verb, typo})) ==
          "unknown flag " + typo + " for '" + verb + "'; did you mean " + flag + "?");
    ++checked;
  }
  CHECK(verbs.size() >= 13);
  CHECK(checked > 100);
}
