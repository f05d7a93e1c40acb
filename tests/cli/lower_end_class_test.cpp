// Every claimed lower bound is below the truth (issue 42, item 3;
// docs/claims.md#attained-pairs). Every verb that prints a lower end (an interval's
// `lower_end`, a `lower` row, a report's `[lower, upper]`) runs over every way of
// describing a run: run flags, gradient accumulation, user level, adaptive clipping, the
// sampling schemes, schedules, every spec kind, a ledger with a value to solve, and the
// matrix strategies under each participation pattern. Each description carries its
// *truth*: events the test builds itself from what the description says (not from the
// tool's own translation of it) such that the run's true loss is at most the largest of
// their exact losses; their sound upper bounds then bound the run. A row that claims a
// lower bound must stay at or below that; a description with no known truth (adaptive
// clipping's count, user-level balls-in-bins, the banded_matrix_factorization kind) must
// claim accuracy. Each description lists the verbs that refuse it, so the pairs covered
// are exactly the table's; the closing note of issue 42 counts them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/events/event_examples.hpp"
#include "accounting/events/events.hpp"
#include "cli/input/spec_input.hpp"
#include "in_process.hpp"
#include "support/temp_file.hpp"

namespace lower_end_class {

using dpb::EventPtr;
using dpb::Neighbouring;
using dpb::test::run_in_process;
using Json = nlohmann::json;
using Args = std::vector<std::string>;

/// A norm computed here, rounded up by this factor (and a noise multiplier down by it)
/// so that the truth built from it is no smaller than the exact one: far above the few
/// ulps of error of a sum of ten squares.
constexpr double kNormRoundUp = 1 + 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// A number as JSON prints it: "inf" for an infinite one (docs/claims.md#printed-digits).
double value_of(const Json& v) {
  if (v.is_string() && v.get<std::string>() == "inf") return kInf;
  return v.get<double>();
}

/// The run's true loss is at most the largest of the exact losses of `worst_of` (one
/// event for most runs; one per group of records for amplified banded MF). Empty: no
/// truth is known, and the run's lower ends must claim accuracy.
struct Truth {
  std::vector<EventPtr> worst_of;
};
Truth truth(EventPtr e) { return Truth{{std::move(e)}}; }
Truth no_truth() { return Truth{}; }

/// pld's tolerance for the truths below (its default is 1e-3).
constexpr double kTruthPldTolerance = 1e-5;

/// The smallest sound upper bound pld and rdp give one event under `relation` (their
/// defaults: an upper bound holds whatever the grid), for ε at δ, δ at ε, the TPR at an
/// FPR, or the advantage; remembered, as many verbs ask the same truth.
class TruthBounds {
 public:
  enum class Measure { epsilon, delta, tpr, advantage };
  double of(const Truth& t, Neighbouring relation, Measure m, double at) {
    double worst = 0;
    for (const EventPtr& e : t.worst_of) worst = std::max(worst, one(*e, relation, m, at));
    return worst;
  }

 private:
  double one(const dpb::DpEvent& event, Neighbouring relation, Measure m, double at) {
    std::ostringstream key;
    key << dpb::cli::event_to_json(event).dump() << '|' << static_cast<int>(relation) << '|'
        << static_cast<int>(m) << '|' << at;
    const auto found = memo_.find(key.str());
    if (found != memo_.end()) return found->second;
    double best = kInf;
    const bool attack = m == Measure::tpr || m == Measure::advantage;
    for (const char* name : {"pld", "rdp"}) {
      if (attack && std::string(name) != "pld") continue;  // pld's is the tight one
      dpb::AccountantOptions options;
      options.neighbouring = relation;
      // pld's interval 100 times narrower than its default: an upper bound
      // within 1e-5 of the exact value, the truth the checks compare with.
      options.pld.tolerance = kTruthPldTolerance;
      auto accountant = dpb::make_accountant(name, options);
      if (accountant->unsupported_reason(event)) continue;
      accountant->compose(event);
      best = std::min(best, ask(*accountant, m, at));
    }
    memo_[key.str()] = best;
    return best;
  }
  static double ask(const dpb::Accountant& a, Measure m, double at) {
    using dpb::BoundKind;
    switch (m) {
      case Measure::epsilon: {
        const dpb::Guarantee g = a.epsilon(at);
        return g.bound == BoundKind::upper ? g.epsilon : kInf;
      }
      case Measure::delta: {
        const dpb::Guarantee g = a.delta(at);
        return g.bound == BoundKind::upper ? g.delta : kInf;
      }
      case Measure::tpr:
      case Measure::advantage: {
        const std::vector<double> fpr{m == Measure::tpr ? at : 0.5};
        const dpb::AttackBounds b = a.attack_bounds(fpr);
        if (b.bound != BoundKind::upper) return kInf;
        return m == Measure::tpr ? b.tpr.front() : b.advantage;
      }
    }
    return kInf;
  }
  std::map<std::string, double> memo_;
};

TruthBounds& truths() {
  static TruthBounds t;
  return t;
}

Neighbouring relation_of(const Json& row) {
  const std::string n = row.value("neighbouring", "add_remove");
  if (n == "replace_one") return Neighbouring::replace_one;
  if (n == "replace_special") return Neighbouring::replace_special;
  return Neighbouring::add_remove;
}

/// What one test case saw.
struct Tally {
  int pairs = 0;         ///< (verb, description) pairs run
  int lower_bounds = 0;  ///< claimed lower bounds, each checked against a truth
  int accuracy = 0;      ///< rows whose lower end claims accuracy
};

using TruthOf = std::function<Truth(const Json& row)>;

/// Checks every claim of one row against the truth (`truth_of(row)`).
void check_row(const Json& row, const TruthOf& truth_of, const std::string& where, Tally& tally) {
  using M = TruthBounds::Measure;
  const bool lower_row = row.value("bound", "") == "lower";
  const std::string claim = row.value("lower_end", "");
  if (claim.empty() && !lower_row) return;
  INFO(where << ": " << row.dump());
  if (claim == "accuracy") {
    ++tally.accuracy;
    CHECK_FALSE(row.contains("epsilon_lower"));
    CHECK_FALSE(row.contains("delta_lower"));
    CHECK_FALSE(row.contains("tpr_lower"));
    return;
  }
  const Truth t = truth_of(row);
  REQUIRE_MESSAGE(!t.worst_of.empty(),
                  "a lower bound is claimed where no truth is known: it must say accuracy");
  ++tally.lower_bounds;
  const Neighbouring rel = relation_of(row);
  auto bound = [&](M m, const char* at) { return truths().of(t, rel, m, value_of(row.at(at))); };
  if (lower_row) {
    CHECK(value_of(row.at("epsilon")) <= bound(M::epsilon, "delta"));
    return;
  }
  CHECK(claim == "lower bound");
  bool checked = false;
  if (row.contains("epsilon_lower")) {
    CHECK(value_of(row.at("epsilon_lower")) <= bound(M::epsilon, "delta"));
    checked = true;
  }
  if (row.contains("delta_lower")) {
    CHECK(value_of(row.at("delta_lower")) <= bound(M::delta, "epsilon"));
    checked = true;
  }
  if (row.contains("tpr_lower")) {
    CHECK(value_of(row.at("tpr_lower")) <= bound(M::tpr, "fpr"));
    checked = true;
  }
  if (row.contains("advantage_lower")) {
    CHECK(value_of(row.at("advantage_lower")) <= truths().of(t, rel, M::advantage, 0));
    checked = true;
  }
  CHECK_MESSAGE(checked, "a lower bound is claimed without a lower end");
}

/// The result rows of a verb's JSON (or JSON Lines) output.
std::vector<Json> rows_of(const std::string& out) {
  std::vector<Json> rows;
  std::istringstream lines(out);
  std::string first;
  std::getline(lines, first);
  if (first == "{") {  // one indented document
    const Json doc = Json::parse(out);
    for (const auto& r : doc.at("results")) rows.push_back(r);
    return rows;
  }
  lines.clear();
  lines.seekg(0);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) rows.push_back(Json::parse(line));
  return rows;
}

