// The ledger through the binary (docs/ledger.md): the officer's example of
// issue 44 entered release by release, the planned total against
// `epsilon --spec` on `ledger-export` (to the bit, every accountant), the
// third run fitting the planned total but not the adaptive filter, a release
// that does not fit refused with the file unchanged, voids, and bad input.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "e2e/run.hpp"
#include "e2e/run_json.hpp"
#include "support/temp_file.hpp"

using namespace dpb::test;

namespace dataset_ledger_e2e {

/// README "Exit status" (written out, not taken from src/).
constexpr int kOver = 1, kUsage = 2, kUnavailable = 7;

/// A ledger file path for this process, removed on scope exit.
struct LedgerFile {
  std::string path;
  explicit LedgerFile(const std::string& name)
      : path("/tmp/dpbudget_test_" + std::to_string(::getpid()) + "_" + name + ".ledger") {
    std::remove(path.c_str());
  }
  ~LedgerFile() { std::remove(path.c_str()); }
  LedgerFile(const LedgerFile&) = delete;
  LedgerFile& operator=(const LedgerFile&) = delete;
};

const char* kLaplaceCounts =
    R"({"self_composed": {"count": 20, "event": {"laplace": {"scale": 10}}}})";
const char* kGaussianReleases =
    R"({"self_composed": {"count": 5, "event": {"gaussian": {"noise_multiplier": 20}}}})";

/// The officer's four releases (issue 44), in order.
void add_officer_releases(const std::string& ledger, const TempFile& counts,
                          const TempFile& gaussians) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--name", "run-a", "-q", "0.01", "--sigma", "1.1", "--steps", "10000"},
           {"--name", "run-b", "-q", "0.02", "--sigma", "1.5", "--steps", "2000"},
           {"--name", "counts", "--spec", counts.path},
           {"--name", "gaussians", "--spec", gaussians.path}}) {
    std::vector<std::string> cmd = {"ledger-add", "--ledger", ledger};
    cmd.insert(cmd.end(), args.begin(), args.end());
    const Run r = run_dpbudget(cmd);
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
  LedgerFile ledger("officer");
  const TempFile counts("ledger_counts.json", kLaplaceCounts);
  const TempFile gaussians("ledger_gaussians.json", kGaussianReleases);
  REQUIRE(
      run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "10", "--delta", "1e-6"})
          .status == 0);
  struct stat st {};
  REQUIRE(::stat(ledger.path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  add_officer_releases(ledger.path, counts, gaussians);

  const Run exported = run_dpbudget({"ledger-export", "--ledger", ledger.path});
  REQUIRE(exported.status == 0);
  const TempFile spec("ledger_export.json", exported.out);
  const auto status = json_of(run_dpbudget(
      {"ledger-status", "--ledger", ledger.path, "--accountant", "all", "--format", "json"}));
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
    LedgerFile ledger("adaptive");
    REQUIRE(
        run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "10", "--delta", "1e-6"})
            .status == 0);
    add_officer_releases(ledger.path, counts, gaussians);
    const std::string before = slurp(ledger.path);
    std::vector<std::string> cmd = {"ledger-add", "--ledger", ledger.path};
    cmd.insert(cmd.end(), third.begin(), third.end());
    const Run r = run_dpbudget(cmd);
    CHECK(r.status == kOver);
    CHECK(r.err.find("Renyi filter") != std::string::npos);
    CHECK(r.err.find("nothing recorded") != std::string::npos);
    CHECK(slurp(ledger.path) == before);
  }
  // planned: every release fixed in advance; the composition decides.
  LedgerFile ledger("planned");
  REQUIRE(run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "10", "--delta",
                        "1e-6", "--planned"})
              .status == 0);
  add_officer_releases(ledger.path, counts, gaussians);
  std::vector<std::string> cmd = {"ledger-add", "--ledger", ledger.path, "--format", "json"};
  cmd.insert(cmd.end(), third.begin(), third.end());
  const Run r = run_dpbudget(cmd);
  REQUIRE(r.status == 0);
  const auto added = json_of(r).at("results").at(0);
  CHECK(added.at("verdict") == "recorded");
  CHECK(added.at("release_epsilon_rdp").get<double>() == doctest::Approx(4.7246).epsilon(1e-3));
  // Composed properly the total is under 10, where naive addition of the
  // four releases' 7.28 and this run's 4.72 (12 > 10) would have refused it.
  const auto status = json_of(run_dpbudget(
      {"ledger-status", "--ledger", ledger.path, "--accountant", "pld", "--format", "json"}));
  const double pld = planned_epsilon(status, "pld");
  CHECK(pld < 10);
  CHECK(7.2826 + added.at("release_epsilon_rdp").get<double>() > 10);
  // A fourth run does not fit: exit 1, the file byte for byte as before.
  const std::string before = slurp(ledger.path);
  const Run fourth = run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "run-d", "-q",
                                   "0.01", "--sigma", "1.1", "--steps", "10000"});
  CHECK(fourth.status == kOver);
  CHECK(fourth.err.find("over by") != std::string::npos);
  CHECK(slurp(ledger.path) == before);
  // --dry-run answers the same question and records nothing.
  const Run dry = run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "small",
                                "--dry-run", "--spec", gaussians.path});
  CHECK(dry.status == 0);
  CHECK(slurp(ledger.path) == before);
  CHECK(run_dpbudget({"ledger-verify", "--ledger", ledger.path}).status == 0);
}

