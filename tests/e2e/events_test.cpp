// `dpbudget events`: every event kind with its fields, and each accountant's
// support per neighbouring relation; the kinds and support tables of
// docs/spec_files.md are its output (DPBUDGET_UPDATE_DOCS=1 rewrites them,
// docs/spec_files.md#regenerating); a refusal it lists is the refusal
// `epsilon --spec` gives (every one of them in-process:
// tests/cli/event_refusals_test.cpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "run.hpp"
#include "run_json.hpp"

using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::slurp;
using Json = nlohmann::json;

namespace {

/// `dpbudget events --format json`'s results, in the kinds' order.
Json kinds() { return json_of(run_dpbudget({"events", "--format", "json"}))["results"]; }

/// A Markdown table cell: '|' escaped.
std::string cell(const std::string& text) {
  std::string s;
  for (char c : text) s += c == '|' ? std::string("\\|") : std::string(1, c);
  return s;
}

/// The kinds table of docs/spec_files.md, from the events JSON.
std::string kinds_table(const Json& results) {
  std::string s = "| kind | dp_accounting class | fields | meaning |\n|---|---|---|---|\n";
  for (const auto& k : results) {
    std::string fields;
    for (const auto& f : k["fields"]) {
      std::string one = "`";
      one += f["name"].get<std::string>();
      one += '`';
      if (f.contains("alias")) one.append(" (or `").append(f["alias"].get<std::string>()) += "`)";
      one.append(": ").append(f["meaning"].get<std::string>());
      if (f["optional"].get<bool>()) one += ", optional";
      fields += (fields.empty() ? "" : "; ") + one;
    }
    // A kind of dpbudget's own has no dp_accounting class ("").
    const auto cls = k["class_name"].get<std::string>();
    s += "| `" + k["kind"].get<std::string>() + "` | " +
         (cls.empty() ? std::string("none (dpbudget's own)") : "`" + cls + "`") + " | " +
         cell(fields.empty() ? "none" : fields) + " | " + cell(k["meaning"].get<std::string>()) +
         " |\n";
  }
  return s;
}

/// The support table of docs/spec_files.md: the text output as a console block.
std::string support_block() {
  const auto r = run_dpbudget({"events"});
  REQUIRE(r.status == 0);
  return "```console\n$ dpbudget events\n" + r.out + "```\n";
}

/// Replaces (when updating) or checks the generated part between
/// "<!-- BEGIN <name>..." and "<!-- END <name> -->".
void check_generated(std::string& page, const std::string& name, const std::string& want,
                     bool update) {
  const auto begin = page.find("<!-- BEGIN " + name);
  REQUIRE_MESSAGE(begin != std::string::npos, "docs/spec_files.md lacks <!-- BEGIN " << name);
  const auto from = page.find('\n', begin) + 1;
  const auto to = page.find("<!-- END " + name + " -->", from);
  REQUIRE(to != std::string::npos);
  if (update) {
    page.replace(from, to - from, want);
    return;
  }
  CHECK_MESSAGE(page.substr(from, to - from) == want,
                "docs/spec_files.md's '"
                    << name << "' is stale: regenerate (docs/spec_files.md#regenerating)");
}

}  // namespace

TEST_CASE("docs/spec_files.md: the kinds and support tables are `dpbudget events` output") {
  const bool update = std::getenv("DPBUDGET_UPDATE_DOCS") != nullptr;
  std::string page = slurp(DPBUDGET_EVENTS_DOC);
  check_generated(page, "dpbudget events kinds", kinds_table(kinds()), update);
  check_generated(page, "dpbudget events support", support_block(), update);
  if (update) std::ofstream(DPBUDGET_EVENTS_DOC) << page;
}