/// Runs one (verb, description) pair and checks every row: it must run (status 0)
/// unless `refused`, when it must be refused (status 2 or 3) and print nothing.
void run_pair(const std::string& what, const Args& args, const TruthOf& truth_of, bool refused,
              Tally& tally, const std::string& stdin_text = "") {
  const auto r = run_in_process(args, dpb::cli::RunMode::run, stdin_text);
  INFO(what << "; stderr: " << r.err);
  if (refused) {
    CHECK((r.status == 2 || r.status == 3));
    CHECK(r.out.empty());
    return;
  }
  REQUIRE(r.status == 0);
  ++tally.pairs;
  const auto rows = rows_of(r.out);
  for (const Json& row : rows) check_row(row, truth_of, what, tally);
}

/// A Markdown report's `[lower, upper]` intervals at δ = 1e-05 (docs/claims.md#lower-bound:
/// both ends bound the run), each checked against the truth's ε.
void check_report(const std::string& what, const Args& args, const Truth& t, Tally& tally,
                  const std::string& stdin_text = "") {
  const auto r = run_in_process(args, dpb::cli::RunMode::run, stdin_text);
  INFO(what << "; stderr: " << r.err);
  REQUIRE(r.status == 0);
  ++tally.pairs;
  // "| accountant | claim | batches | delta | epsilon |": the row's relation is the run's.
  // The relation the run's rows hold under, as the headline states it.
  std::smatch headline;
  REQUIRE(
      std::regex_search(r.out, headline, std::regex(R"(under the (\w+) neighbouring relation)")));
  const Neighbouring rel = relation_of(Json{{"neighbouring", headline[1].str()}});
  const std::regex interval(R"(\| (\w+) \| [^|\n]* \|(?: [^|\n]* \|)? 1e-05 \| \[([0-9.e+-]+), )");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), interval), end; it != end; ++it) {
    INFO(what << ": " << it->str());
    REQUIRE_MESSAGE(!t.worst_of.empty(), "an interval is claimed where no truth is known");
    ++tally.lower_bounds;
    CHECK(std::stod((*it)[2].str()) <= truths().of(t, rel, TruthBounds::Measure::epsilon, 1e-5));
  }
}

using ScratchFile = dpb::test::TempFile;

