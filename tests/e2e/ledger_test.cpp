// sigma --spec and steps --spec on a ledger with one value written
// {"solve": true}, and --split (issue 27, items 1 and 3). Checked against
// independent values: the value solved, filled into the ledger and given back
// to `epsilon --spec`, meets the target and (1 − 2·tolerance) of it does not;
// the ledger of the DP-SGD flags' own spec (their --print-spec) solves to
// what `sigma` and `steps` give with the flags; one Laplace release's scale
// meets its closed form; the split's parts, each given back alone, meet their
// shares, their ε add up to at most the whole, and the whole ledger's rows
// are what `epsilon --spec` says of the filled-in ledger.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run_json.hpp"

using dpb::test::check_refused;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::str;
using dpb::test::with;
using Json = nlohmann::json;

namespace {

constexpr double kTolerance = 1e-4;  // the solvers' default --tolerance
const Json kMark = {{"solve", true}};

/// A DP-SGD phase: `steps` Poisson-sampled Gaussian steps at rate q.
Json dp_sgd(double q, const Json& sigma, const Json& steps) {
  return {{"self_composed",
           {{"count", steps},
            {"event",
             {{"poisson_sampled",
               {{"sampling_probability", q},
                {"event", {{"gaussian", {{"noise_multiplier", sigma}}}}}}}}}}}};
}

/// `count` releases of `event`.
Json repeated(const Json& count, const Json& event) {
  return {{"self_composed", {{"count", count}, {"event", event}}}};
}

/// ε of a spec under one accountant at δ, from `epsilon --spec -`.
double epsilon_of_spec(const Json& spec, const std::string& accountant, double delta) {
  const Json doc = json_of(run_dpbudget({"epsilon", "--spec", "-", "--delta", str(delta),
                                         "--accountant", accountant, "--format", "json"},
                                        spec.dump()));
  return doc.at("results").at(0).at("epsilon").get<double>();
}

/// The first result row of a solver on `spec` (stdin).
Json solved_row(const std::vector<std::string>& args, const Json& spec) {
  const Json doc =
      json_of(run_dpbudget(with(args, {"--spec", "-", "--format", "json"}), spec.dump()));
  return doc.at("results").at(0);
}

/// A training run (σ marked), evaluation queries and counts, and with
/// `tuning` a tuning search (which pld does not analyse): the ledger of the
/// issue ("minimise the training sigma given the others").
Json training_ledger(const Json& sigma, bool tuning = true) {
  Json ledger = {
      {"composed",
       {dp_sgd(0.01, sigma, 3000), repeated(50, {{"gaussian", {{"noise_multiplier", 40}}}}),
        repeated(20, {{"laplace", {{"scale", 30}}}})}}};
  if (tuning)
    ledger["composed"].push_back(
        {{"repeat_and_select",
          {{"event", {{"gaussian", {{"noise_multiplier", 8}}}}}, {"mean", 4}, {"shape", 1}}}});
  return ledger;
}

}  // namespace

TEST_CASE(
    "sigma --spec: the sigma found meets the target fed back, (1 - 2 tolerance) of it does "
    "not") {
  for (const char* accountant : {"rdp", "pld"}) {
    CAPTURE(accountant);
    const bool tuning = std::string(accountant) == "rdp";
    const Json row =
        solved_row({"sigma", "--epsilon", "2", "--delta", "1e-5", "--accountant", accountant},
                   training_ledger(kMark, tuning));
    CHECK(row["field"] ==
          "/composed/0/self_composed/event/poisson_sampled/event/gaussian/"
          "noise_multiplier");
    const double sigma = row["noise_multiplier"].get<double>();
    CHECK(row["epsilon"].get<double>() <= 2);
    CHECK(epsilon_of_spec(training_ledger(sigma, tuning), accountant, 1e-5) <= 2);
    CHECK(epsilon_of_spec(training_ledger(sigma * (1 - 2 * kTolerance), tuning), accountant, 1e-5) >
          2);
  }
}

