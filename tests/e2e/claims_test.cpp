// Claims through the binary (docs/claims.md#attained-pairs): the cases of issue 24 print true
// claims; the budget gate decides on the smallest sound upper bound; and
// epsilon, sweep, report, risk and plot give the same rows with the same
// claims for the same question.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"
#include "run_json.hpp"

using dpb::test::json_lines;
using dpb::test::json_of;
using dpb::test::Run;
using dpb::test::run_dpbudget;
using dpb::test::TempFile;
using dpb::test::with;
using nlohmann::json;

namespace {

const std::vector<std::string> kDpSgd = {"-q", "0.01", "--sigma", "1.1", "--steps", "10000"};

/// The claims of a result row: what every verb must agree on.
std::string claims_of(const json& row) {
  std::string s =
      row.at("accountant").get<std::string>() + " " + row.at("bound").get<std::string>();
  if (row.contains("lower_end")) s += " lower_end=" + row.at("lower_end").get<std::string>();
  if (row.contains("recommended") && row.at("recommended").get<bool>()) s += " recommended";
  return s;
}

}  // namespace

TEST_CASE("gate: gdp's central-limit approximation neither passes nor fails a run") {
  // Issue 24: exited 0 on gdp's 5.065; the sound bounds are 5.19 (pld) and 5.63 (rdp).
  const Run r = run_dpbudget(with(with({"epsilon"}, kDpSgd), {"--delta", "1e-5", "--accountant",
                                                              "gdp", "--max-epsilon", "5.1"}));
  CHECK(r.status == 4);
  CHECK(r.out.find("5.06473") != std::string::npos);  // stdout keeps the table
  CHECK(r.err.find("no sound upper bound to gate on") != std::string::npos);
  CHECK(r.err.find("--accountant rdp,composition,pld would give one") != std::string::npos);
  // The same through sweep --input.
  const Run s = run_dpbudget({"sweep", "--input", "-", "--accountant", "gdp", "--format", "jsonl"},
                             R"({"sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 10000, )"
                             R"("delta": 1e-5, "epsilon": 5.1})"
                             "\n");
  CHECK(s.status == 4);
  CHECK(s.err.find("no sound upper bound to gate on") != std::string::npos);
  const auto rows = json_lines(s.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].at("budget") == 5.1);
  CHECK(rows[0].at("over_budget") == true);
}

TEST_CASE("gate: the recommended row decides, not every row") {
  // Issue 24: pld 5.19 recommended, yet exit 1 because rdp's 5.63 > 5.5.
  const std::string line =
      R"({"sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 10000, "delta": 1e-5, "epsilon": 5.5})";
  const Run r = run_dpbudget(
      {"sweep", "--input", "-", "--accountant", "rdp,pld", "--format", "jsonl"}, line + "\n");
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  const auto rows = json_lines(r.out);
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    CHECK(row.at("budget") == 5.5);
    CHECK(row.at("over_budget") == false);
  }
  CHECK(rows[0].at("accountant") == "rdp");
  CHECK(rows[0].at("epsilon").get<double>() > 5.5);  // over, but not the run's bound
  CHECK(rows[1].at("recommended") == true);
  // Below pld's bound the run is over, and stderr names the recommended row.
  const Run over =
      run_dpbudget({"sweep", "--input", "-", "--accountant", "rdp,pld", "--format", "jsonl"},
                   std::regex_replace(line, std::regex("5\\.5"), "5.1") + "\n");
  CHECK(over.status == 1);
  CHECK(over.err.find("budget exceeded: <stdin>:1, row 2 (pld, delta 1e-05): epsilon 5.19268 > "
                      "budget 5.1") != std::string::npos);
  // --accountant all with --max-epsilon 6: composition's 3387 does not fail the run.
  const Run all = run_dpbudget(with(
      with({"epsilon"}, kDpSgd), {"--delta", "1e-5", "--accountant", "all", "--max-epsilon", "6"}));
  CHECK(all.status == 0);
  const Run tight = run_dpbudget(with(
      with({"epsilon"}, kDpSgd), {"--delta", "1e-5", "--accountant", "all", "--max-epsilon", "5"}));
  CHECK(tight.status == 1);
  CHECK(tight.err.find("(pld, delta 1e-05)") != std::string::npos);
  CHECK(tight.err.find("composition") == std::string::npos);
}

