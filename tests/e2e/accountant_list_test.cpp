// --accountant takes a list (issue 13, point 3): `rdp,pld`, the flag
// repeated, and `all` mixed in, on every verb that takes --accountant; rows
// come in the order first given, each accountant once; an unknown or empty
// name is refused naming it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run_json.hpp"

using dpb::test::check_refused;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::with;
using Json = nlohmann::json;

namespace {

const std::vector<std::string> kRun = {"-q", "0.01", "--sigma", "1", "--steps", "100"};

/// The accountant of each result row, in order.
std::vector<std::string> accountants_of(const Json& j) {
  std::vector<std::string> out;
  for (const auto& r : j["results"]) out.push_back(r["accountant"].get<std::string>());
  return out;
}

std::vector<std::string> epsilon_rows(const std::vector<std::string>& accountant_args) {
  return accountants_of(json_of(run_dpbudget(with(
      with({"epsilon"}, kRun), with(accountant_args, {"--delta", "1e-5", "--format", "json"})))));
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("--accountant: a comma list gives one row per accountant, in the order given") {
  CHECK(epsilon_rows({"--accountant", "rdp,pld"}) == Names{"rdp", "pld"});
  CHECK(epsilon_rows({"--accountant", "pld,rdp"}) == Names{"pld", "rdp"});
  // The rows are each accountant's own result.
  const auto both =
      json_of(run_dpbudget(with(with({"epsilon"}, kRun), {"--accountant", "gdp,rdp", "--delta",
                                                          "1e-5", "--format", "json"})));
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string name = both["results"][i]["accountant"];
    const auto alone = json_of(run_dpbudget(with(
        with({"epsilon"}, kRun), {"--accountant", name, "--delta", "1e-5", "--format", "json"})));
    // Side by side, each row also says whether it is the one to use (the
    // smallest sound upper bound: rdp here, gdp's CLT row being approximate).
    auto row = both["results"][i];
    CHECK(row["recommended"] == (name == "rdp"));
    row.erase("recommended");
    CHECK(row == alone["results"][0]);
  }
}

TEST_CASE("--accountant: the flag repeated is a list too, and lists and repeats combine") {
  CHECK(epsilon_rows({"--accountant", "pld", "--accountant", "rdp"}) == Names{"pld", "rdp"});
  CHECK(epsilon_rows({"--accountant", "gdp,pld", "--accountant", "rdp"}) ==
        Names{"gdp", "pld", "rdp"});
}

TEST_CASE("--accountant: all mixed in stands for every accountant, each once in its first place") {
  const Names registry{"rdp", "gdp", "composition", "pld"};
  CHECK(epsilon_rows({"--accountant", "all"}) == registry);
  CHECK(epsilon_rows({"--accountant", "all,rdp"}) == registry);
  CHECK(epsilon_rows({"--accountant", "pld,all"}) == Names{"pld", "rdp", "gdp", "composition"});
  CHECK(epsilon_rows({"--accountant", "rdp,rdp"}) == Names{"rdp"});
  CHECK(epsilon_rows({"--accountant", "gdp", "--accountant", "gdp,rdp"}) == Names{"gdp", "rdp"});
  // Without the flag: rdp alone, as before.
  CHECK(epsilon_rows({}) == Names{"rdp"});
}

TEST_CASE("--accountant: an unknown or empty name is refused naming it, exit 2, stdout empty") {
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  for (const auto& c : std::vector<Case>{{{"--accountant", "rdp,magic"}, "'magic'"},
                                         {{"--accountant", "rdp", "--accountant", "pdl"}, "'pdl'"},
                                         {{"--accountant", "rdp,"}, "''"},
                                         {{"--accountant", ",pld"}, "''"},
                                         {{"--accountant", "rdp pld"}, "'rdp pld'"}}) {
    const auto r = run_dpbudget(with(with({"epsilon"}, kRun), with(c.args, {"--delta", "1e-5"})));
    check_refused(r,
                  {"dpbudget: error: --accountant: ", c.names, "rdp, gdp, composition, pld, all"});
  }
}

TEST_CASE("--accountant: a list works on every verb that takes it, rows in the order given") {
  const std::vector<std::string> list = {"--accountant", "gdp,rdp", "--format", "json"};
  CHECK(accountants_of(json_of(run_dpbudget(
            with(with({"delta"}, kRun), with({"--epsilon", "1"}, list))))) == Names{"gdp", "rdp"});
  const std::vector<std::string> target = {"--epsilon", "1", "--delta", "1e-5"};
  CHECK(accountants_of(json_of(run_dpbudget(with({"sigma", "-q", "0.01", "--steps", "100"},
                                                 with(target, list))))) == Names{"gdp", "rdp"});
  CHECK(accountants_of(json_of(run_dpbudget(with({"steps", "-q", "0.01", "--sigma", "1"},
                                                 with(target, list))))) == Names{"gdp", "rdp"});
  CHECK(accountants_of(json_of(run_dpbudget(
            with({"sampling-rate", "--sigma", "1", "--steps", "100"}, with(target, list))))) ==
        Names{"gdp", "rdp"});
  // sweep: the accountant is innermost, in the order given, within each row of parameters.
  CHECK(accountants_of(json_of(run_dpbudget(
            with({"sweep", "-q", "0.01", "--sigma", "1,2", "--steps", "100", "--delta", "1e-5"},
                 list)))) == Names{"gdp", "rdp", "gdp", "rdp"});
  // plot: one curve per accountant, named in the legend in the order given.
  const auto plot =
      run_dpbudget({"plot", "-q", "0.01", "--sigma", "1", "--steps", "1:100", "--delta", "1e-5",
                    "--points", "5", "--accountant", "rdp,gdp", "-o", "-"});
  INFO(plot.err);
  REQUIRE(plot.status == 0);
  const auto rdp = plot.out.find(">rdp"), gdp = plot.out.find(">gdp");
  CHECK(rdp != std::string::npos);
  CHECK(gdp != std::string::npos);
  CHECK(rdp < gdp);
}