TEST_CASE("a ledger of the flags' own spec solves to what sigma and steps give with the flags") {
  const std::vector<std::string> run = {"-q", "0.01", "--steps", "5000"};
  const Json flags_spec =
      Json::parse(run_dpbudget(with({"epsilon", "--print-spec", "--sigma", "1"}, run)).out);
  // The flags' spec is the DP-SGD phase of this file's ledgers.
  REQUIRE(flags_spec == dp_sgd(0.01, 1, 5000));
  for (const char* accountant : {"rdp", "pld"}) {
    CAPTURE(accountant);
    const Json by_flags =
        json_of(run_dpbudget(with({"sigma", "--epsilon", "1.5", "--delta", "1e-6", "--accountant",
                                   accountant, "--format", "json"},
                                  run)))["results"][0];
    const Json by_spec =
        solved_row({"sigma", "--epsilon", "1.5", "--delta", "1e-6", "--accountant", accountant},
                   dp_sgd(0.01, kMark, 5000));
    CHECK(by_spec["noise_multiplier"] == by_flags["noise_multiplier"]);
    CHECK(by_spec["epsilon"] == by_flags["epsilon"]);
  }
  const Json steps_by_flags =
      json_of(run_dpbudget({"steps", "-q", "0.01", "--sigma", "1.1", "--epsilon", "3", "--delta",
                            "1e-5", "--format", "json"}))["results"][0];
  const Json steps_by_spec =
      solved_row({"steps", "--epsilon", "3", "--delta", "1e-5"}, dp_sgd(0.01, 1.1, kMark));
  CHECK(steps_by_spec["count"] == steps_by_flags["steps"]);
}

TEST_CASE("steps --spec: the count found fits fed back, one more does not") {
  // The training run's steps marked, the evaluation and tuning fixed.
  Json ledger = training_ledger(1.2, /*tuning=*/false);
  ledger["composed"][0] = dp_sgd(0.01, 1.2, kMark);
  for (const char* accountant : {"rdp", "pld"}) {
    CAPTURE(accountant);
    const Json row = solved_row(
        {"steps", "--epsilon", "4", "--delta", "1e-5", "--accountant", accountant}, ledger);
    const auto count = row["count"].get<std::int64_t>();
    Json filled = ledger;
    filled["composed"][0] = dp_sgd(0.01, 1.2, count);
    CHECK(epsilon_of_spec(filled, accountant, 1e-5) <= 4);
    filled["composed"][0] = dp_sgd(0.01, 1.2, count + 1);
    CHECK(epsilon_of_spec(filled, accountant, 1e-5) > 4);
  }
}

TEST_CASE("one Laplace release: the scale found meets b = 1/(epsilon - 2 log(1 - delta))") {
  // docs/mechanisms.md#laplace: ε(δ) = 1/b + 2 log(1 − δ); dp_accounting's
  // class form, whose Laplace field is noise_multiplier.
  const Json ledger = {{"class_name", "LaplaceDpEvent"}, {"noise_multiplier", kMark}};
  const Json row = solved_row(
      {"sigma", "--epsilon", "0.5", "--delta", "1e-3", "--accountant", "composition"}, ledger);
  CHECK(row["field"] == "/noise_multiplier");
  const double exact = 1 / (0.5 - 2 * std::log1p(-1e-3));
  CHECK(row["scale"].get<double>() >= exact * (1 - 1e-12));
  CHECK(row["scale"].get<double>() <= exact * (1 + 2 * kTolerance));
}

TEST_CASE("--print-spec prints the ledger with the value filled in, which meets the target") {
  const auto r =
      run_dpbudget({"sigma", "--spec", "-", "--epsilon", "2", "--delta", "1e-5", "--print-spec"},
                   training_ledger(kMark).dump());
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const Json printed = Json::parse(r.out);
  const Json& value = printed["composed"][0]["self_composed"]["event"]["poisson_sampled"]["event"]
                             ["gaussian"]["noise_multiplier"];
  REQUIRE(value.is_number());
  // The rest of the ledger as given.
  CHECK(printed == training_ledger(value));
  CHECK(epsilon_of_spec(printed, "rdp", 1e-5) <= 2);
  // The table's value is the same double, shown rounded up.
  const Json row =
      solved_row({"sigma", "--epsilon", "2", "--delta", "1e-5"}, training_ledger(kMark));
  CHECK(row["noise_multiplier"].get<double>() >= value.get<double>());
  CHECK(row["noise_multiplier"].get<double>() <= value.get<double>() * (1 + 1e-15));
}

