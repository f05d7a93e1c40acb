// The ledger through the binary (docs/ledger.md): the officer's example of
// issue 44 entered release by release, the planned total against
// `epsilon --spec` on `ledger-export` (to the bit, every accountant), the
// third run fitting the planned total but not the adaptive filter, a release
// that does not fit refused with the ledger unchanged, voids, and bad input.
// The same cases run on each store (tests/support/ledger_target.hpp:
// DPBUDGET_TEST_LEDGER_STORE=sqlite or postgresql; CTest runs them as "e2e: "
// and "e2e-postgresql: "); what only a file has is marked "SQLite only".
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "e2e/run.hpp"
#include "e2e/run_json.hpp"
#include "support/ledger_target.hpp"
#include "support/temp_file.hpp"

using namespace dpb::test;

namespace dataset_ledger_e2e {

/// README "Exit status" (written out, not taken from src/).
constexpr int kOver = 1, kUsage = 2, kUnavailable = 7;

const char* kLaplaceCounts =
    R"({"self_composed": {"count": 20, "event": {"laplace": {"scale": 10}}}})";
const char* kGaussianReleases =
    R"({"self_composed": {"count": 5, "event": {"gaussian": {"noise_multiplier": 20}}}})";

/// The officer's four releases (issue 44), in order.
void add_officer_releases(const LedgerTarget& ledger, const TempFile& counts,
                          const TempFile& gaussians) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--name", "run-a", "-q", "0.01", "--sigma", "1.1", "--steps", "10000"},
           {"--name", "run-b", "-q", "0.02", "--sigma", "1.5", "--steps", "2000"},
           {"--name", "counts", "--spec", counts.path},
           {"--name", "gaussians", "--spec", gaussians.path}}) {
    const Run r = run_dpbudget(with(with({"ledger-add"}, ledger.args), args));
    CAPTURE(r.err);
    REQUIRE(r.status == 0);
  }
}

double planned_epsilon(const nlohmann::json& status, const std::string& accountant) {
  for (const auto& row : status.at("results"))
    if (row.at("basis") == "planned" && row.at("accountant") == accountant)
      return row.at("epsilon").get<double>();
  FAIL("no planned row for " << accountant);
  return 0;
}

}  // namespace dataset_ledger_e2e

using namespace dataset_ledger_e2e;

