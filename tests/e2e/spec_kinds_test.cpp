// Spec files with the event kinds beyond DP-SGD's: a bad spec is one stderr
// line naming the JSON path (exit 2, nothing on stdout), in the snake-case form
// and in dp_accounting's class_name form (every kind's, in-process:
// tests/cli/bad_specs_test.cpp); --neighbouring and the "neighbouring" key of
// sweep --input lines.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run.hpp"
#include "run_json.hpp"

using dpb::test::json_of;
using dpb::test::run_dpbudget;
using Json = nlohmann::json;

namespace {

const std::string kGaussian = R"({"gaussian": {"noise_multiplier": 1}})";

struct BadSpec {
  std::string spec;
  std::string message;  ///< the whole stderr line after "dpbudget: error: --spec: "
};

}  // namespace

// Bad specs through the binary, one of each form; every kind's, in-process:
// tests/cli/bad_specs_test.cpp.
TEST_CASE("bad specs: one line naming the JSON path, exit 2, nothing on stdout") {
  const std::vector<BadSpec> cases = {
      {R"({"epsilon_delta": {"epsilon": 1}})", "/epsilon_delta/delta: missing"},
      {R"({"composed": [{"no_op": {}}, {"zcdp": {"rho": -0.5}}]})",
       "/composed/1/zcdp/rho: must be a finite number >= 0"},
      {R"({"class_name": "PoissonSampledDpEvent", "module_name": "dp_accounting.dp_event",
           "sampling_probability": 0.1,
           "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "x"}})",
       "/event/noise_multiplier: must be a number, got a string"},
  };
  for (const auto& c : cases) {
    const auto r = run_dpbudget({"epsilon", "--spec", "-", "--delta", "1e-5"}, c.spec);
    CAPTURE(c.spec);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "dpbudget: error: --spec: " + c.message + "\n");
  }
}

TEST_CASE("--neighbouring: only with --spec, one of three words, named in every result") {
  // Without --spec: refused naming both flags.
  for (const std::string target : {"--delta", "--epsilon"}) {
    const std::string verb = target == "--delta" ? "epsilon" : "delta";
    const auto r = run_dpbudget({verb, "-q", "0.01", "--sigma", "1", "--steps", "10", target,
                                 "1e-5", "--neighbouring", "add-remove"});
    CAPTURE(verb);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("dpbudget: error: --neighbouring: only with --spec", 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  const auto print = run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "10",
                                   "--print-spec", "--neighbouring", "replace-one"});
  CHECK(print.status == 2);
  CHECK(print.out.empty());
  // An unknown word lists the three.
  const auto bad = run_dpbudget(
      {"epsilon", "--spec", "-", "--delta", "1e-5", "--neighbouring", "replace_one"}, kGaussian);
  CHECK(bad.status == 2);
  CHECK(bad.err ==
        "dpbudget: error: --neighbouring: must be one of add-remove, replace-one, "
        "replace-special, got 'replace_one'\n");
  // dp_accounting's American spelling is suggested the flag.
  const auto spelt = run_dpbudget(
      {"epsilon", "--spec", "-", "--delta", "1e-5", "--neighboring", "replace-one"}, kGaussian);
  CHECK(spelt.status == 2);
  CHECK(spelt.err ==
        "dpbudget: error: unknown flag --neighboring for 'epsilon'; did you mean "
        "--neighbouring?\n");
  // Given and answered: every row says the relation asked for (whichever
  // accountants answer; those that refuse are skipped with a warning).
  const auto ok = run_dpbudget({"epsilon", "--spec", "-", "--delta", "1e-5", "--neighbouring",
                                "add-remove", "--accountant", "all", "--format", "json"},
                               kGaussian);
  const Json doc = json_of(ok);
  REQUIRE(!doc["results"].empty());
  for (const auto& row : doc["results"]) CHECK(row["neighbouring"] == "add_remove");
}

TEST_CASE(
    "--neighbouring: a refusing accountant alone is one line naming the event, in a list "
    "it is skipped with a warning and a footnote") {
  // The first example event that, under a relation asked for, one accountant
  // refuses and another takes, as `dpbudget events` lists them.
  const Json kinds = json_of(run_dpbudget({"events", "--format", "json"}))["results"];
  const std::vector<std::pair<std::string, std::string>> relations = {
      {"add_remove", "add-remove"},
      {"replace_one", "replace-one"},
      {"replace_special", "replace-special"}};
  bool found = false;
  for (const auto& k : kinds) {
    for (const auto& relation : relations) {
      std::vector<std::string> refusing, answering;
      for (const auto& support : k["support"].items())
        (support.value()[relation.first]["supported"].get<bool>() ? answering : refusing)
            .push_back(support.key());
      if (refusing.empty() || answering.empty()) continue;
      found = true;
      const std::string spec = k["example"].dump();
      CAPTURE(spec);
      CAPTURE(relation.second);
      const std::string why =
          k["support"][refusing.front()][relation.first]["reason"].get<std::string>();
      const auto alone =
          run_dpbudget({"epsilon", "--spec", "-", "--delta", "1e-5", "--neighbouring",
                        relation.second, "--accountant", refusing.front()},
                       spec);
      CHECK(alone.status == 2);
      CHECK(alone.out.empty());
      CHECK(alone.err == "dpbudget: error: " + why + "\n");
      const auto listed = run_dpbudget(
          {"epsilon", "--spec", "-", "--delta", "1e-5", "--neighbouring", relation.second,
           "--accountant", refusing.front() + "," + answering.front()},
          spec);
      // The answering one may still refuse at evaluation (a guarantee under
      // another relation than asked): then no row at all is exit 2.
      if (listed.status == 0) {
        CHECK(listed.err.find("dpbudget: warning: skipped " + why + "\n") != std::string::npos);
        CHECK(listed.out.find("warning: skipped " + why) != std::string::npos);
      } else {
        CHECK(listed.status == 2);
      }
      break;
    }
    if (found) break;
  }
  CHECK(found);
}

TEST_CASE(
    "sweep --input: \"neighbouring\" with a spec sets the relation, without one it is "
    "refused naming the key") {
  const std::string lines =
      R"({"name": "a", "spec": {"gaussian": {"noise_multiplier": 2}}, "neighbouring": "add-remove", "delta": 1e-5})"
      "\n";
  const Json doc = json_of(run_dpbudget({"sweep", "--input", "-", "--format", "json"}, lines));
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["neighbouring"] == "add_remove");

  const auto no_spec = run_dpbudget(
      {"sweep", "--input", "-"},
      R"({"sampling_rate": 0.01, "noise_multiplier": 1, "steps": 10, "neighbouring": "add-remove", "delta": 1e-5})"
      "\n");
  CHECK(no_spec.status == 2);
  CHECK(no_spec.out.empty());
  CHECK(no_spec.err ==
        "dpbudget: error: --input: <stdin>:1: neighbouring: only with spec (the DP-SGD keys' "
        "sampling fixes the relation: poisson add-remove, without-replacement replace-one)\n");

  const auto bad_word = run_dpbudget(
      {"sweep", "--input", "-"},
      R"({"spec": {"gaussian": {"noise_multiplier": 2}}, "neighbouring": "sideways", "delta": 1e-5})"
      "\n");
  CHECK(bad_word.status == 2);
  CHECK(bad_word.err ==
        "dpbudget: error: --input: <stdin>:1: neighbouring: must be one of add-remove, "
        "replace-one, replace-special, got 'sideways'\n");
}