Args joined(std::initializer_list<Args> parts) {
  Args out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

double number(const Json& row, const char* key, double fallback) {
  return row.contains(key) && row.at(key).is_number() ? row.at(key).get<double>() : fallback;
}
std::int64_t count(const Json& row, const char* key, std::int64_t fallback) {
  return row.contains(key) && row.at(key).is_number() ? row.at(key).get<std::int64_t>() : fallback;
}

// --- DP-SGD runs described by flags -----------------------------------------

EventPtr poisson_steps(double q, double sigma, std::int64_t steps) {
  return dpb::make_self_composed(steps, dpb::make_poisson_sampled(q, dpb::make_gaussian(sigma)));
}

/// A run described by flags: the flags that fix it, the three a solver may leave out
/// (the rate or batch size, σ, the steps), the verbs that refuse it, and its truth from
/// the values a row prints (a solver's unknown) or the description's own.
struct RunDescription {
  std::string name;
  Args fixed, rate, sigma, steps;
  std::set<std::string> refused;
  TruthOf truth_of;
  std::string target = "5";  ///< the solvers' target ε, met by some value of each unknown
};

/// The Poisson estimate's rows beside a run of N records in batches of b (one
/// participation per epoch) claim accuracy; this truth would be theirs, the Poisson run.
TruthOf plain(double q, double sigma, std::int64_t steps) {
  return [=](const Json& row) {
    return truth(poisson_steps(number(row, "sampling_rate", q),
                               number(row, "noise_multiplier", sigma), count(row, "steps", steps)));
  };
}

/// N = 200 records in batches of 50 (4 steps an epoch), σ = 2, 8 steps.
constexpr std::int64_t kEpochRecords = 200;

TruthOf epoch_truth(bool shuffled) {
  return [=](const Json& row) {
    const std::int64_t b = count(row, "batch_size", 50), t = count(row, "steps", 8);
    const std::int64_t per_epoch = kEpochRecords / b;
    const EventPtr g = dpb::make_gaussian(number(row, "noise_multiplier", 2));
    const EventPtr epoch = shuffled ? dpb::make_event(dpb::ShuffledEvent{per_epoch, g})
                                    : dpb::make_event(dpb::RandomAllocationEvent{per_epoch, 1, g});
    return truth(dpb::make_self_composed((t + per_epoch - 1) / per_epoch, epoch));
  };
}

std::vector<RunDescription> run_descriptions() {
  std::vector<RunDescription> d;
  const Args q{"-q", "0.05"}, sigma{"--sigma", "1.1"}, steps{"--steps", "100"};
  d.push_back({"poisson flags", {}, q, sigma, steps, {}, plain(0.05, 1.1, 100)});
  // 10 records a micro-batch, 5 accumulated: the logical batch 50 of 1000 is what is
  // sampled (docs/sampling.md#gradient-accumulation), q = 0.05.
  d.push_back({"accumulation",
               {"--dataset-size", "1000", "--accumulation-steps", "5"},
               {"--batch-size", "10"},
               sigma,
               steps,
               {},
               plain(0.05, 1.1, 100)});
  // A user of 2 records: the count of the user's records in a Poisson batch is
  // Binomial(2, q), a mixture of Gaussians of sensitivities 0, 1, 2 against N(0, σ²),
  // attained with the records' gradients aligned.
  d.push_back({"user level", {"--records-per-user", "2"}, q, sigma, steps, {}, [](const Json& row) {
                 const double r = number(row, "sampling_rate", 0.05);
                 return truth(dpb::make_self_composed(
                     count(row, "steps", 100), dpb::make_event(dpb::MixtureOfGaussiansEvent{
                                                   number(row, "noise_multiplier", 1.1),
                                                   {0, 1, 2},
                                                   {(1 - r) * (1 - r), 2 * r * (1 - r), r * r}})));
               }});
  // Adaptive clipping's count: the combined Gaussian dominates the run; its exact loss
  // lies between the gradients' alone and that, and is not known.
  d.push_back(
      {"adaptive clipping", {"--clipping-count-noise", "3"}, q, sigma, steps, {}, [](const Json&) {
         return no_truth();
       }});
  // Fixed-size batches of 50 of 1000, under replace-one (8 steps: pld's attack bounds
  // under replace-one take seconds beyond a few steps).
  d.push_back({"without replacement",
               {"--sampling", "without-replacement", "--dataset-size", "1000"},
               {"--batch-size", "50"},
               sigma,
               {"--steps", "8"},
               {},
               [](const Json& row) {
                 return truth(dpb::make_self_composed(
                     count(row, "steps", 8),
                     dpb::make_sampled_without_replacement(
                         1000, count(row, "batch_size", 50),
                         dpb::make_gaussian(number(row, "noise_multiplier", 1.1)))));
               }});
  const Args epoch_fixed{"--dataset-size", std::to_string(kEpochRecords)};
  // Shuffled batches: the shuffled event is the run's own mechanism.
  d.push_back({"shuffle",
               joined({{"--sampling", "shuffle"}, epoch_fixed}),
               {"--batch-size", "50"},
               {"--sigma", "2"},
               {"--steps", "8"},
               {},
               epoch_truth(true),
               "2"});
  d.push_back({"balls-in-bins",
               joined({{"--sampling", "balls-in-bins", "--participations", "1"}, epoch_fixed}),
               {"--batch-size", "50"},
               {"--sigma", "2"},
               {"--steps", "8"},
               {},
               epoch_truth(false),
               "2"});
  // A user of 2 records under balls-in-bins: composed as unamplified releases, no truth.
  d.push_back(
      {"user-level balls-in-bins",
       joined({{"--sampling", "balls-in-bins", "--participations", "1", "--records-per-user", "2"},
               epoch_fixed}),
       {"--batch-size", "50"},
       {"--sigma", "2"},
       {"--steps", "8"},
       {"steps", "sampling-rate"},  // one step already spends more than the target
       [](const Json&) { return no_truth(); },
       "2"});
  return d;
}

/// One verb over a run description: its own flags and which run flags it leaves out.
struct RunVerb {
  std::string name;  ///< as the description's `refused` names it
  Args own;
  enum class Leaves { none, rate, sigma, steps } leaves = Leaves::none;
};

/// The solvers' target: met by every run above with some value of its unknown.
/// TARGET stands for the description's target ε.
const std::vector<RunVerb> kRunVerbs = {
    {"epsilon", {"epsilon", "--delta", "1e-5"}},
    {"delta", {"delta", "--epsilon", "1"}},
    {"sigma", {"sigma", "--epsilon", "TARGET", "--delta", "1e-5"}, RunVerb::Leaves::sigma},
    {"steps", {"steps", "--epsilon", "TARGET", "--delta", "1e-5"}, RunVerb::Leaves::steps},
    {"sampling-rate",
     {"sampling-rate", "--epsilon", "TARGET", "--delta", "1e-5"},
     RunVerb::Leaves::rate},
    {"sweep", {"sweep", "--delta", "1e-5"}},
    {"sweep --solve",
     {"sweep", "--solve", "sigma", "--epsilon", "TARGET", "--delta", "1e-5"},
     RunVerb::Leaves::sigma},
    {"risk", {"risk", "--fpr", "0.01"}},
};

void run_description(const RunDescription& d, Tally& tally) {
  using L = RunVerb::Leaves;
  for (const RunVerb& v : kRunVerbs) {
    const Args none;
    Args own = v.own;
    std::replace(own.begin(), own.end(), std::string("TARGET"), d.target);
    const Args args =
        joined({own,
                d.fixed,
                v.leaves == L::rate ? none : d.rate,
                v.leaves == L::sigma ? none : d.sigma,
                v.leaves == L::steps ? none : d.steps,
                {"--accountant", "pld", "--format", v.own.front() == "sweep" ? "jsonl" : "json"}});
    run_pair(v.name + " / " + d.name, args, d.truth_of, d.refused.count(v.name) > 0, tally);
  }
  check_report("report / " + d.name,
               joined({{"report"},
                       d.fixed,
                       d.rate,
                       d.sigma,
                       d.steps,
                       {"--delta", "1e-5", "--accountant", "pld"}}),
               d.truth_of(Json::object()), tally);
}

// --- schedules --------------------------------------------------------------

/// Two phases at q = 0.05: 50 steps at σ = 2, then 50 at σ = 1.1 (the last phase's steps
/// left out when solving them). With `count_noise`, adaptive clipping's count in phase 2.
std::string schedule_text(bool last_steps, bool count_noise) {
  return std::string(
             R"([{"name": "a", "sampling_rate": 0.05, "noise_multiplier": 2, "steps": 50},)") +
         R"({"name": "b", "sampling_rate": 0.05, "noise_multiplier": 1.1)" +
         (last_steps ? R"(, "steps": 50)" : "") +
         (count_noise ? R"(, "clipping_count_noise": 3)" : "") + "}]";
}

/// The phases composed, each a Poisson run: σ from the row's `noise_multipliers` (a
/// solved schedule) and the last phase's steps from its `steps`.
Truth schedule_truth(const Json& row) {
  double s1 = 2, s2 = 1.1;
  if (row.contains("noise_multipliers")) {
    s1 = row.at("noise_multipliers").at(0).get<double>();
    s2 = row.at("noise_multipliers").at(1).get<double>();
  }
  return truth(dpb::make_composed(
      {poisson_steps(0.05, s1, 50), poisson_steps(0.05, s2, count(row, "steps", 50))}));
}

// --- matrix strategies --------------------------------------------------------

/// A lower-triangular n x n strategy, row-major, as this test builds it.
struct Matrix {
  std::int64_t n;
  std::vector<double> c;
  double at(std::int64_t i, std::int64_t j) const { return c[static_cast<std::size_t>(i * n + j)]; }
};

Matrix toeplitz(const std::vector<double>& coefficients, std::int64_t n) {
  Matrix m{n, std::vector<double>(static_cast<std::size_t>(n * n), 0.0)};
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j)
      if (i - j < static_cast<std::int64_t>(coefficients.size()))
        m.c[static_cast<std::size_t>(i * n + j)] = coefficients[static_cast<std::size_t>(i - j)];
  return m;
}