TEST_CASE("ledger: a void takes a release out of the totals and stays in the history") {
  LedgerFile ledger("void");
  const TempFile gaussians("ledger_gaussians_v.json", kGaussianReleases);
  REQUIRE(
      run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "4", "--delta", "1e-6"})
          .status == 0);
  for (const char* name : {"g1", "g2"})
    REQUIRE(run_dpbudget(
                {"ledger-add", "--ledger", ledger.path, "--name", name, "--spec", gaussians.path})
                .status == 0);
  const double two = planned_epsilon(
      json_of(run_dpbudget({"ledger-status", "--ledger", ledger.path, "--format", "json"})), "rdp");
  REQUIRE(run_dpbudget({"ledger-void", "--ledger", ledger.path, "--entry", "2", "--reason",
                        "aborted before release"})
              .status == 0);
  const double one = planned_epsilon(
      json_of(run_dpbudget({"ledger-status", "--ledger", ledger.path, "--format", "json"})), "rdp");
  CHECK(one < two);
  const auto history =
      json_of(run_dpbudget({"ledger-history", "--ledger", ledger.path, "--format", "json"}));
  REQUIRE(history.at("results").size() == 3);
  CHECK(history.at("results").at(1).at("voided_by") == 3);
  CHECK(history.at("results").at(2).at("reason") == "aborted before release");
  // Voiding it again, or a void, is refused.
  CHECK(run_dpbudget({"ledger-void", "--ledger", ledger.path, "--entry", "2", "--reason", "x"})
            .status == kUsage);
  CHECK(run_dpbudget({"ledger-void", "--ledger", ledger.path, "--entry", "3", "--reason", "x"})
            .status == kUsage);
  CHECK(run_dpbudget({"ledger-verify", "--ledger", ledger.path}).status == 0);
}

