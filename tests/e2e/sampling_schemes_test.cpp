// --sampling shuffle | balls-in-bins, --participations and --records-per-user
// through the binary (issue 15, docs/sampling.md#schemes): what every output states, the
// Poisson estimate beside a shuffled run, solvers on the upper bound, the
// refusals, the Poisson note.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run.hpp"
#include "run_json.hpp"

using namespace dpb::test;

namespace {

/// t = 100 steps per epoch, 4 epochs.
const std::vector<std::string> kShuffled = {"--sampling",     "shuffle", "--sigma",      "1.2",
                                            "--dataset-size", "6000",    "--batch-size", "60",
                                            "--epochs",       "4"};

/// `verb`, then `base`, then `more`.
std::vector<std::string> cmd(const std::string& verb, const std::vector<std::string>& base,
                             const std::vector<std::string>& more) {
  std::vector<std::string> out{verb};
  out.insert(out.end(), base.begin(), base.end());
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

double number(const nlohmann::json& j) { return j.get<double>(); }

}  // namespace

TEST_CASE(
    "shuffle: states scheme, relation, t and E, the Poisson estimate equals --sampling poisson") {
  for (const char* acc : {"rdp", "gdp", "composition"}) {
    INFO("accountant ", std::string(acc));
    const auto doc = json_of(run_dpbudget(
        cmd("epsilon", kShuffled, {"--delta", "1e-5", "--accountant", acc, "--format", "json"})));
    const auto& in = doc["inputs"];
    CHECK(in["sampling"] == "shuffle");
    CHECK(in["steps_per_epoch"] == 100);
    CHECK(in["accounted_epochs"] == 4);
    const auto& rows = doc["results"];
    REQUIRE(rows.size() >= 2);
    CHECK(rows[0]["sampling"] == "shuffle");
    CHECK(rows[0]["neighbouring"] == "replace_special");
    CHECK(rows[0]["bound"] == "upper");
    // The estimate row is exactly what --sampling poisson prints for q = B/N.
    const auto& estimate = rows.back();
    CHECK(estimate["sampling"] == "poisson");
    CHECK(estimate["bound"] == "estimate");
    CHECK(estimate["neighbouring"] == "add_remove");
    std::vector<std::string> poisson_run = kShuffled;
    poisson_run[1] = "poisson";
    const auto poisson = json_of(run_dpbudget(
        cmd("epsilon", poisson_run, {"--delta", "1e-5", "--accountant", acc, "--format", "json"})));
    CHECK(number(estimate["epsilon"]) == number(poisson["results"][0]["epsilon"]));
    // The shuffled upper bound is above the Poisson estimate here (the
    // composition accountant's amplified steps are too loose to show it).
    if (std::string(acc) != "composition")
      CHECK(number(rows[0]["epsilon"]) > number(estimate["epsilon"]));
  }
}

TEST_CASE("shuffle: every solver solves on the upper bound") {
  // sigma: the σ found gives ε ≤ target for the shuffled run, i.e. for 4
  // Gaussian releases under replace_special.
  const auto sigma = json_of(run_dpbudget(cmd(
      "sigma",
      {"--sampling", "shuffle", "--dataset-size", "6000", "--batch-size", "60", "--epochs", "4"},
      {"--epsilon", "2", "--delta", "1e-5", "--accountant", "gdp", "--format", "json"})));
  const auto& row = sigma["results"][0];
  CHECK(row["neighbouring"] == "replace_special");
  CHECK(number(row["epsilon"]) <= 2);
  const double found = number(row["noise_multiplier"]);
  // GDP of 4 Gaussians at σ: μ = 2/σ; ε(μ) at the found σ is the target
  // within the solver's tolerance, so at σ(1 − 1e-3) it is over.
  const auto over = json_of(
      run_dpbudget({"epsilon", "--sampling", "shuffle", "--dataset-size", "6000", "--batch-size",
                    "60", "--epochs", "4", "--sigma", std::to_string(found * (1 - 1e-3)), "--delta",
                    "1e-5", "--accountant", "gdp", "--format", "json"}));
  CHECK(number(over["results"][0]["epsilon"]) > 2);
  // steps: whole epochs of the upper bound.
  const auto steps = json_of(run_dpbudget(cmd(
      "steps",
      {"--sampling", "shuffle", "--dataset-size", "6000", "--batch-size", "60", "--sigma", "1.2"},
      {"--epsilon", "8", "--delta", "1e-5", "--accountant", "gdp", "--format", "json"})));
  const auto largest = steps["results"][0]["steps"].get<long long>();
  const auto at = json_of(run_dpbudget(cmd(
      "epsilon",
      {"--sampling", "shuffle", "--dataset-size", "6000", "--batch-size", "60", "--sigma", "1.2"},
      {"--steps", std::to_string(largest + 1), "--delta", "1e-5", "--accountant", "gdp", "--format",
       "json"})));
  CHECK(number(at["results"][0]["epsilon"]) > 8);
  CHECK(largest % 100 == 0);  // a new epoch starts at the next step
}

TEST_CASE("shuffle: the budget gate reads the upper bounds, not the estimate or lower rows") {
  // composition's Poisson estimate (hundreds) is far above its shuffled upper
  // bound here; the gate at 60 passes on the upper bounds alone.
  const auto r = run_dpbudget(cmd("epsilon", kShuffled,
                                  {"--delta", "1e-5", "--accountant", "composition",
                                   "--max-epsilon", "60", "--format", "json"}));
  const auto doc = json_of(r);
  CHECK(number(doc["results"].back()["epsilon"]) > 60);
  CHECK(doc["results"].back()["bound"] == "estimate");
  CHECK(r.err.find("budget exceeded") == std::string::npos);
  // At 1 the upper bound itself is over: exit 1, naming it.
  const auto over =
      run_dpbudget(cmd("epsilon", kShuffled,
                       {"--delta", "1e-5", "--accountant", "composition", "--max-epsilon", "1"}));
  CHECK(over.status == 1);
  CHECK(over.err.find("budget exceeded: row 1 ") != std::string::npos);
  CHECK(over.err.find("row 2") == std::string::npos);
}

TEST_CASE("balls-in-bins and users: what the output says") {
  const auto doc =
      json_of(run_dpbudget({"epsilon", "--sampling", "balls-in-bins", "--participations", "2",
                            "--sigma", "2", "--dataset-size", "1000", "--batch-size", "100",
                            "--steps", "25", "--delta", "1e-5", "--format", "json"}));
  CHECK(doc["inputs"]["sampling"] == "balls_in_bins");
  CHECK(doc["inputs"]["steps_per_epoch"] == 10);
  CHECK(doc["inputs"]["accounted_epochs"] == 3);
  CHECK(doc["inputs"]["participations"] == 2);
  CHECK(doc["results"][0]["neighbouring"] == "add_remove");
  CHECK(doc["results"].back()["bound"] == "estimate");

  const auto user =
      json_of(run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100",
                            "--records-per-user", "3", "--delta", "1e-5", "--format", "json"}));
  CHECK(user["inputs"]["records_per_user"] == 3);
  CHECK(user["inputs"]["unit"] == "user-level, 3 records per user");
  const auto text = run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100",
                                  "--records-per-user", "3", "--delta", "1e-5"});
  CHECK(text.out.find("user-level, 3 records per user") != std::string::npos);
}

