// A misspelt flag or verb: one line on stderr naming it and the verb, with the
// closest known name when one is close ("did you mean"), exit 2, nothing on
// stdout (issue 13, point 5). Every flag of every verb misspelt is checked
// in-process, through run_cli: tests/cli/suggest_test.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "run.hpp"
#include "support/refusal.hpp"

using dpb::test::run_dpbudget_args;

namespace {

/// Runs dpbudget and checks the one-line usage error; returns its text
/// without the "dpbudget: error: " prefix and the newline.
std::string usage_error(const std::vector<std::string>& args) {
  std::string joined;
  for (const auto& a : args) joined += a + " ";
  INFO("args: ", joined);
  return dpb::test::usage_error_text(run_dpbudget_args(args));
}

}  // namespace

TEST_CASE("a misspelt flag names the verb and the flag it is closest to") {
  CHECK(usage_error({"epsilon", "-q", "0.01", "--sigam", "1", "--steps", "10", "--delta",
                     "1e-5"}) == "unknown flag --sigam for 'epsilon'; did you mean --sigma?");
  CHECK(usage_error({"epsilon", "--sigam=1"}) ==
        "unknown flag --sigam for 'epsilon'; did you mean --sigma?");
  CHECK(usage_error({"epsilon", "--delat", "1e-5"}) ==
        "unknown flag --delat for 'epsilon'; did you mean --delta?");
  CHECK(usage_error({"sigma", "--sampling-rte", "0.1"}) ==
        "unknown flag --sampling-rte for 'sigma'; did you mean --sampling-rate?");
  CHECK(usage_error({"epsilon", "-sigma", "1"}) ==
        "unknown flag -sigma for 'epsilon'; did you mean --sigma?");
  // A prefix of one flag.
  CHECK(usage_error({"epsilon", "--acco", "rdp"}) ==
        "unknown flag --acco for 'epsilon'; did you mean --accountant?");
  // The suggestion is a flag of THAT verb: compose has no --sigma.
  CHECK(usage_error({"compose", "--cuont", "3"}) ==
        "unknown flag --cuont for 'compose'; did you mean --count?");
}

TEST_CASE("an unknown flag with nothing close gets no suggestion") {
  CHECK(usage_error({"epsilon", "-q", "0.01", "--bogus"}) ==
        "unknown flag --bogus for 'epsilon'; see 'dpbudget epsilon --help'");
  CHECK(usage_error({"epsilon", "-x", "1"}) ==
        "unknown flag -x for 'epsilon'; see 'dpbudget epsilon --help'");
  // --epsilon is a flag of other verbs, not of `epsilon`.
  CHECK(usage_error({"epsilon", "--epsilon", "1"}) ==
        "unknown flag --epsilon for 'epsilon'; see 'dpbudget epsilon --help'");
  // Before the verb only dpbudget's own flags are known.
  const std::string root = usage_error({"--sigam", "epsilon"});
  CHECK(root.rfind("unknown flag --sigam for 'dpbudget'", 0) == 0);
  // Negative numbers are values, not flags.
  CHECK(
      usage_error({"gaussian", "--epsilon", "-1", "--delta", "1e-5"}).find("--epsilon: must be") ==
      0);
}

TEST_CASE("a misspelt verb: the closest verb, or the list of verbs") {
  CHECK(usage_error({"epsilom"}) == "unknown verb 'epsilom'; did you mean epsilon?");
  CHECK(usage_error({"sigam", "--epsilon", "1"}) == "unknown verb 'sigam'; did you mean sigma?");
  CHECK(usage_error({"gausian"}) == "unknown verb 'gausian'; did you mean gaussian?");
  const std::string none = usage_error({"xyzzy"});
  CHECK(none.rfind("unknown verb 'xyzzy'; verbs: epsilon, delta, sigma,", 0) == 0);
  CHECK(none.find("did you mean") == std::string::npos);
}