TEST_CASE("pld: an exponential mechanism's interval is named the accuracy, not a lower bound") {
  const TempFile spec_file(
      "claims_em.json",
      R"({"self_composed":{"count":50,"event":{"exponential_mechanism":{"epsilon":0.3}}}})");
  const std::string& spec = spec_file.path;
  const Run r = run_dpbudget({"epsilon", "--spec", spec, "--delta", "1e-5", "--accountant",
                              "rdp,pld", "--format", "json"});
  REQUIRE(r.status == 0);
  const json j = json_of(r);
  const json& rdp = j.at("results").at(0);
  const json& pld = j.at("results").at(1);
  CHECK(pld.at("lower_end") == "accuracy");
  CHECK_FALSE(pld.contains("epsilon_lower"));
  CHECK(pld.at("epsilon_accuracy").get<double>() > 0);
  CHECK(pld.at("epsilon_accuracy").get<double>() < 0.05);
  // rdp's sound upper bound (5.05936) is the recommended row.
  CHECK(rdp.at("recommended") == true);
  CHECK(rdp.at("epsilon").get<double>() < pld.at("epsilon").get<double>());
  const Run text =
      run_dpbudget({"epsilon", "--spec", spec, "--delta", "1e-5", "--accountant", "rdp,pld"});
  CHECK(text.out.find("[10.") == std::string::npos);  // no interval of the run
  CHECK(text.out.find("accuracy 1.3e-05") != std::string::npos);
  // risk: the TPR's lower end is not shown as one (it was 0.158 beside rdp's 0.0293).
  const Run risk = run_dpbudget(
      {"risk", "--spec", spec, "--accountant", "rdp,pld", "--fpr", "0.001", "--format", "json"});
  REQUIRE(risk.status == 0);
  const json risks = json_of(risk);
  for (const auto& row : risks.at("results")) {
    CHECK_FALSE(row.contains("tpr_lower"));
    CHECK_FALSE(row.contains("advantage_lower"));
    if (row.at("accountant") == "pld") CHECK(row.at("lower_end") == "accuracy");
  }
}

TEST_CASE("balls-in-bins with k = 2 and shuffle: no lower end above the truth") {
  // Monte Carlo puts this run's true epsilon near 1.93
  // (tests/accounting/properties/answer_claims_test.cpp); pld printed [2.06282, 2.06534] as its
  // interval.
  const Run r =
      run_dpbudget({"epsilon", "--sampling", "balls-in-bins", "--participations", "2", "--sigma",
                    "1", "--dataset-size", "5", "--batch-size", "1", "--epochs", "1", "--delta",
                    "0.0235", "--accountant", "pld", "--format", "json"});
  REQUIRE(r.status == 0);
  const json doc = json_of(r);
  const json& row = doc.at("results").at(0);
  CHECK(row.at("lower_end") == "accuracy");
  CHECK_FALSE(row.contains("epsilon_lower"));
  CHECK(row.at("epsilon").get<double>() >= 1.93);
  // risk's advantage: no lower end printed (it was [0.3838, 0.3847]; true 0.3727).
  const Run risk = run_dpbudget({"risk", "--sampling", "balls-in-bins", "--participations", "2",
                                 "--sigma", "1", "--dataset-size", "5", "--batch-size", "1",
                                 "--epochs", "1", "--accountant", "pld", "--format", "json"});
  REQUIRE(risk.status == 0);
  const json risks = json_of(risk);
  for (const auto& rr : risks.at("results")) {
    CHECK_FALSE(rr.contains("advantage_lower"));
    CHECK(rr.at("advantage").get<double>() >= 0.3727);
  }
  // shuffle: the upper row is E unamplified releases (no interval of the
  // run); the lower row and the Poisson estimate stand beside it.
  const Run s = run_dpbudget({"epsilon", "--sampling", "shuffle", "--dataset-size", "60000",
                              "--batch-size", "600", "--sigma", "1.1", "--epochs", "10", "--delta",
                              "1e-5", "--accountant", "pld", "--format", "json"});
  REQUIRE(s.status == 0);
  const json shuffled = json_of(s);
  const json& rows = shuffled.at("results");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].at("lower_end") == "accuracy");
  CHECK(rows[1].at("bound") == "lower");
  CHECK(rows[1].at("epsilon").get<double>() <= rows[0].at("epsilon").get<double>());
  CHECK(rows[2].at("bound") == "estimate");
}