TEST_CASE("--split 0.9,0.05,0.05: each part meets its share alone, the sum meets the whole") {
  // A training run, evaluation queries (Gaussian) and counts (Laplace), each
  // with its noise marked; ε = 8, δ = 1e-5 split 90/5/5.
  const Json parts = Json::array({dp_sgd(0.01, kMark, 3000),
                                  repeated(50, {{"gaussian", {{"noise_multiplier", kMark}}}}),
                                  repeated(20, {{"laplace", {{"scale", kMark}}}})});
  const Json ledger = {{"composed", parts}};
  const std::vector<double> shares = {0.9, 0.05, 0.05};
  const double epsilon = 8, delta = 1e-5;
  const Json doc = json_of(run_dpbudget({"sigma", "--spec", "-", "--split", "0.9,0.05,0.05",
                                         "--epsilon", "8", "--delta", "1e-5", "--format", "json"},
                                        ledger.dump()));
  const Json& rows = doc["results"];
  REQUIRE(rows.size() >= 5);
  double sum = 0;
  Json filled = ledger;
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const Json& row = rows[i];
    CHECK(row["part"] == std::to_string(i + 1));
    CHECK(row["share"] == shares[i]);
    const double target = row["target_epsilon"].get<double>();
    const double part_delta = row["delta"].get<double>();
    // The part's budget is its share of (ε, δ), never more.
    CHECK(target <= shares[i] * epsilon);
    CHECK(target >= shares[i] * epsilon * (1 - 1e-14));
    CHECK(part_delta <= shares[i] * delta);
    CHECK(part_delta >= shares[i] * delta * (1 - 1e-14));
    const double value = row["value"].get<double>();
    // The part alone, filled in, given back at its δ.
    auto part_with = [&](double v) {
      std::string text = parts[i].dump();
      const std::string mark = kMark.dump();
      text.replace(text.find(mark), mark.size(), str(v));
      return Json::parse(text);
    };
    const double fed_back = epsilon_of_spec(part_with(value), "rdp", part_delta);
    CHECK(fed_back <= target);
    CHECK(epsilon_of_spec(part_with(value * (1 - 2 * kTolerance)), "rdp", part_delta) > target);
    sum += fed_back;
    filled["composed"][i] = part_with(value);
  }
  CHECK(sum <= epsilon);
  const Json& total = rows[3];
  CHECK(total["part"] == "sum");
  CHECK(total["bound"] == "upper");
  CHECK(total["epsilon"].get<double>() >= sum * (1 - 1e-15));
  CHECK(total["epsilon"].get<double>() <= epsilon);
  CHECK(total["delta"].get<double>() <= delta);
  // The whole ledger's rows: what epsilon --spec says of the filled-in ledger.
  bool saw_pld = false;
  for (std::size_t i = 4; i < rows.size(); ++i) {
    const Json& row = rows[i];
    CHECK(row["part"] == "whole");
    CHECK(row["delta"] == delta);
    const std::string accountant = row["accountant"];
    CAPTURE(accountant);
    CHECK(row["epsilon"].get<double>() == epsilon_of_spec(filled, accountant, delta));
    if (accountant == "pld") {
      saw_pld = true;
      // The tight figure for the same ledger is well below the sum.
      CHECK(row["epsilon"].get<double>() < total["epsilon"].get<double>());
    }
  }
  CHECK(saw_pld);
  // And --print-spec gives the same filled-in ledger.
  const auto printed = run_dpbudget({"sigma", "--spec", "-", "--split", "0.9,0.05,0.05",
                                     "--epsilon", "8", "--delta", "1e-5", "--print-spec"},
                                    ledger.dump());
  REQUIRE_MESSAGE(printed.status == 0, printed.err);
  const Json again = Json::parse(printed.out);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(epsilon_of_spec(again["composed"][i], "rdp", rows[i]["delta"].get<double>()) <=
          rows[i]["target_epsilon"].get<double>());
}