/// c_j = binom(2j, j)/4^j (c_0 = 1, c_j = c_{j-1}(2j - 1)/(2j)), the square root of the
/// prefix-sum matrix; `bands` of them divided by their norm (the banded square root).
std::vector<double> square_root(std::int64_t count, bool normalised) {
  std::vector<double> c{1};
  for (std::int64_t j = 1; j < count; ++j)
    c.push_back(c.back() * static_cast<double>(2 * j - 1) / static_cast<double>(2 * j));
  if (normalised) {
    double s = 0;
    for (double v : c) s += v * v;
    for (double& v : c) v /= std::sqrt(s);
  }
  return c;
}

double column_norm(const Matrix& m, std::int64_t j) {
  double s = 0;
  for (std::int64_t i = j; i < m.n; ++i) s += m.at(i, j) * m.at(i, j);
  return std::sqrt(s) * kNormRoundUp;
}

/// The L2 sensitivity of C under participations at most k, at least `sep` apart (k = 1:
/// one participation), or nullopt where this test cannot tell it exactly. By brute force:
/// max over the patterns P of Σ_{i,j∈P} |G_ij|, G = CᵀC, is an upper bound (the
/// contributions' inner products are at most 1 in size), and the sensitivity itself when
/// every G_ij that a pattern can hold is ≥ 0 (equal unit contributions attain it).
std::optional<double> sensitivity_of(const Matrix& m, std::int64_t k, std::int64_t sep) {
  std::vector<double> g(static_cast<std::size_t>(m.n * m.n), 0.0);
  bool exact = true;
  for (std::int64_t a = 0; a < m.n; ++a)
    for (std::int64_t b = 0; b < m.n; ++b) {
      double s = 0;
      for (std::int64_t i = std::max(a, b); i < m.n; ++i) s += m.at(i, a) * m.at(i, b);
      g[static_cast<std::size_t>(a * m.n + b)] = std::abs(s);
      if (s < 0 && k > 1 && std::abs(a - b) >= sep) exact = false;
    }
  double best = 0;
  std::vector<std::int64_t> pattern;
  std::function<void(std::int64_t)> extend = [&](std::int64_t from) {
    double s = 0;
    for (auto a : pattern)
      for (auto b : pattern) s += g[static_cast<std::size_t>(a * m.n + b)];
    best = std::max(best, s);
    if (static_cast<std::int64_t>(pattern.size()) == k) return;
    for (std::int64_t t = from; t < m.n; ++t) {
      pattern.push_back(t);
      extend(t + sep);
      pattern.pop_back();
    }
  };
  extend(0);
  if (!exact) return std::nullopt;
  return std::sqrt(best) * kNormRoundUp;
}