TEST_CASE("ledger: the officer's example, planned total equal to epsilon --spec on export") {
  LedgerTarget ledger("officer");
  const TempFile counts("ledger_counts.json", kLaplaceCounts);
  const TempFile gaussians("ledger_gaussians.json", kGaussianReleases);
  REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "10", "--delta", "1e-6"}, ledger.args))
              .status == 0);
  // Only its owner may read it.
  if (ledger.store == StoreUnderTest::sqlite) {  // SQLite only: the file's mode
    struct stat st {};
    REQUIRE(::stat(ledger.path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
  } else {  // PostgreSQL: a role granted nothing (the reader, here) cannot read it
    const Run other = run_dpbudget(with({"ledger-status"}, ledger.as_role("READER")));
    CAPTURE(other.err);
    CHECK(other.status == kUnavailable);
    CHECK(other.out.empty());
    CHECK(other.err.find("permission denied") != std::string::npos);
  }
  add_officer_releases(ledger, counts, gaussians);

  const Run exported = run_dpbudget(with({"ledger-export"}, ledger.args));
  REQUIRE(exported.status == 0);
  const TempFile spec("ledger_export.json", exported.out);
  const auto status = json_of(run_dpbudget(
      with({"ledger-status", "--accountant", "all", "--format", "json"}, ledger.args)));
  // pld's interval as fine as the budget needs (docs/ledger.md#planned-precision):
  // status says the tolerance it used, and epsilon --spec with it agrees.
  const std::string tolerance = nlohmann::json(status.at("inputs").at("pld_tolerance")).dump();
  const auto direct = json_of(run_dpbudget({"epsilon", "--spec", spec.path, "--delta", "1e-6",
                                            "--neighbouring", "add-remove", "--accountant", "all",
                                            "--pld-tolerance", tolerance, "--format", "json"}));
  int compared = 0;
  for (const auto& row : direct.at("results")) {
    if (row.at("bound") != "upper" || !row.contains("epsilon")) continue;
    const std::string accountant = row.at("accountant");
    CAPTURE(accountant);
    // The same event and the same question: the same double.
    CHECK(planned_epsilon(status, accountant) == row.at("epsilon").get<double>());
    ++compared;
  }
  CHECK(compared >= 3);  // rdp, pld, composition at least
  // The issue's figures: pld 7.28, rdp 7.79.
  CHECK(planned_epsilon(status, "rdp") == doctest::Approx(7.78692).epsilon(1e-5));
  CHECK(planned_epsilon(status, "pld") == doctest::Approx(7.2826).epsilon(1e-3));
}

TEST_CASE(
    "ledger: a third run fits the planned total but not the adaptive filter, and a fourth is "
    "refused") {
  const TempFile counts("ledger_counts3.json", kLaplaceCounts);
  const TempFile gaussians("ledger_gaussians3.json", kGaussianReleases);
  const std::vector<std::string> third = {"--name",  "run-c", "-q",      "0.01",
                                          "--sigma", "1.1",   "--steps", "6000"};
  {  // adaptive (the default): the Renyi filter refuses it, saying by how much.
    LedgerTarget ledger("adaptive");
    REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "10", "--delta", "1e-6"}, ledger.args))
                .status == 0);
    add_officer_releases(ledger, counts, gaussians);
    const std::string before = ledger.state();
    const Run r = run_dpbudget(with(with({"ledger-add"}, ledger.args), third));
    CHECK(r.status == kOver);
    CHECK(r.err.find("Renyi filter") != std::string::npos);
    CHECK(r.err.find("nothing recorded") != std::string::npos);
    CHECK(ledger.state() == before);
  }
  // planned: every release fixed in advance; the composition decides.
  LedgerTarget ledger("planned");
  REQUIRE(run_dpbudget(
              with({"ledger-init", "--epsilon", "10", "--delta", "1e-6", "--planned"}, ledger.args))
              .status == 0);
  add_officer_releases(ledger, counts, gaussians);
  const Run r = run_dpbudget(with(with({"ledger-add", "--format", "json"}, ledger.args), third));
  REQUIRE(r.status == 0);
  const auto added = json_of(r).at("results").at(0);
  CHECK(added.at("verdict") == "recorded");
  CHECK(added.at("release_epsilon_rdp").get<double>() == doctest::Approx(4.7246).epsilon(1e-3));
  // Composed properly the total is under 10, where naive addition of the
  // four releases' 7.28 and this run's 4.72 (12 > 10) would have refused it.
  const auto status = json_of(run_dpbudget(
      with({"ledger-status", "--accountant", "pld", "--format", "json"}, ledger.args)));
  const double pld = planned_epsilon(status, "pld");
  CHECK(pld < 10);
  CHECK(7.2826 + added.at("release_epsilon_rdp").get<double>() > 10);
  // A fourth run does not fit: exit 1, the file byte for byte as before.
  const std::string before = ledger.state();
  const Run fourth = run_dpbudget(
      with({"ledger-add", "--name", "run-d", "-q", "0.01", "--sigma", "1.1", "--steps", "10000"},
           ledger.args));
  CHECK(fourth.status == kOver);
  CHECK(fourth.err.find("over by") != std::string::npos);
  CHECK(ledger.state() == before);
  // --dry-run answers the same question and records nothing.
  const Run dry = run_dpbudget(
      with({"ledger-add", "--name", "small", "--dry-run", "--spec", gaussians.path}, ledger.args));
  CHECK(dry.status == 0);
  CHECK(ledger.state() == before);
  CHECK(run_dpbudget(with({"ledger-verify"}, ledger.args)).status == 0);
}

