// The JSON Lines fuzzer's dictionary (tests/fuzz/jsonl.dict) against the
// tables it lists, so that a key added to the run-parameter table (or to a
// line's other keys) cannot be left out of the fuzzing.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "cli/flags/run_parameters.hpp"
#include "cli/input/config_input.hpp"
#include "cli/run/spec_verb.hpp"

namespace {

/// The quoted words of the dictionary's entries whose name starts with
/// `prefix`: `key_steps="\"steps\""` gives steps.
std::vector<std::string> dict_words(const std::string& prefix) {
  std::ifstream in(DPBUDGET_FUZZ_DIR "/jsonl.dict");
  REQUIRE(in);
  std::vector<std::string> out;
  std::string line;
  const std::string open = "=\"\\\"", close = "\\\"\"";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const auto at = line.find(open);
    REQUIRE(at != std::string::npos);
    REQUIRE(line.size() >= at + open.size() + close.size());
    REQUIRE(line.compare(line.size() - close.size(), close.size(), close) == 0);
    out.push_back(line.substr(at + open.size(), line.size() - at - open.size() - close.size()));
  }
  return out;
}

}  // namespace

TEST_CASE("the JSON Lines fuzz dictionary holds exactly the keys a line may hold") {
  const auto keys = dpb::cli::config_keys();
  const auto listed = dict_words("key_");
  CHECK(std::set<std::string>(listed.begin(), listed.end()) ==
        std::set<std::string>(keys.begin(), keys.end()));
  CHECK(listed.size() == keys.size());  // each once
  // Every run parameter's key among them (config_keys reads the table).
  for (const auto& p : dpb::cli::kRunParameters)
    CHECK(std::find(listed.begin(), listed.end(), std::string(p.key)) != listed.end());
}

TEST_CASE("the JSON Lines fuzz dictionary holds every word a choice key takes") {
  const auto words = dict_words("word_");
  std::vector<std::string> expected;
  for (const auto& p : dpb::cli::kRunParameters)
    for (const auto& w : dpb::cli::choice_names(p.id)) expected.push_back(w);
  for (const auto& c : dpb::cli::kSolveKeyChoices) expected.emplace_back(c.name);
  for (const auto& c : dpb::cli::kNeighbouringChoices) expected.emplace_back(c.name);
  CHECK(expected.size() >=
        12);  // sampling 4, last_batch 2, solve 5, neighbouring 3 (less overlaps)
  for (const auto& w : expected) {
    INFO(w);
    CHECK(std::find(words.begin(), words.end(), w) != words.end());
  }
}
