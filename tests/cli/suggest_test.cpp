// "Did you mean": edit distance and the closest name (cli/suggest.hpp).
#include "cli/suggest.hpp"

#include <doctest/doctest.h>

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