TEST_CASE("ledger: a void takes a release out of the totals and stays in the history") {
  LedgerTarget ledger("void");
  const TempFile gaussians("ledger_gaussians_v.json", kGaussianReleases);
  REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "4", "--delta", "1e-6"}, ledger.args))
              .status == 0);
  for (const char* name : {"g1", "g2"})
    REQUIRE(
        run_dpbudget(with({"ledger-add", "--name", name, "--spec", gaussians.path}, ledger.args))
            .status == 0);
  const double two = planned_epsilon(
      json_of(run_dpbudget(with({"ledger-status", "--format", "json"}, ledger.args))), "rdp");
  REQUIRE(run_dpbudget(with({"ledger-void", "--entry", "2", "--reason", "aborted before release"},
                            ledger.args))
              .status == 0);
  const double one = planned_epsilon(
      json_of(run_dpbudget(with({"ledger-status", "--format", "json"}, ledger.args))), "rdp");
  CHECK(one < two);
  const auto history =
      json_of(run_dpbudget(with({"ledger-history", "--format", "json"}, ledger.args)));
  REQUIRE(history.at("results").size() == 3);
  CHECK(history.at("results").at(1).at("voided_by") == 3);
  CHECK(history.at("results").at(2).at("reason") == "aborted before release");
  // Voiding it again, or a void, is refused.
  CHECK(run_dpbudget(with({"ledger-void", "--entry", "2", "--reason", "x"}, ledger.args)).status ==
        kUsage);
  CHECK(run_dpbudget(with({"ledger-void", "--entry", "3", "--reason", "x"}, ledger.args)).status ==
        kUsage);
  CHECK(run_dpbudget(with({"ledger-verify"}, ledger.args)).status == 0);
}

TEST_CASE("ledger: bad input and unusable files get one line and leave the ledger unchanged") {
  LedgerTarget ledger("bad");
  REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "10", "--delta", "1e-6"}, ledger.args))
              .status == 0);
  const std::string before = ledger.state();
  // Never replaced, not even by the same budget.
  Run r = run_dpbudget(with({"ledger-init", "--epsilon", "10", "--delta", "1e-6"}, ledger.args));
  CHECK(r.status == kUnavailable);
  CHECK(r.out.empty());
  CHECK(ledger.state() == before);
  // Another relation than the ledger's.
  r = run_dpbudget(
      with({"ledger-add", "--name", "x", "--sampling", "without-replacement", "--dataset-size",
            "60000", "--batch-size", "256", "--sigma", "1", "--steps", "100"},
           ledger.args));
  CHECK(r.status == kUsage);
  CHECK(r.err.find("replace_one") != std::string::npos);
  // A per-record release in a per-user ledger (a per-user one in a per-record
  // ledger is accepted: it covers any change of one user's records).
  {
    LedgerTarget users("users");
    REQUIRE(
        run_dpbudget(with({"ledger-init", "--epsilon", "10", "--delta", "1e-6", "--unit", "user"},
                          users.args))
            .status == 0);
    const std::string users_before = users.state();
    r = run_dpbudget(with(
        {"ledger-add", "--name", "x", "-q", "0.01", "--sigma", "1", "--steps", "100"}, users.args));
    CHECK(r.status == kUsage);
    CHECK(r.err.find("--unit") != std::string::npos);
    CHECK(users.state() == users_before);
    CHECK(run_dpbudget(with({"ledger-add", "--name", "y", "-q", "0.01", "--sigma", "2", "--steps",
                             "100", "--records-per-user", "3"},
                            users.args))
              .status == 0);
  }
  // A release the Renyi filter cannot take.
  const TempFile ed("ledger_ed.json", R"({"epsilon_delta": {"epsilon": 1, "delta": 1e-7}})");
  r = run_dpbudget(with({"ledger-add", "--name", "x", "--spec", ed.path}, ledger.args));
  CHECK(r.status == kUsage);
  CHECK(r.err.find("--planned, whose accountants rdp, composition, pld bound it") !=
        std::string::npos);
  CHECK(ledger.state() == before);
  // A missing ledger (file; name on the server), a place that holds no
  // ledger (a text file; a database without the schema), a wrong key.
  // ledger-add first: the status after it finds the ledger still missing.
  const std::vector<std::vector<std::string>> verbs = {
      {"ledger-add", "--name", "x", "-q", "0.01", "--sigma", "1", "--steps", "10"},
      {"ledger-status"}};
  for (const auto& where : {ledger.missing(), ledger.not_a_ledger()}) {
    for (const auto& verb : verbs) {
      r = run_dpbudget(with(verb, where));
      CAPTURE(where.back());
      CAPTURE(verb.front());
      CAPTURE(r.err);
      CHECK(r.status == kUnavailable);
      CHECK(r.out.empty());
      CHECK(r.err.find("dpbudget: error:") == 0);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
  }
  const TempFile key("ledger_key", "0123456789abcdef0123456789abcdef");
  CHECK(run_dpbudget(with({"ledger-add", "--key-file", key.path, "--name", "x", "-q", "0.01",
                           "--sigma", "1", "--steps", "10"},
                          ledger.args))
            .status == kUnavailable);
  CHECK(ledger.state() == before);
}