TEST_CASE("ledger: bad input and unusable files get one line and leave the ledger unchanged") {
  LedgerFile ledger("bad");
  REQUIRE(
      run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "10", "--delta", "1e-6"})
          .status == 0);
  // Never replaced.
  Run r =
      run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "10", "--delta", "1e-6"});
  CHECK(r.status == kUnavailable);
  CHECK(r.out.empty());
  const std::string before = slurp(ledger.path);
  // Another relation than the ledger's.
  r = run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "x", "--sampling",
                    "without-replacement", "--dataset-size", "60000", "--batch-size", "256",
                    "--sigma", "1", "--steps", "100"});
  CHECK(r.status == kUsage);
  CHECK(r.err.find("replace_one") != std::string::npos);
  // A per-record release in a per-user ledger (a per-user one in a per-record
  // ledger is accepted: it covers any change of one user's records).
  {
    LedgerFile users("users");
    REQUIRE(run_dpbudget({"ledger-init", "--ledger", users.path, "--epsilon", "10", "--delta",
                          "1e-6", "--unit", "user"})
                .status == 0);
    const std::string users_before = slurp(users.path);
    r = run_dpbudget({"ledger-add", "--ledger", users.path, "--name", "x", "-q", "0.01", "--sigma",
                      "1", "--steps", "100"});
    CHECK(r.status == kUsage);
    CHECK(r.err.find("--unit") != std::string::npos);
    CHECK(slurp(users.path) == users_before);
    CHECK(run_dpbudget({"ledger-add", "--ledger", users.path, "--name", "y", "-q", "0.01",
                        "--sigma", "2", "--steps", "100", "--records-per-user", "3"})
              .status == 0);
  }
  // A release the Renyi filter cannot take.
  const TempFile ed("ledger_ed.json", R"({"epsilon_delta": {"epsilon": 1, "delta": 1e-7}})");
  r = run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "x", "--spec", ed.path});
  CHECK(r.status == kUsage);
  CHECK(r.err.find("--planned, whose accountants rdp, composition, pld bound it") !=
        std::string::npos);
  CHECK(slurp(ledger.path) == before);
  // Missing file, a file that is no ledger, a wrong key.
  CHECK(run_dpbudget({"ledger-status", "--ledger", ledger.path + ".missing"}).status ==
        kUnavailable);
  const TempFile text("ledger_text.txt", "not a database\n");
  r = run_dpbudget({"ledger-status", "--ledger", text.path});
  CHECK(r.status == kUnavailable);
  CHECK(r.err.find("dpbudget: error:") == 0);
  const TempFile key("ledger_key", "0123456789abcdef0123456789abcdef");
  CHECK(run_dpbudget({"ledger-add", "--ledger", ledger.path, "--key-file", key.path, "--name", "x",
                      "-q", "0.01", "--sigma", "1", "--steps", "10"})
            .status == kUnavailable);
  CHECK(slurp(ledger.path) == before);
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
  LedgerFile ledger("left");
  REQUIRE(
      run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "3", "--delta", "1e-6"})
          .status == 0);
  const TempFile g("ledger_left_g.json", R"({"gaussian": {"noise_multiplier": 4}})");
  for (const char* name : {"a", "b"})
    REQUIRE(run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", name, "--spec", g.path})
                .status == 0);
  const TempFile next("ledger_left_next.json",
                      R"({"self_composed": {"count": {"solve": true}, "event": )"
                      R"({"gaussian": {"noise_multiplier": 10}}}})");
  const auto status = json_of(run_dpbudget(
      {"ledger-status", "--ledger", ledger.path, "--next-spec", next.path, "--format", "json"}));
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
  const Run exported = run_dpbudget({"ledger-export", "--ledger", ledger.path});
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
  LedgerFile ledger("gdp");
  REQUIRE(run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "2", "--delta", "1e-6",
                        "--filter", "gdp"})
              .status == 0);
  const TempFile g4("ledger_gdp4.json", R"({"gaussian": {"noise_multiplier": 4}})");
  const TempFile g3(
      "ledger_gdp3.json",
      R"({"self_composed": {"count": 2, "event": {"gaussian": {"noise_multiplier": 6}}}})");
  REQUIRE(run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "a", "--spec", g4.path})
              .status == 0);
  REQUIRE(run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "b", "--spec", g3.path})
              .status == 0);
  // A subsampled Gaussian has only a central-limit mu: refused, nothing written.
  const std::string before = slurp(ledger.path);
  const Run sgd = run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "c", "-q", "0.01",
                                "--sigma", "1", "--steps", "10"});
  CHECK(sgd.status == kUsage);
  CHECK(sgd.err.find("Gaussian") != std::string::npos);
  CHECK(slurp(ledger.path) == before);
  // The filter needs the epsilon of sqrt(1/16 + 2/36)-GDP at 1e-6, which
  // `dpbudget gdp --mu` states independently (Dong, Roth & Su 2022, Cor. 2.13).
  const double mu = std::sqrt(1.0 / 16 + 2.0 / 36);
  const auto status =
      json_of(run_dpbudget({"ledger-status", "--ledger", ledger.path, "--format", "json"}));
  const double needed =
      std::stod(row_value(status, "adaptive", "gdp_filter", "filter_needs_epsilon"));
  const auto gdp = json_of(
      run_dpbudget({"gdp", "--mu", std::to_string(mu), "--delta", "1e-6", "--format", "json"}));
  const double direct = gdp.at("results").at(0).at("epsilon").get<double>();
  CHECK(needed >= direct * (1 - 1e-6));
  CHECK(needed == doctest::Approx(direct).epsilon(1e-5));
}