TEST_CASE(
    "a split's sum carries its parts' weakest claim: gdp's central-limit part makes it an "
    "approximation") {
  // A DP-SGD part (gdp: central-limit, an approximation) and plain Gaussian
  // releases (gdp: exact, an upper bound).
  const Json ledger = {
      {"composed",
       {dp_sgd(0.01, kMark, 1000), repeated(100, {{"gaussian", {{"noise_multiplier", kMark}}}})}}};
  const Json doc =
      json_of(run_dpbudget({"sigma", "--spec", "-", "--split", "0.5,0.5", "--epsilon", "2",
                            "--delta", "1e-5", "--accountant", "gdp", "--format", "json"},
                           ledger.dump()));
  const Json& rows = doc["results"];
  CHECK(rows[0]["bound"] == "approximate");
  CHECK(rows[1]["bound"] == "upper");
  CHECK(rows[2]["part"] == "sum");
  CHECK(rows[2]["bound"] == "approximate");
  bool said = false;
  for (const auto& note : doc["notes"])
    said = said || note.get<std::string>().find("not a guarantee") != std::string::npos;
  CHECK(said);
}

TEST_CASE("ledger refusals: one line naming the flag and the JSON path") {
  auto refused = [](const std::vector<std::string>& args, const Json& spec,
                    const std::vector<std::string>& names, int status = dpb::test::kExitBadInput) {
    std::string joined;
    for (const auto& a : args) joined += a + ' ';
    INFO("args: ", joined, " spec: ", spec.dump());
    dpb::test::check_refused(run_dpbudget(args, spec.dump()), names, status);
  };
  const std::vector<std::string> sigma = {"sigma", "--spec",  "-",   "--epsilon",
                                          "1",     "--delta", "1e-5"};
  const std::vector<std::string> steps = {"steps", "--spec",  "-",   "--epsilon",
                                          "1",     "--delta", "1e-5"};
  // No mark, two marks.
  refused(sigma, dp_sgd(0.01, 1, 100), {"--spec", "no value is marked"});
  refused(sigma, {{"composed", {dp_sgd(0.01, kMark, 100), dp_sgd(0.02, kMark, 100)}}},
          {"--spec", "2 values", "/composed/0/", "/composed/1/", "--split"});
  // A field that cannot be solved: its path and what can be.
  refused(
      sigma,
      {{"poisson_sampled",
        {{"sampling_probability", kMark}, {"event", {{"gaussian", {{"noise_multiplier", 1}}}}}}}},
      {"--spec", "/poisson_sampled/sampling_probability", "cannot be solved",
       "gaussian/noise_multiplier", "self_composed/count"});
  refused(sigma, {{"gaussian", {{"noise_multiplier", {{"solve", false}}}}}},
          {"--spec", "/gaussian/noise_multiplier", "{\"solve\": true}"});
  refused(sigma,
          {{"mixture_of_gaussians",
            {{"standard_deviation", 1},
             {"sensitivities", {0, kMark}},
             {"sampling_probs", {0.5, 0.5}}}}},
          {"--spec", "/mixture_of_gaussians/sensitivities/1", "cannot be solved"});
  // The kind the verb solves.
  refused(sigma, dp_sgd(0.01, 1, kMark), {"--spec", "/self_composed/count", "steps --spec"});
  refused(steps, dp_sgd(0.01, kMark, 100), {"--spec", "noise_multiplier", "sigma --spec"});
  // The rest of the ledger is checked as a spec is.
  refused(sigma, dp_sgd(1.5, kMark, 100), {"--spec", "sampling_probability"});
  // A mark where nothing is solved.
  refused({"epsilon", "--spec", "-", "--delta", "1e-5"}, dp_sgd(0.01, kMark, 100),
          {"--spec", "/gaussian/noise_multiplier", "sigma --spec"});
  // Flags beside --spec.
  refused(with(sigma, {"-q", "0.01"}), dp_sgd(0.01, kMark, 100), {"--spec", "-q"});
  refused(with(sigma, {"--accountant", "rdp,pld", "--print-spec"}), dp_sgd(0.01, kMark, 100),
          {"--print-spec", "one --accountant"});
  refused({"sigma", "--spec", "-", "--max-tpr", "0.5", "--at-fpr", "0.1"}, dp_sgd(0.01, kMark, 100),
          {"--max-tpr", "--spec"});
  check_refused({"sigma", "--epsilon", "1", "--delta", "1e-5", "-q", "0.01", "--steps", "100",
                 "--split", "0.5,0.5"},
                {"--split", "only with --spec"});
  check_refused({"sigma", "--epsilon", "1", "--delta", "1e-5", "-q", "0.01", "--steps", "100",
                 "--print-spec"},
                {"--print-spec", "only with --spec"});
  // Splits: shares, parts, marks per part, relations.
  const Json two = {{"composed", {dp_sgd(0.01, kMark, 100), dp_sgd(0.02, kMark, 100)}}};
  refused(with(sigma, {"--split", "0.5,0.4"}), two, {"--split", "sum to 1"});
  refused(with(sigma, {"--split", "0.5,0.25,0.25"}), two, {"--split", "3 shares for 2 parts"});
  refused(with(sigma, {"--split", "0,1"}), two, {"--split", "(0, 1]"});
  refused(with(sigma, {"--split", "1"}), dp_sgd(0.01, kMark, 100), {"--split", "top level"});
  refused(with(sigma, {"--split", "0.5,0.5"}),
          {{"composed", {dp_sgd(0.01, kMark, 100), dp_sgd(0.02, 1, 100)}}},
          {"--split", "part 2 (/composed/1)", "no value"});
  refused(with(sigma, {"--split", "0.5,0.5"}),
          {{"composed",
            {{{"composed", {dp_sgd(0.01, kMark, 100), dp_sgd(0.02, kMark, 100)}}},
             dp_sgd(0.02, kMark, 100)}}},
          {"--split", "part 1 (/composed/0)", "2 values"});
  refused(with(sigma, {"--split", "0.5,0.5"}),
          {{"composed",
            {dp_sgd(0.01, kMark, 100),
             {{"sampled_without_replacement",
               {{"source_dataset_size", 1000},
                {"sample_size", 10},
                {"event", {{"gaussian", {{"noise_multiplier", kMark}}}}}}}}}}},
          {"--split", "relation", "--neighbouring"});
  refused(with(sigma, {"--split", "0.5,0.5", "--epsilon", "2"}), two, {"--split", "one --epsilon"});
}