/// Amplified banded MF's truth (docs/matrix.md#amplified-banded-mf): for each group g of
/// b, its steps g, g + b, ... composed, each a Poisson-sampled Gaussian at σ/‖c_s‖.
Truth amplified_truth(const Matrix& m, std::int64_t bands, double q, double sigma) {
  Truth t;
  for (std::int64_t g = 0; g < bands && g < m.n; ++g) {
    std::vector<EventPtr> steps;
    for (std::int64_t s = g; s < m.n; s += bands)
      steps.push_back(dpb::make_poisson_sampled(q, dpb::make_gaussian(sigma / column_norm(m, s))));
    t.worst_of.push_back(dpb::make_composed(std::move(steps)));
  }
  return t;
}

struct Strategy {
  std::string name;
  Args flags;  ///< --strategy ... --steps ...
  Matrix matrix;
  std::optional<std::int64_t> bands;  ///< for cyclic-poisson: the strategy's bands
};

}  // namespace lower_end_class

TEST_CASE(
    "class: every claimed lower bound of a DP-SGD run described by flags is below its truth") {
  using namespace lower_end_class;
  Tally tally;
  int expected = 1;  // plan, below
  for (const RunDescription& d : run_descriptions()) {
    run_description(d, tally);
    expected += static_cast<int>(kRunVerbs.size() + 1 - d.refused.size());  // + report
  }
  // plan: each ranked row a solved Poisson run at q = B/N.
  run_pair(
      "plan / poisson",
      {"plan", "--epsilon", "5", "--delta", "1e-5", "--dataset-size", "1000", "--compute", "5000",
       "--max-batch-size", "100", "--accountant", "pld", "--format", "json"},
      [](const Json& row) {
        return truth(poisson_steps(row.at("sampling_rate").get<double>(),
                                   row.at("noise_multiplier").get<double>(),
                                   row.at("steps").get<std::int64_t>()));
      },
      false, tally);
  MESSAGE("run flags: " << tally.pairs << " (verb, description) pairs, " << tally.lower_bounds
                        << " lower bounds checked, " << tally.accuracy << " accuracy rows");
  CHECK(tally.pairs == expected);
  CHECK(tally.lower_bounds >= 50);
  CHECK(tally.accuracy >= 20);
}

TEST_CASE("class: every claimed lower bound of a schedule is below its truth") {
  using namespace lower_end_class;
  Tally tally;
  for (const bool count_noise : {false, true}) {
    const std::string what = count_noise ? "schedule with the count" : "schedule";
    const ScratchFile whole("whole.json", schedule_text(true, count_noise));
    const ScratchFile open("open.json", schedule_text(false, count_noise));
    const TruthOf truth_of =
        count_noise ? TruthOf([](const Json&) { return no_truth(); }) : TruthOf(schedule_truth);
    const Args pld{"--accountant", "pld", "--format", "json"};
    run_pair("epsilon / " + what,
             joined({{"epsilon", "--schedule", whole.path, "--delta", "1e-5"}, pld}), truth_of,
             false, tally);
    run_pair("delta / " + what,
             joined({{"delta", "--schedule", whole.path, "--epsilon", "1"}, pld}), truth_of, false,
             tally);
    // σ on a schedule with adaptive clipping's count is refused (no gradient σ is solved).
    run_pair(
        "sigma / " + what,
        joined({{"sigma", "--schedule", whole.path, "--epsilon", "5", "--delta", "1e-5"}, pld}),
        truth_of, count_noise, tally);
    run_pair("steps / " + what,
             joined({{"steps", "--schedule", open.path, "--epsilon", "5", "--delta", "1e-5"}, pld}),
             truth_of, false, tally);
    run_pair("risk / " + what, joined({{"risk", "--schedule", whole.path, "--fpr", "0.01"}, pld}),
             truth_of, false, tally);
    const Json line = {{"phases", Json::parse(schedule_text(true, count_noise))}, {"delta", 1e-5}};
    run_pair("sweep / " + what,
             {"sweep", "--input", "-", "--accountant", "pld", "--format", "jsonl"}, truth_of, false,
             tally, line.dump() + "\n");
    check_report("report / " + what,
                 {"report", "--schedule", whole.path, "--delta", "1e-5", "--accountant", "pld"},
                 truth_of(Json::object()), tally);
  }
  MESSAGE("schedules: " << tally.pairs << " pairs, " << tally.lower_bounds
                        << " lower bounds checked, " << tally.accuracy << " accuracy rows");
  CHECK(tally.pairs == 2 * 7 - 1);
  CHECK(tally.lower_bounds >= 6);
  CHECK(tally.accuracy >= 5);
}