TEST_CASE("ledger: report --ledger states what the dataset has spent in all") {
  LedgerFile ledger("report");
  REQUIRE(run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "10", "--delta",
                        "1e-6", "--dataset", "census 2026"})
              .status == 0);
  REQUIRE(run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "run-a", "-q", "0.01",
                        "--sigma", "1.1", "--steps", "10000"})
              .status == 0);
  const Run recorded = run_dpbudget({"report", "-q", "0.01", "--sigma", "1.1", "--steps", "10000",
                                     "--delta", "1e-6", "--ledger", ledger.path});
  REQUIRE(recorded.status == 0);
  CHECK(recorded.out.find("## The dataset's budget") != std::string::npos);
  CHECK(recorded.out.find("census 2026") != std::string::npos);
  CHECK(recorded.out.find("This release is entry 1 ('run-a'") != std::string::npos);
  CHECK(recorded.out.find("Renyi filter") != std::string::npos);
  // Another run, not recorded: said in a warning.
  const Run other = run_dpbudget({"report", "-q", "0.01", "--sigma", "1.1", "--steps", "5000",
                                  "--delta", "1e-6", "--ledger", ledger.path});
  REQUIRE(other.status == 0);
  CHECK(other.out.find("not recorded in the dataset's ledger") != std::string::npos);
  // --key-file without --ledger does nothing: refused.
  const TempFile key("ledger_report_key", "0123456789abcdef0123456789abcdef");
  CHECK(run_dpbudget({"report", "-q", "0.01", "--sigma", "1.1", "--steps", "10", "--delta", "1e-6",
                      "--key-file", key.path})
            .status == kUsage);
}

TEST_CASE("ledger: a next DP-SGD run's steps or sigma left, as the marked spec of that run gives") {
  LedgerFile ledger("next_run");
  REQUIRE(
      run_dpbudget({"ledger-init", "--ledger", ledger.path, "--epsilon", "10", "--delta", "1e-6"})
          .status == 0);
  REQUIRE(run_dpbudget({"ledger-add", "--ledger", ledger.path, "--name", "a", "-q", "0.01",
                        "--sigma", "1.1", "--steps", "10000"})
              .status == 0);
  const auto flags = json_of(run_dpbudget({"ledger-status", "--ledger", ledger.path, "-q", "0.01",
                                           "--sigma", "1.1", "--format", "json"}));
  const TempFile marked("ledger_next_marked.json",
                        R"({"self_composed": {"count": {"solve": true}, "event": )"
                        R"({"poisson_sampled": {"sampling_probability": 0.01, "event": )"
                        R"({"gaussian": {"noise_multiplier": 1.1}}}}}})");
  const auto spec = json_of(run_dpbudget(
      {"ledger-status", "--ledger", ledger.path, "--next-spec", marked.path, "--format", "json"}));
  for (const char* basis : {"left_adaptive", "left_planned"}) {
    CAPTURE(basis);
    const std::string accountant = std::string(basis) == "left_adaptive" ? "renyi_filter" : "rdp";
    const std::string steps = row_value(flags, basis, accountant, "steps");
    CHECK(steps == row_value(spec, basis, accountant, "count"));
    CHECK(std::stol(steps) > 1000);
  }
  // Both or neither of --steps and --sigma: refused, naming them.
  const Run both = run_dpbudget(
      {"ledger-status", "--ledger", ledger.path, "-q", "0.01", "--sigma", "1", "--steps", "10"});
  CHECK(both.status == kUsage);
  CHECK(both.err.find("leave one out") != std::string::npos);
  // A next run ledger-add would refuse (another relation) is refused here too.
  const Run shuffled =
      run_dpbudget({"ledger-status", "--ledger", ledger.path, "--sampling", "shuffle",
                    "--dataset-size", "1000", "--batch-size", "10", "--sigma", "1"});
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