namespace {

/// The docs/guide.md block between `<!-- BEGIN dpbudget NAME -->` and its END: a
/// console session `$ cat FILE`, the ledger, `$ dpbudget ... --spec FILE ...`
/// and its output. Checks that the command, run on that ledger, prints that
/// output.
void check_guide_block(const std::string& name) {
  CAPTURE(name);
  const std::string guide = dpb::test::slurp(DPBUDGET_GUIDE);
  const std::string begin = "<!-- BEGIN dpbudget " + name + " -->\n";
  const auto from = guide.find(begin);
  REQUIRE(from != std::string::npos);
  const auto to = guide.find("<!-- END dpbudget " + name + " -->", from);
  REQUIRE(to != std::string::npos);
  const std::string block = guide.substr(from + begin.size(), to - from - begin.size());
  const std::string cat = "```console\n$ cat ";
  REQUIRE(block.rfind(cat, 0) == 0);
  const auto file_end = block.find('\n', cat.size());
  const std::string file = block.substr(cat.size(), file_end - cat.size());
  const auto command_at = block.find("\n$ dpbudget ", file_end);
  REQUIRE(command_at != std::string::npos);
  const std::string ledger = block.substr(file_end + 1, command_at - file_end);
  const auto command_end = block.find('\n', command_at + 1);
  const std::string command = block.substr(command_at + 3, command_end - command_at - 3);
  std::vector<std::string> args;
  std::istringstream words(command.substr(std::string("dpbudget ").size()));
  for (std::string w; words >> w;) args.push_back(w == file ? "-" : w);
  const auto r = run_dpbudget(args, ledger);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(block.substr(command_end + 1) == r.out + "```\n");
}

}  // namespace

TEST_CASE("docs/guide.md: the ledger examples are this binary's output") {
  check_guide_block("sigma --spec");
  check_guide_block("sigma --split");
}
