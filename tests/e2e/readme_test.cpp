// The README's examples and verb table (the rest of what it once held is in
// docs/, each tested example tested where it now is: guide.md by
// plan_test.cpp, ledger_test.cpp, matrix_test.cpp and peers_test.cpp,
// spec_files.md by events_test.cpp and pld_spec_test.cpp). Every
// `$ dpbudget ...` line of its console blocks runs, and where the block shows
// what it prints, that is this binary's output; the verb table names every
// verb `dpbudget --help` lists.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"

using dpb::test::run_dpbudget;
using dpb::test::slurp;

namespace {

/// One `$ dpbudget ...` line of a README console block and the lines after
/// it, up to the next command or the end of the block ("" when it shows none).
struct ReadmeExample {
  std::string command;
  std::string shown;
};

std::vector<ReadmeExample> readme_examples() {
  std::vector<ReadmeExample> out;
  std::istringstream in(slurp(DPBUDGET_README));
  bool console = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      console = !console && line == "```console";
      continue;
    }
    if (!console) continue;
    if (line.rfind("$ dpbudget ", 0) == 0)
      out.push_back({line.substr(2), ""});
    else if (!out.empty())
      out.back().shown += line + "\n";
  }
  return out;
}

/// The verbs `dpbudget --help` lists under "Subcommands:".
std::vector<std::string> help_verbs() {
  const auto r = run_dpbudget({"--help"});
  REQUIRE(r.status == 0);
  std::istringstream in(r.out.substr(r.out.find("Subcommands:\n")));
  std::vector<std::string> verbs;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line) && !line.empty()) {
    // "  VERB   summary"; a continued summary or an example is indented further.
    if (line.size() > 2 && line.rfind("  ", 0) == 0 && line[2] != ' ')
      verbs.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return verbs;
}

}  // namespace

TEST_CASE("README: every example runs, and the output it shows is this binary's output") {
  const auto examples = readme_examples();
  // epsilon, epsilon --accountant all, three solvers, two sweeps
  CHECK(examples.size() == 7);
  int with_output = 0;
  for (const auto& e : examples) {
    CAPTURE(e.command);
    std::vector<std::string> args;
    std::istringstream words(e.command.substr(std::string("dpbudget ").size()));
    for (std::string w; words >> w;) args.push_back(w);
    const auto r = run_dpbudget(args);
    CHECK(r.status == 0);
    if (e.shown.empty()) continue;
    CHECK(r.out == e.shown);
    ++with_output;
  }
  CHECK(with_output == 2);
}

TEST_CASE("README: the verb table names every verb of dpbudget --help, once") {
  const std::string readme = slurp(DPBUDGET_README);
  const auto verbs = help_verbs();
  CHECK(verbs.size() == 31);
  for (const auto& v : verbs) {
    CAPTURE(v);
    const std::string row = "\n| `" + v + "` | ";
    const auto at = readme.find(row);
    CHECK(at != std::string::npos);
    CHECK(readme.find(row, at + 1) == std::string::npos);
  }
  std::size_t rows = 0;
  for (auto at = readme.find("\n| `"); at != std::string::npos; at = readme.find("\n| `", at + 1))
    ++rows;
  CHECK(rows == verbs.size());
}
