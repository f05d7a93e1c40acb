// End-to-end tests of what a person meets first: --help of every verb (with
// an example), --precision, footnote markers, colour only on a terminal.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"

using dpb::test::dpbudget_binary;
using dpb::test::run_dpbudget;
using dpb::test::run_dpbudget_args;
using dpb::test::run_shell;
using dpb::test::shell_quote;

namespace {

/// Every visible verb, as the parser lists them (`dpbudget completions list`).
std::vector<std::string> verbs() {
  const auto r = run_dpbudget({"completions", "list"});
  REQUIRE(r.status == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const std::string verb = line.substr(0, line.find('\t'));
    if (!verb.empty() && (out.empty() || out.back() != verb)) out.push_back(verb);
  }
  return out;
}

const std::vector<std::string> kEpsilonRun = {"epsilon", "-q",    "0.01",    "--sigma", "4",
                                              "--steps", "10000", "--delta", "1e-5"};

}  // namespace

TEST_CASE("every verb's --help shows its flags and an example of itself") {
  const auto all = verbs();
  CHECK(all.size() >= 6);
  for (const auto& verb : all) {
    CAPTURE(verb);
    const auto r = run_dpbudget({verb, "--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("example: dpbudget " + verb + " ") != std::string::npos);
    CHECK(r.out.find("--help") != std::string::npos);
    CHECK(r.out.find("Exit status") != std::string::npos);
  }
}

TEST_CASE("--precision sets significant digits in text, JSON stays exact") {
  auto args = kEpsilonRun;
  args.insert(args.end(), {"--precision", "3"});
  const auto r = run_dpbudget_args(args);
  REQUIRE(r.status == 0);
  CHECK(r.out.find(" 1.04 ") != std::string::npos);  // 1.03549 rounded up
  args.insert(args.end(), {"--format", "json"});
  const auto j = nlohmann::json::parse(run_dpbudget_args(args).out);
  CHECK(j["results"][0]["epsilon"].get<double>() == doctest::Approx(1.0354900660362967));
  CHECK(j["results"][0]["epsilon"].get<double>() != 1.04);

  for (const char* bad : {"0", "18", "x", "2.5"}) {
    auto b = kEpsilonRun;
    b.insert(b.end(), {"--precision", bad});
    const auto e = run_dpbudget_args(b);
    CHECK(e.status == 2);
    CHECK(e.err.find("--precision") != std::string::npos);
    CHECK(e.out.empty());
  }
}

TEST_CASE("approximate rows carry a footnote marker in text, not in JSON") {
  auto args = kEpsilonRun;
  args.insert(args.end(), {"--accountant", "all"});
  const auto r = run_dpbudget_args(args);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("approximate*") != std::string::npos);
  CHECK(r.out.find("\n* an approximation, not an upper bound\n") != std::string::npos);
  CHECK(r.out.find("upper*") == std::string::npos);
  args.insert(args.end(), {"--format", "json"});
  const auto j = nlohmann::json::parse(run_dpbudget_args(args).out);
  bool approximate = false;
  for (const auto& row : j["results"]) approximate = approximate || row["bound"] == "approximate";
  CHECK(approximate);
}

TEST_CASE("colour: a bold header on a terminal only, never with NO_COLOR or TERM=dumb") {
  // `script` gives the binary a pseudo-terminal as stdout.
  if (run_shell("command -v script >/dev/null").status != 0) {
    MESSAGE("script(1) not found: only the pipe case is checked");
  } else {
    std::string cmd = shell_quote(dpbudget_binary());
    for (const auto& a : kEpsilonRun) cmd += ' ' + a;
    auto on_tty = [&](const std::string& env) {
      return run_shell("env -u NO_COLOR " + env + " script -qec " + shell_quote(cmd) +
                       " /dev/null </dev/null");
    };
    const auto coloured = on_tty("TERM=xterm");
    REQUIRE(coloured.status == 0);
    CHECK(coloured.out.find("\033[1maccountant") != std::string::npos);
    CHECK(on_tty("TERM=xterm NO_COLOR=1").out.find('\033') == std::string::npos);
    CHECK(on_tty("TERM=dumb").out.find('\033') == std::string::npos);
    // An empty NO_COLOR does not count (no-color.org).
    CHECK(on_tty("TERM=xterm NO_COLOR=").out.find("\033[1m") != std::string::npos);
  }
  const auto piped = run_dpbudget_args(kEpsilonRun);
  CHECK(piped.out.find('\033') == std::string::npos);
}