TEST_CASE("events: every kind once, with fields, text cells are the JSON answers") {
  const Json results = kinds();
  std::set<std::string> names;
  const std::set<std::string> documented = {"kind",   "class_name", "meaning", "wrapper",
                                            "fields", "example",    "support", "inside"};
  for (const auto& k : results) {
    names.insert(k["kind"].get<std::string>());
    std::set<std::string> keys;
    for (const auto& item : k.items()) keys.insert(item.key());
    CHECK(keys == documented);  // docs/spec_files.md#spec-files lists them
  }
  CHECK(names.size() == results.size());
  // dp_accounting 0.6's 20 kinds as events.hpp has them, the two loaders
  // of issue 15 (shuffled, random_allocation) and the two matrix-mechanism
  // kinds of issue 28, which have no dp_accounting class.
  CHECK(results.size() == 24);
  for (const char* kind : {"gaussian",
                           "laplace",
                           "poisson_sampled",
                           "sampled_without_replacement",
                           "self_composed",
                           "composed",
                           "no_op",
                           "non_private",
                           "epsilon_delta",
                           "discrete_laplace",
                           "discrete_gaussian",
                           "randomized_response",
                           "zcdp",
                           "exponential_mechanism",
                           "permute_and_flip",
                           "mixture_of_gaussians",
                           "sampled_with_replacement",
                           "single_epoch_tree_aggregation",
                           "repeat_and_select",
                           "truncated_subsampled_gaussian",
                           "shuffled",
                           "random_allocation",
                           "matrix_mechanism",
                           "banded_matrix_factorization"})
    CHECK_MESSAGE(names.count(kind), kind);
  // Every class named is one of dp_accounting 0.6.0's (python/dp_accounting/
  // dp_accounting/dp_event.py of google/differential-privacy at that release);
  // the kinds it has no class for (shuffled and random_allocation included:
  // RandomAllocationDpEvent is only in its pull request #414) name none.
  const std::set<std::string> dp_accounting_0_6{"NoOpDpEvent",
                                                "NonPrivateDpEvent",
                                                "RandomizedResponseDpEvent",
                                                "EpsilonDeltaDpEvent",
                                                "GaussianDpEvent",
                                                "LaplaceDpEvent",
                                                "DiscreteLaplaceDpEvent",
                                                "DiscreteGaussianDpEvent",
                                                "SelfComposedDpEvent",
                                                "ComposedDpEvent",
                                                "PoissonSampledDpEvent",
                                                "SampledWithReplacementDpEvent",
                                                "SampledWithoutReplacementDpEvent",
                                                "SingleEpochTreeAggregationDpEvent",
                                                "RepeatAndSelectDpEvent",
                                                "MixtureOfGaussiansDpEvent",
                                                "ZCDpEvent",
                                                "ExponentialMechanismDpEvent",
                                                "PermuteAndFlipDpEvent",
                                                "TruncatedSubsampledGaussianDpEvent"};
  for (const auto& k : results) {
    const auto kind = k["kind"].get<std::string>();
    const bool own = kind == "matrix_mechanism" || kind == "banded_matrix_factorization" ||
                     kind == "shuffled" || kind == "random_allocation";
    const auto class_name = k["class_name"].get<std::string>();
    CHECK_MESSAGE(class_name.empty() == own, kind);
    if (!own) CHECK_MESSAGE(dp_accounting_0_6.count(class_name) == 1, kind, ": ", class_name);
  }

  // The text table: a row per kind, then under each mechanism one per sampled
  // wrapper; each cell lists the relations whose JSON answer is "supported".
  const auto text = run_dpbudget({"events"});
  REQUIRE(text.status == 0);
  CHECK(text.err.empty());
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text.out);
  std::string header;
  std::getline(in, header);
  CHECK(header.rfind("kind ", 0) == 0);
  for (std::string line; std::getline(in, line) && line.rfind("def: ", 0) != 0;) {
    // Columns are separated by two or more spaces; a sub-row starts with "  in ".
    std::vector<std::string> cols;
    std::size_t at = line.rfind("  in ", 0) == 0 ? 2 : 0;
    while (at < line.size()) {
      auto end = line.find("  ", at);
      cols.push_back(line.substr(at, end == std::string::npos ? end : end - at));
      if (end == std::string::npos) break;
      at = line.find_first_not_of(' ', end);
    }
    rows.push_back(cols);
  }
  auto cell_of = [](const Json& per_relation) {
    std::string s;
    for (const auto& [key, abbrev] :
         std::vector<std::pair<std::string, std::string>>{{"default", "def"},
                                                          {"add_remove", "ar"},
                                                          {"replace_one", "ro"},
                                                          {"replace_special", "rs"}})
      if (per_relation[key]["supported"].get<bool>()) s += (s.empty() ? "" : " ") + abbrev;
    return s.empty() ? std::string("-") : s;
  };
  std::size_t row = 0;
  const std::vector<std::string> accountants = {"rdp", "gdp", "composition", "pld"};
  for (const auto& k : results) {
    REQUIRE(row < rows.size());
    CHECK(rows[row][0] == k["kind"].get<std::string>());
    for (std::size_t a = 0; a < accountants.size(); ++a)
      CHECK(rows[row][a + 1] == cell_of(k["support"][accountants[a]]));
    ++row;
    CHECK(k["wrapper"].get<bool>() == k["inside"].empty());
    for (const char* wrapper : {"poisson_sampled", "sampled_without_replacement"}) {
      if (k["wrapper"].get<bool>()) continue;
      REQUIRE(row < rows.size());
      CHECK(rows[row][0] == std::string("in ") + wrapper);
      for (std::size_t a = 0; a < accountants.size(); ++a)
        CHECK(rows[row][a + 1] == cell_of(k["inside"][wrapper][accountants[a]]));
      ++row;
    }
    // Every refusal says why, starting with the accountant's name.
    for (const auto& acc : accountants)
      for (const auto& [relation, answer] : k["support"][acc].items())
        if (!answer["supported"].get<bool>())
          CHECK(answer["reason"].get<std::string>().rfind(acc + ": ", 0) == 0);
  }
  CHECK(row == rows.size());
}