namespace dataset_ledger_e2e {

/// The Renyi filter's default orders, as docs/ledger.md#renyi-filter lists them.
const std::vector<double> kOrders = {1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 12, 16, 20, 32, 64};

std::string row_value(const nlohmann::json& status, const std::string& basis,
                      const std::string& accountant, const std::string& key) {
  for (const auto& row : status.at("results"))
    if (row.at("basis") == basis && row.at("accountant") == accountant && row.contains(key))
      return row.at(key).dump();
  FAIL("no " << basis << " row of " << accountant << " with " << key);
  return "";
}

}  // namespace dataset_ledger_e2e

TEST_CASE(
    "ledger: what is left, under the filter by the closed form and planned by epsilon --spec") {
  LedgerTarget ledger("left");
  REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "3", "--delta", "1e-6"}, ledger.args))
              .status == 0);
  const TempFile g("ledger_left_g.json", R"({"gaussian": {"noise_multiplier": 4}})");
  for (const char* name : {"a", "b"})
    REQUIRE(
        run_dpbudget(with({"ledger-add", "--name", name, "--spec", g.path}, ledger.args)).status ==
        0);
  const TempFile next("ledger_left_next.json",
                      R"({"self_composed": {"count": {"solve": true}, "event": )"
                      R"({"gaussian": {"noise_multiplier": 10}}}})");
  const auto status = json_of(run_dpbudget(
      with({"ledger-status", "--next-spec", next.path, "--format", "json"}, ledger.args)));
  // Under the filter: the largest k with 2 alpha/32 + k alpha/200 <= B(alpha)
  // at some order, B(alpha) = 3 - log(14/1e-6)/(alpha - 1) (Gaussian RDP
  // alpha/(2 sigma^2), Mironov 2017, Prop. 7).
  long expected = 0;
  for (double a : kOrders) {
    const double room = 3 - std::log(14 / 1e-6) / (a - 1) - 2 * a / 32;
    if (room > 0) expected = std::max(expected, static_cast<long>(std::floor(room * 200 / a)));
  }
  REQUIRE(expected > 10);
  const long adaptive = std::stol(row_value(status, "left_adaptive", "renyi_filter", "count"));
  CHECK(adaptive <= expected);
  CHECK(adaptive >= expected - 1);  // the sums are rounded up: the edge may cost one
  // Planned, by rdp: the export plus that many releases fits, one more does not.
  const long planned = std::stol(row_value(status, "left_planned", "rdp", "count"));
  CHECK(planned > adaptive);  // the planned total is the tighter figure
  const Run exported = run_dpbudget(with({"ledger-export"}, ledger.args));
  REQUIRE(exported.status == 0);
  const auto with_next = [&](long k) {
    nlohmann::json spec = nlohmann::json::parse(exported.out);
    spec["composed"].push_back(
        {{"self_composed", {{"count", k}, {"event", {{"gaussian", {{"noise_multiplier", 10}}}}}}}});
    const TempFile file("ledger_left_spec.json", spec.dump());
    const auto r = json_of(run_dpbudget({"epsilon", "--spec", file.path, "--delta", "1e-6",
                                         "--accountant", "rdp", "--format", "json"}));
    return r.at("results").at(0).at("epsilon").get<double>();
  };
  CHECK(with_next(planned) <= 3);
  CHECK(with_next(planned + 1) > 3);
}