TEST_CASE("class: every claimed lower bound of a spec (every kind, a ledger) is below its truth") {
  using namespace lower_end_class;
  Tally tally;
  int kinds = 0, other_relations = 0;
  dpb::for_each_event_kind([&]<class Kind>() {
    ++kinds;
    const EventPtr event = dpb::example_event(std::type_identity<Kind>{});
    const std::string spec = dpb::cli::event_to_json(*event).dump();
    // The kind is the mechanism, so the event is its own truth; but
    // banded_matrix_factorization only asserts its columns' norms are at most 1.
    const bool asserted = std::is_same_v<Kind, dpb::BandedMatrixFactorizationEvent>;
    const TruthOf truth_of = [&](const Json&) { return asserted ? no_truth() : truth(event); };
    const std::string what = std::string(Kind::kName);
    // The relation the kind is analysed under: its own, else the first pld takes.
    // pld and rdp: a kind pld has no distribution for (zcdp) still runs, through rdp.
    Args pld{"--accountant", "pld,rdp", "--format", "json"};
    Json line = {{"spec", Json::parse(spec)}, {"delta", 1e-5}};
    for (const auto& [flag, relation] :
         {std::pair<const char*, Neighbouring>{"replace-special", Neighbouring::replace_special},
          {"replace-one", Neighbouring::replace_one}}) {
      auto takes = [&](const dpb::AccountantOptions& o) {
        return !dpb::make_accountant("pld", o)->unsupported_reason(*event) ||
               !dpb::make_accountant("rdp", o)->unsupported_reason(*event);
      };
      dpb::AccountantOptions options;
      if (takes(options)) break;
      options.neighbouring = relation;
      if (!takes(options)) continue;
      pld.insert(pld.end(), {"--neighbouring", flag});
      line["neighbouring"] = flag;
      break;
    }
    // sampled_with_replacement: no accountant here analyses it.
    const bool none = std::is_same_v<Kind, dpb::SampledWithReplacementEvent>;
    run_pair("epsilon / " + what, joined({{"epsilon", "--spec", "-", "--delta", "1e-5"}, pld}),
             truth_of, none, tally, spec);
    run_pair("delta / " + what, joined({{"delta", "--spec", "-", "--epsilon", "1"}, pld}), truth_of,
             none, tally, spec);
    run_pair("risk / " + what, joined({{"risk", "--spec", "-", "--fpr", "0.01"}, pld}), truth_of,
             none, tally, spec);
    run_pair("sweep / " + what,
             {"sweep", "--input", "-", "--accountant", "pld,rdp", "--format", "jsonl"}, truth_of,
             none, tally, line.dump() + "\n");
    // Every other relation pld analyses the kind under: ε there (the truth's relation is
    // the row's).
    for (const auto& [flag, relation] :
         {std::pair<const char*, Neighbouring>{"add-remove", Neighbouring::add_remove},
          {"replace-special", Neighbouring::replace_special},
          {"replace-one", Neighbouring::replace_one}}) {
      dpb::AccountantOptions options;
      options.neighbouring = relation;
      if (std::find(pld.begin(), pld.end(), flag) != pld.end() ||
          dpb::make_accountant("pld", options)->unsupported_reason(*event))
        continue;
      ++other_relations;
      run_pair("epsilon --neighbouring " + std::string(flag) + " / " + what,
               {"epsilon", "--spec", "-", "--delta", "1e-5", "--neighbouring", flag, "--accountant",
                "pld", "--format", "json"},
               truth_of, false, tally, spec);
    }
  });
  // A ledger with a value to solve (docs/calibration.md#ledgers): a DP-SGD phase whose σ
  // is marked, alone and beside banded_matrix_factorization (which has no truth).
  const std::string phase =
      R"({"self_composed": {"count": 50, "event": {"poisson_sampled": {"sampling_probability": 0.05,
          "event": {"gaussian": {"noise_multiplier": {"solve": true}}}}}}})";
  const std::string banded =
      R"({"banded_matrix_factorization": {"sampling_probability": 0.05, "noise_multiplier": 1.1,
          "steps": 10, "bands": 4}})";
  const Args solve{"sigma", "--spec",       "-",   "--epsilon", "5",   "--delta",
                   "1e-5",  "--accountant", "pld", "--format",  "json"};
  run_pair(
      "sigma / ledger", solve,
      [](const Json& row) {
        return truth(poisson_steps(0.05, row.at("noise_multiplier").get<double>(), 50));
      },
      false, tally, phase);
  run_pair(
      "sigma / ledger with banded_matrix_factorization", solve,
      [](const Json&) { return no_truth(); }, false, tally,
      R"({"composed": [)" + phase + ", " + banded + "]}");
  check_report("report / banded_matrix_factorization",
               {"report", "--spec", "-", "--delta", "1e-5", "--accountant", "pld"}, no_truth(),
               tally, banded);
  MESSAGE("specs: " << kinds << " kinds (" << other_relations << " under another relation), "
                    << tally.pairs << " pairs, " << tally.lower_bounds << " lower bounds checked, "
                    << tally.accuracy << " accuracy rows");
  CHECK(tally.pairs == (kinds - 1) * 4 + other_relations + 3);
  CHECK(other_relations >= 20);
  CHECK(tally.lower_bounds >= 40);
  CHECK(tally.accuracy >= 10);
}