// One refusal through the binary; every refusal listed, in-process:
// tests/cli/event_refusals_test.cpp.
TEST_CASE("events: a refusal listed is the one the binary's `epsilon --spec` gives") {
  int checked = 0;
  for (const auto& k : kinds()) {
    const Json& answer = k["support"]["gdp"]["default"];
    if (checked > 0 || answer["supported"].get<bool>()) continue;
    const auto r = run_dpbudget(
        {"epsilon", "--spec", "-", "--delta", "1e-5", "--accountant", "gdp"}, k["example"].dump());
    CAPTURE(k["example"].dump());
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "dpbudget: error: " + answer["reason"].get<std::string>() + "\n");
    ++checked;
  }
  CHECK(checked == 1);
}

TEST_CASE("events: every example event survives --print-spec unchanged") {
  for (const auto& k : kinds()) {
    const Json& example = k["example"];
    CAPTURE(example.dump());
    const auto r = run_dpbudget({"epsilon", "--spec", "-", "--print-spec"}, example.dump());
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(Json::parse(r.out) == example);
  }
}

TEST_CASE("events: bad flags are one-line usage errors") {
  const auto r = run_dpbudget({"events", "--format", "yaml"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("--format") != std::string::npos);
}

TEST_CASE(
    "docs/spec_files.md: every spec example reads (--print-spec), and the Python one "
    "is the snake-case ledger it builds") {
  const std::string page = slurp(DPBUDGET_EVENTS_DOC);
  const auto start = page.find("# Spec files");
  const auto end = page.size();
  REQUIRE(start != std::string::npos);
  std::vector<Json> specs;
  for (auto at = page.find("```json\n", start); at < end; at = page.find("```json\n", at + 1)) {
    const auto close = page.find("```\n", at + 8);
    const std::string text = page.substr(at + 8, close - at - 8);
    const auto r = run_dpbudget({"epsilon", "--spec", "-", "--print-spec"}, text);
    CAPTURE(text);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    specs.push_back(Json::parse(r.out));
  }
  // run.json, tuning, DP-FTRL, matrix mechanisms, a mixed ledger, from Python
  REQUIRE(specs.size() == 6);
  CHECK(specs[1].contains("repeat_and_select"));
  CHECK(specs[1]["repeat_and_select"]["shape"] == "inf");
  CHECK(specs[2].contains("single_epoch_tree_aggregation"));
  CHECK(specs[3]["composed"][1].contains("banded_matrix_factorization"));
  CHECK(specs[3]["composed"][2].contains("matrix_mechanism"));
  CHECK(specs[4]["composed"].size() == 5);
  // The Python snippet's ledger (SelfComposedDpEvent(PoissonSampledDpEvent(0.01,
  // GaussianDpEvent(1.1)), 1000) and RepeatAndSelectDpEvent(GaussianDpEvent(2.0),
  // mean=10, shape=inf)), written in snake case by hand.
  CHECK(specs[5] == Json::parse(R"({"composed": [
      {"self_composed": {"count": 1000, "event": {"poisson_sampled": {"sampling_probability": 0.01,
          "event": {"gaussian": {"noise_multiplier": 1.1}}}}}},
      {"repeat_and_select": {"event": {"gaussian": {"noise_multiplier": 2.0}}, "mean": 10.0,
          "shape": "inf"}}]})"));
}