TEST_CASE("report: the headline states the recommended bound with its claim and assumptions") {
  const Run r = run_dpbudget({"report", "--dataset-size", "60000", "--batch-size", "600", "--sigma",
                              "1.1", "--epochs", "10", "--delta", "1e-5", "--sampling", "shuffle"});
  REQUIRE(r.status == 0);
  const std::string& md = r.out;
  const auto headline = md.find("satisfies (epsilon, delta)-differential privacy");
  REQUIRE(headline != std::string::npos);
  const std::string sentence = md.substr(headline, md.find('\n', headline) - headline);
  CHECK(sentence.find("a sound upper bound") != std::string::npos);
  CHECK(sentence.find("replace_special") != std::string::npos);
  CHECK(sentence.find("shuffles each epoch") != std::string::npos);
  // Upper, lower and Poisson-estimate figures side by side.
  CHECK(md.find("| lower bound") != std::string::npos);
  CHECK(md.find("| Poisson estimate") != std::string::npos);
  // The methods section no longer calls every gdp figure an approximation.
  CHECK(md.find("exact for unsampled Gaussian releases") != std::string::npos);
  // Poisson run: the assumption is in the headline, composition and gdp's
  // approximation are left out by default, and plain words from risk follow.
  const Run p = run_dpbudget(with(with({"report"}, kDpSgd), {"--delta", "1e-5"}));
  REQUIRE(p.status == 0);
  CHECK(p.out.find("assuming Poisson sampling") != std::string::npos);
  CHECK(p.out.find("| composition") == std::string::npos);
  CHECK(p.out.find("Left out: gdp") != std::string::npos);
  CHECK(p.out.find("In plain words: an attacker who wrongly accuses 1 in 1000 non-members") !=
        std::string::npos);
  // delta x N = 0.6: a warning right after the headline.
  const Run w = run_dpbudget({"report", "--dataset-size", "60000", "--batch-size", "600", "--sigma",
                              "1.1", "--epochs", "10", "--delta", "1e-5"});
  REQUIRE(w.status == 0);
  const auto warn = w.out.find("delta x N = 0.6");
  REQUIRE(warn != std::string::npos);
  CHECK(warn < w.out.find("## Parameters"));
}

TEST_CASE("report: events none of its default accountants handle are stated by the others") {
  // A sampled epsilon_delta event: only composition amplifies it.
  const Run r = run_dpbudget(
      {"report", "--spec", "-", "--delta", "1e-5"},
      R"({"self_composed":{"count":10,"event":{"poisson_sampled":{"sampling_probability":0.1,)"
      R"("event":{"epsilon_delta":{"epsilon":1,"delta":1e-7}}}}}})");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("a sound upper bound (composition accountant)") != std::string::npos);
}