TEST_CASE("ledger: the GDP filter takes Gaussian releases and sums their mu^2") {
  LedgerTarget ledger("gdp");
  REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "2", "--delta", "1e-6", "--filter", "gdp"},
                            ledger.args))
              .status == 0);
  const TempFile g4("ledger_gdp4.json", R"({"gaussian": {"noise_multiplier": 4}})");
  const TempFile g3(
      "ledger_gdp3.json",
      R"({"self_composed": {"count": 2, "event": {"gaussian": {"noise_multiplier": 6}}}})");
  REQUIRE(
      run_dpbudget(with({"ledger-add", "--name", "a", "--spec", g4.path}, ledger.args)).status ==
      0);
  REQUIRE(
      run_dpbudget(with({"ledger-add", "--name", "b", "--spec", g3.path}, ledger.args)).status ==
      0);
  // A subsampled Gaussian has only a central-limit mu: refused, nothing written.
  const std::string before = ledger.state();
  const Run sgd = run_dpbudget(with(
      {"ledger-add", "--name", "c", "-q", "0.01", "--sigma", "1", "--steps", "10"}, ledger.args));
  CHECK(sgd.status == kUsage);
  CHECK(sgd.err.find("Gaussian") != std::string::npos);
  CHECK(ledger.state() == before);
  // The filter needs the epsilon of sqrt(1/16 + 2/36)-GDP at 1e-6, which
  // `dpbudget gdp --mu` states independently (Dong, Roth & Su 2022, Cor. 2.13).
  const double mu = std::sqrt(1.0 / 16 + 2.0 / 36);
  const auto status =
      json_of(run_dpbudget(with({"ledger-status", "--format", "json"}, ledger.args)));
  const double needed =
      std::stod(row_value(status, "adaptive", "gdp_filter", "filter_needs_epsilon"));
  const auto gdp = json_of(
      run_dpbudget({"gdp", "--mu", std::to_string(mu), "--delta", "1e-6", "--format", "json"}));
  const double direct = gdp.at("results").at(0).at("epsilon").get<double>();
  CHECK(needed >= direct * (1 - 1e-6));
  CHECK(needed == doctest::Approx(direct).epsilon(1e-5));
}

