// sweep --input: messages name the input line, the JSON column and what was
// given (issue 46, item 4). Each case is one the issue quotes; the truths are
// the file as the test writes it (which line, which column, which value) and
// the rows the sweep writes on stdout (which row holds the line named).
#include <doctest/doctest.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "run.hpp"
#include "run_json.hpp"

using dpb::test::json_lines;
using dpb::test::run_dpbudget;
using dpb::test::TempFile;

namespace {

/// Five configurations; line 2 is a shuffled run, which makes rows of its own
/// beside the accountants' (a lower bound, the Poisson estimate), so output
/// rows and input lines part ways after it. Line 4 is over its budget.
const std::vector<std::string> kFiveLines{
    R"({"name": "mnist-small", "sampling_rate": 0.01, "noise_multiplier": 1.1, "epochs": 30, "delta": 1e-5, "epsilon": 3})",
    R"({"name": "cifar-shuffled", "dataset_size": 50000, "batch_size": 512, "noise_multiplier": 1.5, "epochs": 50, "delta": 1e-5, "epsilon": 1000, "sampling": "shuffle"})",
    R"({"name": "cifar", "dataset_size": 50000, "batch_size": 512, "noise_multiplier": 1.5, "epochs": 50, "delta": 1e-5, "epsilon": 8})",
    R"({"name": "cifar-lownoise", "dataset_size": 50000, "batch_size": 512, "noise_multiplier": 0.6, "epochs": 50, "delta": 1e-5, "epsilon": 8})",
    R"({"name": "last", "sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 100, "delta": 1e-5, "epsilon": 8})"};

std::string lines_of(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  return text;
}

}  // namespace

TEST_CASE("the gate names the input line and the config's name, beside the output row") {
  const TempFile file("five_lines.jsonl", lines_of(kFiveLines));
  const auto r =
      run_dpbudget({"sweep", "--input", file.path, "--accountant", "rdp,pld", "--format", "jsonl"});
  CHECK(r.status == 1);
  // The row the gate names: line 4's recommended row, counted on stdout.
  const auto rows = json_lines(r.out);
  std::size_t row = 0;
  for (std::size_t i = 0; i < rows.size() && row == 0; ++i)
    if (rows[i].value("name", "") == "cifar-lownoise" && rows[i].value("recommended", false))
      row = i + 1;
  REQUIRE(row > 4);  // rows and lines part ways: the row number alone would mislead
  const std::string where = file.path + ":4 'cifar-lownoise', row " + std::to_string(row);
  CHECK(r.err.find("dpbudget: budget exceeded: " + where + " (pld, delta 1e-05): epsilon ") !=
        std::string::npos);
  CHECK(r.err.find("dpbudget: 1 of " + std::to_string(rows.size()) +
                   " rows over budget; first at row " + std::to_string(row) + " (" + file.path +
                   ":4 'cifar-lownoise')\n") != std::string::npos);
  // The same from standard input, answered line by line.
  const auto streamed =
      run_dpbudget({"sweep", "--input", "-", "--accountant", "rdp,pld", "--format", "jsonl"},
                   lines_of(kFiveLines));
  CHECK(streamed.status == 1);
  CHECK(streamed.out == r.out);
  CHECK(streamed.err.find("dpbudget: budget exceeded: <stdin>:4 'cifar-lownoise', row " +
                          std::to_string(row) + " (pld, ") != std::string::npos);
}

TEST_CASE("a broken JSON line names the column where the parser stopped") {
  // The comma missing after 0.01: the next key's quote is where JSON breaks.
  auto lines = kFiveLines;
  lines[2] = R"({"name": "x", "sampling_rate": 0.01 "noise_multiplier": 1.1})";
  const std::size_t column = lines[2].find("\"noise") + 1;
  const auto r = run_dpbudget({"sweep", "--input", "-", "--format", "csv"}, lines_of(lines));
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "dpbudget: error: --input: <stdin>:3: not valid JSON at column " +
                     std::to_string(column) +
                     ": syntax error while parsing object - unexpected string literal; "
                     "expected '}'\n");
}

TEST_CASE("a value of the wrong type says what was given") {
  const std::string line =
      R"({"sampling_rate": "0.01", "noise_multiplier": 1.1, "steps": 100, "delta": 1e-5})";
  const auto r = run_dpbudget({"sweep", "--input", "-", "--format", "text"}, line + "\n");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "dpbudget: error: --input: <stdin>:1: sampling_rate: must be a number in [0, 1], got a "
        "string \"0.01\"\n");
  // A line with a name: the name after the line, as the gate shows it; in a
  // streamed sweep's answer too.
  const auto named = run_dpbudget({"sweep", "--input", "-", "--format", "jsonl", "--keep-going"},
                                  R"({"name": "cifar", )" + line.substr(1) + "\n");
  CHECK(named.status == 2);
  const std::string message =
      "--input: <stdin>:1 'cifar': sampling_rate: must be a number in [0, 1], got a string "
      "\"0.01\"";
  CHECK(named.err == "dpbudget: error: " + message + "\n");
  CHECK(json_lines(named.out) ==
        std::vector<nlohmann::json>{{{"line", 1}, {"name", "cifar"}, {"error", message}}});
  // A number out of range, a boolean, an array: each as given.
  for (const auto& [value, given] : std::vector<std::pair<std::string, std::string>>{
           {"1.5", "the number 1.5"}, {"true", "a boolean (true)"}, {"[0.01]", "an array"}}) {
    const auto bad =
        run_dpbudget({"sweep", "--input", "-", "--format", "text"},
                     R"({"sampling_rate": )" + value +
                         R"(, "noise_multiplier": 1.1, "steps": 100, "delta": 1e-5})" + "\n");
    CHECK(bad.err ==
          "dpbudget: error: --input: <stdin>:1: sampling_rate: must be a number in [0, "
          "1], got " +
              given + "\n");
  }
}
