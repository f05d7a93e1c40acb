// --format markdown (issue 16, item 5): the text table as GitHub-flavoured
// Markdown, for CI job summaries, on every verb that prints a table.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "run.hpp"

using namespace dpb::test;

namespace {

/// The cells of a Markdown table row "| a | b |" (unescaped only of the
/// escapes these tests meet: \_ and \*).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      cell += line[++i];
    } else if (line[i] == '|') {
      out.push_back(cell.substr(1, cell.size() - 2));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return out;
}

std::vector<std::string> complete_lines(const std::string& s) {
  std::vector<std::string> out;
  std::string line;
  for (char c : s) {
    if (c == '\n') {
      out.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("markdown: Abadi's run, one row per accountant, the text table's values") {
  const std::vector<std::string> args = {"epsilon", "--accountant", "all", "-q",
                                         "0.01",    "--sigma",      "4",   "--steps",
                                         "10000",   "--delta",      "1e-5"};
  auto md_args = args;
  md_args.insert(md_args.end(), {"--format", "markdown"});
  const auto md = run_dpbudget(md_args);
  REQUIRE(md.status == 0);
  const auto lines = complete_lines(md.out);
  // The block above the table, a blank line, the results table.
  REQUIRE(lines.size() > 4);
  CHECK(lines[0] == "| parameter | value |");
  CHECK(lines[1] == "|---|---|");
  std::size_t header = 0;
  for (std::size_t i = 2; i < lines.size(); ++i)
    if (lines[i].rfind("| accountant |", 0) == 0) header = i;
  REQUIRE(header > 0);
  const auto columns = cells_of(lines[header]);
  std::size_t eps_column = 0;
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c] == "epsilon") eps_column = c;
  REQUIRE(columns[eps_column] == "epsilon");
  // The text table's ε cells, row by row.
  const auto text = complete_lines(run_dpbudget(args).out);
  const char* accountants[] = {"rdp", "gdp", "composition", "pld"};
  for (std::size_t r = 0; r < 4; ++r) {
    const auto row = cells_of(lines[header + 2 + r]);
    INFO("row ", lines[header + 2 + r]);
    CHECK(row[0].rfind(accountants[r], 0) == 0);
    bool found = false;
    for (const auto& t : text)
      found = found ||
              (t.rfind(accountants[r], 0) == 0 && t.find(row[eps_column]) != std::string::npos);
    CHECK(found);
  }
  // No ANSI colour, ever.
  CHECK(md.out.find('\033') == std::string::npos);
  // CommonMark parses it (cmark, when installed: apt-get install -y cmark).
  if (run_shell("command -v cmark >/dev/null").status == 0) {
    const auto parsed = run_shell("printf '%s' " + shell_quote(md.out) + " | cmark");
    CHECK(parsed.status == 0);
    CHECK(parsed.out.find("accountant") != std::string::npos);
  } else {
    MESSAGE("cmark not installed: the CommonMark check is skipped");
  }
}

TEST_CASE("markdown: every verb that prints a table takes --format markdown") {
  const std::vector<std::vector<std::string>> commands = {
      {"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5"},
      {"delta", "-q", "0.01", "--sigma", "1", "--steps", "100", "--epsilon", "1"},
      {"risk", "-q", "0.01", "--sigma", "1", "--steps", "100", "--accountant", "rdp,pld"},
      {"sigma", "-q", "0.01", "--steps", "100", "--max-tpr", "0.05", "--at-fpr", "0.01"},
      {"sigma", "-q", "0.01", "--steps", "100", "--epsilon", "1", "--delta", "1e-5"},
      {"steps", "-q", "0.01", "--sigma", "1", "--epsilon", "1", "--delta", "1e-5"},
      {"sampling-rate", "--sigma", "1", "--steps", "100", "--epsilon", "1", "--delta", "1e-5"},
      {"sweep", "-q", "0.01", "--sigma", "1,2", "--steps", "100", "--delta", "1e-5"},
      {"compose", "--epsilon", "0.1", "--delta", "1e-7", "--count", "10", "--target-delta", "1e-5"},
      {"amplify", "--epsilon", "1", "--delta", "1e-6", "-q", "0.01"},
      {"gaussian", "--sigma", "1", "--delta", "1e-5"},
      {"laplace", "--scale", "1", "--delta", "1e-5"},
      {"gdp", "--mu", "1", "--delta", "1e-5"},
      {"events"},
  };
  for (auto c : commands) {
    c.insert(c.end(), {"--format", "markdown"});
    const auto r = run_dpbudget(c);
    INFO(c[0], ": ", r.err);
    CHECK(r.status == 0);
    CHECK(r.out.rfind("| ", 0) == 0);
    CHECK(r.out.find("|---") != std::string::npos);
  }
}
