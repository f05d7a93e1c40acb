// `dpbudget events` lists, for every event kind, each accountant's support
// per neighbouring relation; a refusal it lists is the refusal `epsilon --spec`
// gives for the kind's example: the same line, exit 2, nothing on stdout.
// In-process (run_cli): each pair was a process of the binary (125 of them,
// ~25 CPU-s under the sanitizers; issue 25); tests/e2e/events_test.cpp checks
// the listing itself and runs the binary on the examples.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "in_process.hpp"

using dpb::test::run_in_process;

TEST_CASE("events: each refusal listed is the one `epsilon --spec` gives for the example") {
  const auto listed = run_in_process({"events", "--format", "json"});
  REQUIRE(listed.status == 0);
  const nlohmann::json kinds = nlohmann::json::parse(listed.out)["results"];
  REQUIRE(kinds.size() >= 10);
  const std::vector<std::pair<std::string, std::string>> relations = {
      {"default", ""},
      {"add_remove", "add-remove"},
      {"replace_one", "replace-one"},
      {"replace_special", "replace-special"}};
  int refusals = 0;
  for (const auto& k : kinds) {
    const std::string spec = k["example"].dump();
    for (const auto& support : k["support"].items())
      for (const auto& relation : relations) {
        const std::string& acc = support.key();
        const std::string& flag = relation.second;
        const nlohmann::json& answer = support.value()[relation.first];
        if (answer["supported"].get<bool>()) continue;
        std::vector<std::string> args = {"epsilon", "--spec",       "-", "--delta",
                                         "1e-5",    "--accountant", acc};
        if (!flag.empty()) args.insert(args.end(), {"--neighbouring", flag});
        const auto r = run_in_process(args, dpb::cli::RunMode::run, spec);
        CAPTURE(spec);
        CAPTURE(flag);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err == "dpbudget: error: " + answer["reason"].get<std::string>() + "\n");
        ++refusals;
      }
  }
  CHECK(refusals >= 100);  // 125 when this was written: a listing of no refusal checks nothing
}