TEST_CASE("class: every claimed lower bound of a matrix-mechanism run is below its truth") {
  using namespace lower_end_class;
  Tally tally;
  const std::int64_t n = 10;
  // A 2-banded matrix: columns of norm √(0.75² + 0.5²) ≈ 0.901 but the last (0.75).
  std::vector<double> two_banded(static_cast<std::size_t>(n * n), 0.0);
  std::string rows;
  for (std::int64_t i = 0; i < n; ++i) {
    two_banded[static_cast<std::size_t>(i * n + i)] = 0.75;
    if (i > 0) two_banded[static_cast<std::size_t>(i * n + i - 1)] = 0.5;
    for (std::int64_t j = 0; j < n; ++j)
      rows += (j ? "," : "") + std::string(j == i ? "0.75" : j == i - 1 ? "0.5" : "0");
    rows += "\n";
  }
  const ScratchFile matrix_file("matrix.csv", rows);
  // A diagonal of norms 0.5, 0.5, 0.9, ... (one band): a single group of uneven norms,
  // each repeated, so the attained pair must keep each norm as often as it occurs.
  std::vector<double> diagonal(static_cast<std::size_t>(n * n), 0.0);
  std::string diagonal_rows;
  for (std::int64_t i = 0; i < n; ++i) {
    const bool large = i % 3 == 2;
    diagonal[static_cast<std::size_t>(i * n + i)] = large ? 0.9 : 0.5;
    for (std::int64_t j = 0; j < n; ++j)
      diagonal_rows += (j ? "," : "") + std::string(j != i ? "0" : large ? "0.9" : "0.5");
    diagonal_rows += "\n";
  }
  const ScratchFile diagonal_file("diagonal.csv", diagonal_rows);
  const ScratchFile coefficients("coefficients.csv", "0.6,0.3,0.2,0.1\n");
  // Signed coefficients: two participations 2 apart have columns of negative inner
  // product, so the sensitivity under min-sep is known here (and to the tool) only as
  // an upper bound, and its release's lower end must claim accuracy.
  const ScratchFile signed_coefficients("signed.csv", "1,0.5,-0.6\n");
  const std::vector<Strategy> strategies = {
      {"identity", {"--strategy", "identity", "--steps", "10"}, toeplitz({1}, n), 1},
      {"sqrt", {"--strategy", "sqrt", "--steps", "10"}, toeplitz(square_root(n, false), n), {}},
      {"banded",
       {"--strategy", "banded", "--steps", "10", "--bands", "4"},
       toeplitz(square_root(4, true), n),
       4},
      {"toeplitz-file",
       {"--strategy", "toeplitz-file", "--coefficients", coefficients.path, "--steps", "10"},
       toeplitz({0.6, 0.3, 0.2, 0.1}, n),
       4},
      {"matrix-file",
       {"--strategy", "matrix-file", "--matrix", matrix_file.path},
       {n, two_banded},
       2},
      {"diagonal matrix-file",
       {"--strategy", "matrix-file", "--matrix", diagonal_file.path},
       {n, diagonal},
       1},
      {"signed toeplitz-file",
       {"--strategy", "toeplitz-file", "--coefficients", signed_coefficients.path, "--steps", "10"},
       toeplitz({1, 0.5, -0.6}, n),
       {}},
  };
  const Args pld{"--accountant", "pld", "--format", "json"};
  for (const Strategy& s : strategies) {
    // One release at σ/Δ (docs/matrix.md#privacy-of-one-release): its truth is the
    // Gaussian at σ over an upper bound on Δ computed here.
    for (const auto& [pattern, k, sep] :
         {std::tuple<Args, std::int64_t, std::int64_t>{{"--participation", "single"}, 1, 1},
          {{"--participation", "min-sep", "--min-sep", "2", "--participations", "2"}, 2, 2}}) {
      const std::optional<double> sensitivity = sensitivity_of(s.matrix, k, sep);
      const std::string what = s.name + " " + pattern[1];
      auto release = [&](double sigma) {
        return sensitivity ? truth(dpb::make_gaussian(sigma / *sensitivity)) : no_truth();
      };
      run_pair(
          "mf-epsilon / " + what,
          joined({{"mf-epsilon"}, s.flags, pattern, {"--sigma", "3", "--delta", "1e-5"}, pld}),
          [&](const Json&) { return release(3); }, false, tally);
      run_pair(
          "mf-sigma / " + what,
          joined({{"mf-sigma"}, s.flags, pattern, {"--epsilon", "2", "--delta", "1e-5"}, pld}),
          [&](const Json& row) { return release(row.at("noise_sd").get<double>()); }, false, tally);
    }
    if (!s.bands) continue;  // the square root's columns exceed norm 1: no amplified run
    const std::string b = std::to_string(*s.bands);
    Args cyclic{"--participation", "cyclic-poisson", "-q", "0.05"};
    if (std::find(s.flags.begin(), s.flags.end(), "--bands") == s.flags.end())
      cyclic.insert(cyclic.end(), {"--bands", b});
    run_pair(
        "mf-epsilon / " + s.name + " cyclic-poisson",
        joined({{"mf-epsilon"}, s.flags, cyclic, {"--sigma", "1.1", "--delta", "1e-6"}, pld}),
        [&](const Json&) { return amplified_truth(s.matrix, *s.bands, 0.05, 1.1); }, false, tally);
    run_pair(
        "mf-sigma / " + s.name + " cyclic-poisson",
        joined({{"mf-sigma"}, s.flags, cyclic, {"--epsilon", "1.3", "--delta", "1e-6"}, pld}),
        [&](const Json& row) {
          return amplified_truth(s.matrix, *s.bands, 0.05, row.at("noise_sd").get<double>());
        },
        false, tally);
  }
  MESSAGE("matrix: " << tally.pairs << " pairs, " << tally.lower_bounds << " lower bounds checked, "
                     << tally.accuracy << " accuracy rows");
  CHECK(tally.pairs == 7 * 4 + 5 * 2);
  CHECK(tally.lower_bounds >= 28);
  CHECK(tally.accuracy >= 2);
}

// --- the cases of issue 42, each against its truth computed here ----------------

namespace lower_end_class {

/// The one result row of `args` (JSON), run in-process.
Json only_row(const Args& args, const std::string& stdin_text = "") {
  const auto r = run_in_process(args, dpb::cli::RunMode::run, stdin_text);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 1);
  return rows.front();
}

/// DP-SGD's pld upper end over ceil(10/4) = 3 rounds at q 0.05, σ 1.1, δ 1e-6:
/// what amplified banded MF's upper end is (1.34931 to six digits).
double three_rounds_epsilon() {
  const Json row = only_row({"epsilon", "-q", "0.05", "--sigma", "1.1", "--steps", "3", "--delta",
                             "1e-6", "--accountant", "pld", "--format", "json"});
  const double e = row.at("epsilon").get<double>();
  CHECK(e == doctest::Approx(1.34931).epsilon(1e-5));
  return e;
}

/// ε at δ of amplified banded MF's worst group (its upper bound: at least the truth).
double amplified_truth_epsilon(const Matrix& m, std::int64_t bands, double q, double sigma,
                               double delta) {
  return truths().of(amplified_truth(m, bands, q, sigma), Neighbouring::add_remove,
                     TruthBounds::Measure::epsilon, delta);
}

}  // namespace lower_end_class