TEST_CASE("ledger: report --ledger states what the dataset has spent in all") {
  LedgerTarget ledger("report");
  REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "10", "--delta", "1e-6", "--dataset",
                             "census 2026"},
                            ledger.args))
              .status == 0);
  REQUIRE(run_dpbudget(with({"ledger-add", "--name", "run-a", "-q", "0.01", "--sigma", "1.1",
                             "--steps", "10000"},
                            ledger.args))
              .status == 0);
  const Run recorded = run_dpbudget(
      with({"report", "-q", "0.01", "--sigma", "1.1", "--steps", "10000", "--delta", "1e-6"},
           ledger.args));
  REQUIRE(recorded.status == 0);
  CHECK(recorded.out.find("## The dataset's budget") != std::string::npos);
  CHECK(recorded.out.find("census 2026") != std::string::npos);
  CHECK(recorded.out.find("This release is entry 1 ('run-a'") != std::string::npos);
  CHECK(recorded.out.find("Renyi filter") != std::string::npos);
  // Another run, not recorded: said in a warning.
  const Run other = run_dpbudget(
      with({"report", "-q", "0.01", "--sigma", "1.1", "--steps", "5000", "--delta", "1e-6"},
           ledger.args));
  REQUIRE(other.status == 0);
  CHECK(other.out.find("not recorded in the dataset's ledger") != std::string::npos);
  // --key-file without --ledger does nothing: refused.
  const TempFile key("ledger_report_key", "0123456789abcdef0123456789abcdef");
  CHECK(run_dpbudget({"report", "-q", "0.01", "--sigma", "1.1", "--steps", "10", "--delta", "1e-6",
                      "--key-file", key.path})
            .status == kUsage);
}

TEST_CASE("ledger: a next DP-SGD run's steps or sigma left, as the marked spec of that run gives") {
  LedgerTarget ledger("next_run");
  REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "10", "--delta", "1e-6"}, ledger.args))
              .status == 0);
  REQUIRE(run_dpbudget(with({"ledger-add", "--name", "a", "-q", "0.01", "--sigma", "1.1", "--steps",
                             "10000"},
                            ledger.args))
              .status == 0);
  const auto flags = json_of(run_dpbudget(
      with({"ledger-status", "-q", "0.01", "--sigma", "1.1", "--format", "json"}, ledger.args)));
  const TempFile marked("ledger_next_marked.json",
                        R"({"self_composed": {"count": {"solve": true}, "event": )"
                        R"({"poisson_sampled": {"sampling_probability": 0.01, "event": )"
                        R"({"gaussian": {"noise_multiplier": 1.1}}}}}})");
  const auto spec = json_of(run_dpbudget(
      with({"ledger-status", "--next-spec", marked.path, "--format", "json"}, ledger.args)));
  for (const char* basis : {"left_adaptive", "left_planned"}) {
    CAPTURE(basis);
    const std::string accountant = std::string(basis) == "left_adaptive" ? "renyi_filter" : "rdp";
    const std::string steps = row_value(flags, basis, accountant, "steps");
    CHECK(steps == row_value(spec, basis, accountant, "count"));
    CHECK(std::stol(steps) > 1000);
  }
  // Both or neither of --steps and --sigma: refused, naming them.
  const Run both = run_dpbudget(
      with({"ledger-status", "-q", "0.01", "--sigma", "1", "--steps", "10"}, ledger.args));
  CHECK(both.status == kUsage);
  CHECK(both.err.find("leave one out") != std::string::npos);
  // A next run ledger-add would refuse (another relation) is refused here too.
  const Run shuffled =
      run_dpbudget(with({"ledger-status", "--sampling", "shuffle", "--dataset-size", "1000",
                         "--batch-size", "10", "--sigma", "1"},
                        ledger.args));
  CHECK(shuffled.status == kUsage);
  CHECK(shuffled.err.find("replace_special") != std::string::npos);
}

TEST_CASE(
    "ledger: a PostgreSQL --ledger is refused in one line without PostgreSQL support (else no "
    "server there)") {
  using namespace dataset_ledger_e2e;
  // Built without -DDPBUDGET_POSTGRESQL: exit 2 saying so; built with it: no
  // server at that socket, exit 7. Either way one line, no file made.
  const Run r =
      run_dpbudget({"ledger-status", "--ledger", "postgresql://u@%2Ftmp%2Fdpbudget_no_server/db",
                    "--ledger-name", "x"});
  CAPTURE(r.err);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  if (r.status == kUsage)
    CHECK(r.err.find("--ledger: names a PostgreSQL server, but this dpbudget was built without "
                     "PostgreSQL support") != std::string::npos);
  else
    CHECK((r.status == kUnavailable && r.err.find("cannot connect") != std::string::npos));
}
