// dpbudget report: the Markdown statement through the binary (its sections
// and figures checked against the verbs that compute them), the δ ≥ 1/N
// warning, a spec file, and the refusals. The HTML page is checked by
// tests/shell/report_html_test.sh (xmllint, headless Chromium).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run.hpp"
#include "run_json.hpp"

using namespace dpb::test;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("report: the Markdown statement holds the parameters, the epsilons and the risk") {
  const auto r = run_dpbudget({"report", "--dataset-size", "60000", "--batch-size", "600",
                               "--sigma", "1.1", "--epochs", "10", "--delta", "1e-6",
                               "--accountant", "rdp,pld", "--clipping-norm", "2"});
  REQUIRE(r.status == 0);
  const std::string& md = r.out;
  CHECK(md.rfind("# Privacy statement\n", 0) == 0);
  for (const char* part :
       {"## Parameters", "| sampling rate q | 0.01 |", "| dataset size N | 60000 |",
        "| batch size B | 600 |", "| steps T | 1000 |", "| clipping norm C | 2 |",
        "| noise standard deviation sigma C | 2.2 |", "| unit of privacy | one record |",
        "add/remove", "## Privacy loss", "## Membership-inference risk",
        "| accountant | bound | FPR | TPR at most | precision at prior 0.5 |",
        "## How this was computed", "Ponomareva"})
    CHECK_MESSAGE(has(md, part), part);
  // The ε rows are what `epsilon` prints for the same run.
  const auto eps =
      json_of(run_dpbudget({"epsilon", "--dataset-size", "60000", "--batch-size", "600", "--sigma",
                            "1.1", "--epochs", "10", "--delta", "1e-6", "--accountant", "rdp,pld",
                            "--format", "json", "--precision", "6"}));
  const auto text =
      run_dpbudget({"epsilon", "--dataset-size", "60000", "--batch-size", "600", "--sigma", "1.1",
                    "--epochs", "10", "--delta", "1e-6", "--accountant", "rdp"});
  const std::string rdp_eps = [&] {
    // The compact text row's ε cell, e.g. "rdp  add_remove  upper  1e-06  1.23456  order 12".
    const auto at = text.out.find("\nrdp ");
    std::string line = text.out.substr(at + 1, text.out.find('\n', at + 1) - at - 1);
    std::vector<std::string> cells;
    std::string cell;
    for (char c : line + " ") {
      if (c == ' ') {
        if (!cell.empty()) cells.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    return cells.at(4);
  }();
  CHECK_MESSAGE(has(md, "| rdp | upper bound | 1e-06 | " + rdp_eps + " |"), rdp_eps);
  CHECK(eps["results"].size() == 2);
  // The headline names the smallest sound upper bound (pld here).
  CHECK(has(md, "at delta = 1e-06, a sound upper bound (pld accountant)"));
  // The risk rows are what `risk` prints (first rate, rdp).
  const auto risk =
      json_of(run_dpbudget({"risk", "--dataset-size", "60000", "--batch-size", "600", "--sigma",
                            "1.1", "--epochs", "10", "--accountant", "rdp", "--format", "json"}));
  CHECK(risk["results"][0]["fpr"] == 0.001);
  // No warning: δ = 1e-6 < 1/N.
  CHECK_FALSE(has(md, "Warning"));
  // CommonMark parses it without a word on stderr (cmark, when installed).
  if (run_shell("command -v cmark >/dev/null").status == 0) {
    const auto parsed =
        run_shell("printf '%s' " + shell_quote(md) + " | cmark 2>&1 1>/dev/null | cat");
    CHECK(parsed.status == 0);
    CHECK(parsed.out.empty());
    const auto html = run_shell("printf '%s' " + shell_quote(md) + " | cmark");
    CHECK(has(html.out, "<h2>Membership-inference risk</h2>"));
  } else {
    MESSAGE("cmark not installed: the CommonMark check is skipped");
  }
}

TEST_CASE("report: delta not below 1/N is a warning in the statement") {
  const auto r =
      run_dpbudget({"report", "--dataset-size", "1000", "--batch-size", "10", "--sigma", "1",
                    "--epochs", "1", "--delta", "1e-5,1e-3", "--accountant", "rdp"});
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "> **Warning:** delta = 0.001 is not below 1/N = 0.001"));
  CHECK_FALSE(has(r.out, "delta = 1e-05 is not below"));
}