TEST_CASE("issue 42: amplified banded MF's lower end is a group's attained pair, below the truth") {
  using namespace lower_end_class;
  const Args pld{"--accountant", "pld", "--format", "json"};
  const Args banded{"--strategy", "banded",          "--steps",        "10", "--bands",
                    "4",          "--participation", "cyclic-poisson", "-q", "0.05"};
  const Matrix c = toeplitz(square_root(4, true), 10);
  // Group 0's steps 0, 4, 8: column 8 holds only rows 8 and 9.
  CHECK(column_norm(c, 8) == doctest::Approx(0.91646).epsilon(1e-5));
  const double truth_11 = amplified_truth_epsilon(c, 4, 0.05, 1.1, 1e-6);
  CHECK(truth_11 <= 1.2918850);  // dp_accounting's PLD of group 0 (issue 42)
  CHECK(truth_11 == doctest::Approx(1.2918848).epsilon(1e-3));

  // The lower end is one group's attained pair: at most the run's true ε (its upper
  // bound here, the worst group's) and, for the worst group, within PLD's accuracy of it.
  // The DP-SGD pair's lower end (what was printed, 1.3482543) is above the truth.
  auto check_attained = [](const Json& row, double truth) {
    CHECK(row.at("lower_end") == "lower bound");
    CHECK(row.at("epsilon_lower").get<double>() <= truth);
    CHECK(row.at("epsilon_lower").get<double>() >= truth * (1 - 1e-2));
    CHECK(row.at("epsilon").get<double>() > truth);  // DP-SGD's upper bound: sound, loose
  };
  SUBCASE("mf-epsilon") {
    const Json row =
        only_row(joined({{"mf-epsilon"}, banded, {"--sigma", "1.1", "--delta", "1e-6"}, pld}));
    check_attained(row, truth_11);
    // The upper end is DP-SGD's over ceil(10/4) = 3 rounds, unchanged, and sound.
    CHECK(row.at("epsilon").get<double>() == three_rounds_epsilon());
  }
  SUBCASE("mf-sigma") {
    const Json row =
        only_row(joined({{"mf-sigma"}, banded, {"--epsilon", "1.3", "--delta", "1e-6"}, pld}));
    const double sigma = row.at("noise_sd").get<double>();
    CHECK(sigma == doctest::Approx(1.11608).epsilon(1e-5));
    const double truth = amplified_truth_epsilon(c, 4, 0.05, sigma, 1e-6);
    CHECK(truth <= 1.24444 * (1 + 1e-4));
    check_attained(row, truth);
  }
  SUBCASE("toeplitz-file") {
    const ScratchFile file("issue42.csv", "0.6,0.3,0.2,0.1\n");
    const Json row =
        only_row(joined({{"mf-epsilon", "--strategy", "toeplitz-file", "--coefficients", file.path,
                          "--steps", "10", "--bands", "4", "--participation", "cyclic-poisson",
                          "-q", "0.05", "--sigma", "1.1", "--delta", "1e-6"},
                         pld}));
    const double truth =
        amplified_truth_epsilon(toeplitz({0.6, 0.3, 0.2, 0.1}, 10), 4, 0.05, 1.1, 1e-6);
    CHECK(truth <= 0.54792 * (1 + 1e-4));
    check_attained(row, truth);
  }
  SUBCASE("matrix-file") {
    // A 2-banded matrix of 6 steps: columns (0.75, 0.5), the last 0.75 alone.
    std::string text;
    std::vector<double> entries(36, 0.0);
    for (int i = 0; i < 6; ++i) {
      for (int j = 0; j < 6; ++j) {
        const double v = j == i ? 0.75 : j == i - 1 ? 0.5 : 0;
        entries[static_cast<std::size_t>(i * 6 + j)] = v;
        text += (j ? "," : "") + std::string(v == 0.75 ? "0.75" : v == 0.5 ? "0.5" : "0");
      }
      text += "\n";
    }
    const ScratchFile file("issue42_matrix.csv", text);
    const Json row = only_row(joined(
        {{"mf-epsilon", "--strategy", "matrix-file", "--matrix", file.path, "--participation",
          "cyclic-poisson", "-q", "0.1", "--bands", "2", "--sigma", "1", "--delta", "1e-5"},
         pld}));
    check_attained(row, amplified_truth_epsilon({6, entries}, 2, 0.1, 1, 1e-5));
  }
  SUBCASE("the banded_matrix_factorization spec kind") {
    const Json row = only_row(
        joined({{"epsilon", "--spec", "-", "--delta", "1e-6"}, pld}),
        R"({"banded_matrix_factorization": {"sampling_probability": 0.05, "noise_multiplier": 1.1,
            "steps": 10, "bands": 4}})");
    CHECK(row.at("lower_end") == "accuracy");
    CHECK(row.at("epsilon").get<double>() == three_rounds_epsilon());
  }
}

TEST_CASE("issue 42: adaptive clipping's lower end is accuracy in every verb, as in epsilon") {
  using namespace lower_end_class;
  const Args run{"--dataset-size",         "60000", "--batch-size", "256", "--epochs", "10",
                 "--clipping-count-noise", "5",     "--accountant", "pld", "--format", "json"};
  const Json sigma = only_row(joined({{"sigma", "--epsilon", "2", "--delta", "1e-5"}, run}));
  CHECK(sigma.at("lower_end") == "accuracy");
  // 0.7884973 before issue 45: pld's grid is now coarser where its interval
  // meets the tolerance sooner, its upper end a little higher (still within the
  // tolerance), so σ is 6e-6 higher.
  CHECK(sigma.at("noise_multiplier").get<double>() == doctest::Approx(0.7885016).epsilon(1e-6));
  // The run solved, given back to epsilon: the same claim.
  const Json epsilon = only_row(joined(
      {{"epsilon", "--sigma", sigma.at("noise_multiplier").dump(), "--delta", "1e-5"}, run}));
  CHECK(epsilon.at("lower_end") == "accuracy");
  const Json steps =
      only_row(joined({{"steps", "--sigma", "1", "--epsilon", "2", "--delta", "1e-5",
                        "--dataset-size", "60000", "--batch-size", "256", "--clipping-count-noise",
                        "5", "--accountant", "pld", "--format", "json"}}));
  CHECK(steps.at("lower_end") == "accuracy");
}