TEST_CASE("agreement: epsilon, sweep, report, risk and plot give the same rows and claims") {
  const std::vector<std::vector<std::string>> runs = {
      {"-q", "0.01", "--sigma", "1.1", "--steps", "1000"},
      {"--sampling", "without-replacement", "--dataset-size", "10000", "--batch-size", "100",
       "--sigma", "1.1", "--epochs", "2"},
      {"--sampling", "shuffle", "--dataset-size", "10000", "--batch-size", "100", "--sigma", "1.1",
       "--epochs", "2"},
      {"--sampling", "balls-in-bins", "--dataset-size", "1000", "--batch-size", "100", "--sigma",
       "1.1", "--epochs", "2"},
      {"-q", "0.01", "--sigma", "1.1", "--steps", "200", "--records-per-user", "2"},
  };
  const std::vector<std::string> acc = {"--accountant", "rdp,pld,gdp"};
  for (const auto& flags : runs) {
    std::string what;
    for (const auto& f : flags) what += f + " ";
    INFO(what);
    const Run e = run_dpbudget(
        with(with(with({"epsilon"}, flags), acc), {"--delta", "1e-5", "--format", "json"}));
    REQUIRE(e.status == 0);
    const json rows = json_of(e).at("results");  // a copy
    const Run s = run_dpbudget(
        with(with(with({"sweep"}, flags), acc), {"--delta", "1e-5", "--format", "jsonl"}));
    REQUIRE(s.status == 0);
    const auto lines = json_lines(s.out);
    REQUIRE(lines.size() == rows.size());
    std::map<std::string, std::string> lower_end;
    double recommended = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      CHECK(claims_of(lines[i]) == claims_of(rows[i]));
      CHECK(lines[i].at("epsilon") == rows[i].at("epsilon"));
      if (rows[i].contains("sampling")) CHECK(lines[i].at("sampling") == rows[i].at("sampling"));
      if (rows[i].contains("lower_end") && rows[i].at("bound") == "upper")
        lower_end[rows[i].at("accountant").get<std::string>()] =
            rows[i].at("lower_end").get<std::string>();
      if (rows[i].contains("recommended") && rows[i].at("recommended").get<bool>())
        recommended = rows[i].at("epsilon").get<double>();
    }
    REQUIRE(recommended > 0);
    // report's headline: the recommended row's epsilon, rounded up.
    const Run rep = run_dpbudget(with(with(with({"report"}, flags), acc), {"--delta", "1e-5"}));
    REQUIRE(rep.status == 0);
    std::smatch m;
    REQUIRE(std::regex_search(rep.out, m, std::regex("with epsilon = ([0-9.e+-]+) at delta")));
    const double headline = std::stod(m[1]);
    CHECK(headline >= recommended);
    CHECK(headline <= recommended * (1 + 1e-5));
    // risk: each accountant's lower ends claim what its epsilon row claims.
    const Run risk =
        run_dpbudget(with(with(with({"risk"}, flags), acc), {"--fpr", "0.01", "--format", "json"}));
    REQUIRE(risk.status == 0);
    const json risks = json_of(risk);
    for (const auto& row : risks.at("results")) {
      const std::string name = row.at("accountant").get<std::string>();
      if (lower_end.count(name))
        CHECK(row.at("lower_end") == lower_end[name]);
      else
        CHECK_FALSE(row.contains("lower_end"));
    }
    // plot: each curve's legend states the claim of that accountant's row
    // (plot draws steps of Poisson runs; its last point is the run itself).
    if (flags[0] != "-q") continue;
    std::vector<std::string> plot_flags = flags;
    plot_flags[5] = "1:" + plot_flags[5];  // --steps as the x axis' range
    const Run plot = run_dpbudget(with(with(with({"plot"}, plot_flags), acc),
                                       {"--delta", "1e-5", "--points", "4", "-o", "-"}));
    REQUIRE(plot.status == 0);
    for (const auto& row : rows) {
      const std::string name = row.at("accountant").get<std::string>();
      const std::string label =
          row.at("bound") == "upper" ? name + " (upper bound)" : name + " (approximation";
      CHECK(plot.out.find(label) != std::string::npos);
    }
  }
}