TEST_CASE("report: a spec file's ledger, html to a file") {
  const auto r = run_dpbudget(
      {"report", "--spec", "-", "--delta", "1e-5", "--accountant", "pld"},
      R"({"self_composed": {"count": 10, "event": {"gaussian": {"noise_multiplier": 4}}}})");
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "composition in the spec file"));
  CHECK(has(r.out, "delta should be well below 1/N"));
  CHECK(has(r.out, "| pld | upper bound | 1e-05 | ["));
  const std::string path = "report_test_page.html";
  const auto h = run_dpbudget({"report", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta",
                               "1e-5", "--accountant", "rdp", "--format", "html", "-o", path});
  CHECK(h.status == 0);
  CHECK(h.out.empty());
  const std::string page = slurp(path);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(has(page, "<svg "));
  std::remove(path.c_str());
}

TEST_CASE("report --spec: the ledger's events with their parameters, and why an epsilon is inf") {
  // An (0.5, 1e-3)-DP event puts 1e-3 of its loss at +inf: no finite epsilon
  // exists at delta = 1e-5, whatever the accountant (its canonical pair,
  // Kairouz, Oh & Viswanath 2015); rdp says so, pld refuses the tree.
  const auto r = run_dpbudget(
      {"report", "--spec", "-", "--delta", "1e-5", "--neighbouring", "replace-special"},
      R"({"composed": [{"gaussian": {"noise_multiplier": 1.25}},
          {"epsilon_delta": {"epsilon": 0.5, "delta": 1e-3}},
          {"single_epoch_tree_aggregation": {"noise_multiplier": 3, "step_counts": [5, 7]}},
          {"matrix_mechanism": {"noise_multiplier": 0.123456789, "sensitivity": 2}}]})");
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "| # | event |"));
  CHECK(has(r.out, "| 1 | gaussian(noise_multiplier 1.25) |"));
  CHECK(has(r.out, "| 2 | epsilon_delta(epsilon 0.5, delta 0.001) |"));
  CHECK(
      has(r.out, "| 3 | single_epoch_tree_aggregation(noise_multiplier 3.0, step_counts [5 7]) |"));
  // Parameters exactly as given, never rounded to the table's digits.
  CHECK(has(r.out, "| 4 | matrix_mechanism(noise_multiplier 0.123456789, sensitivity 2.0) |"));
  CHECK(has(r.out, "| rdp | upper bound | 1e-05 | inf |"));
  CHECK(has(r.out, "rdp gives epsilon = inf at delta = 1e-05: "));
  CHECK(has(r.out, "epsilon_delta events' own delta"));
  CHECK(has(r.out, "Not analysed: pld: single_epoch_tree_aggregation"));
  // One event, not a list: one row. pld's grid limit for a tiny sigma: said.
  const auto one = run_dpbudget({"report", "--spec", "-", "--delta", "1e-5"},
                                R"({"gaussian": {"noise_multiplier": 0.01}})");
  REQUIRE(one.status == 0);
  CHECK(has(one.out, "| 1 | gaussian(noise_multiplier 0.01) |"));
  CHECK(has(one.out, "pld gives epsilon = inf at delta = 1e-05: the grid"));
}

TEST_CASE("report: bad flags are refused naming the flag") {
  const std::vector<std::string> run{"report", "-q", "0.01", "--sigma", "1", "--steps", "100"};
  auto with = [&](std::initializer_list<std::string> more) {
    std::vector<std::string> args = run;
    args.insert(args.end(), more);
    return run_dpbudget(args);
  };
  check_refused(with({}), {"--delta"});
  check_refused(with({"--delta", "1e-5", "--format", "pdf"}), {"--format"});
  check_refused(with({"--delta", "1e-5", "--fpr", "1"}), {"--fpr"});
  check_refused(with({"--delta", "1e-5", "--prior", "0"}), {"--prior"});
  check_refused(with({"--delta", "1e-5", "--clipping-norm", "0"}), {"--clipping-norm"});
  check_refused(with({"--delta", "2"}), {"--delta"});
  check_refused(run_dpbudget({"report", "--spec", "-", "--delta", "1e-5", "--clipping-norm", "1"},
                             R"({"gaussian": {"noise_multiplier": 1}})"),
                {"--clipping-norm"});
  check_refused(with({"--delta", "1e-5", "-o", "/nonexistent/dir/x.md"}), {"-o"});
}