TEST_CASE("--epochs with the default Poisson sampling: one note on stderr naming --sampling") {
  // (--accountant named: the default's own note is another line.)
  const auto r = run_dpbudget({"epsilon", "--sigma", "1", "--dataset-size", "6000", "--batch-size",
                               "60", "--epochs", "2", "--delta", "1e-5", "--accountant", "rdp"});
  CHECK(r.status == 0);
  CHECK(r.err.find("Poisson") != std::string::npos);
  CHECK(r.err.find("--sampling") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  // Not when the scheme was said, nor without --epochs.
  CHECK(run_dpbudget({"epsilon", "--sampling", "poisson", "--sigma", "1", "--dataset-size", "6000",
                      "--batch-size", "60", "--epochs", "2", "--delta", "1e-5", "--accountant",
                      "rdp"})
            .err.empty());
  CHECK(run_dpbudget({"epsilon", "--sigma", "1", "-q", "0.01", "--steps", "200", "--delta", "1e-5",
                      "--accountant", "rdp"})
            .err.empty());
}

TEST_CASE("sampling schemes: bad combinations get one line and exit 2") {
  const std::vector<std::string> tail = {"--sigma", "1", "--steps", "10", "--delta", "1e-5"};
  check_refused(run_dpbudget(cmd("epsilon", {"--sampling", "balls-in-bins", "-q", "0.01"}, tail)),
                {"--sampling", "--dataset-size", "--batch-size"});
  check_refused(
      run_dpbudget(cmd("epsilon", {"--sampling", "balls-in-bins", "--dataset-size", "100"}, tail)),
      {"--batch-size"});
  check_refused(run_dpbudget(cmd("epsilon",
                                 {"--sampling", "balls-in-bins", "--participations", "20",
                                  "--dataset-size", "100", "--batch-size", "10"},
                                 tail)),
                {"--participations", "10"});
  check_refused(
      run_dpbudget(cmd("epsilon",
                       {"--sampling", "shuffle", "--dataset-size", "100", "--batch-size", "200"},
                       tail)),
      {"--batch-size", "--dataset-size"});
  check_refused(run_dpbudget(cmd("epsilon", {"--records-per-user", "0", "-q", "0.1"}, tail)),
                {"--records-per-user"});
  check_refused(run_dpbudget(cmd("epsilon", {"--participations", "2", "-q", "0.1"}, tail)),
                {"--participations", "balls-in-bins"});
  check_refused(run_dpbudget(cmd("epsilon",
                                 {"--sampling", "without-replacement", "--records-per-user", "2",
                                  "--dataset-size", "100", "--batch-size", "10"},
                                 tail)),
                {"--records-per-user", "without-replacement"});
  // amplify has no theorem for these schemes.
  check_refused(run_dpbudget({"amplify", "--epsilon", "1", "--delta", "1e-6", "-q", "0.01",
                              "--sampling", "shuffle"}),
                {"--sampling"});
  // A shuffled spec without a relation that keeps the dataset size.
  check_refused(run_dpbudget({"epsilon", "--spec", "-", "--delta", "1e-5"},
                             R"({"shuffled": {"num_steps": 10, "event": {"gaussian": )"
                             R"({"noise_multiplier": 1}}}})"),
                {"replace_special"});
  // The same spec under --neighbouring replace-special: one Gaussian.
  const auto ok = json_of(run_dpbudget(
      {"epsilon", "--spec", "-", "--neighbouring", "replace-special", "--delta", "1e-5",
       "--accountant", "gdp", "--format", "json"},
      R"({"shuffled": {"num_steps": 10, "event": {"gaussian": {"noise_multiplier": 1}}}})"));
  CHECK(ok["results"][0]["mu"].get<double>() == doctest::Approx(1.0).epsilon(1e-12));
}
