#include "accounting/answer.hpp"

#include <algorithm>
#include <exception>
#include <future>

#include "accounting/accountant_descriptor.hpp"
#include "accounting/errors.hpp"
#include "accounting/pld/pld_accountant.hpp"

namespace dpb {
namespace {

/// PLD tolerance of a shuffled run's lower-bound row: 1% of ε. A lower bound
/// need not be tight to the last digit; a coarser grid keeps this extra row
/// fast (its interval is still sound).
constexpr double kLowerBoundTolerance = 1e-2;

/// An answer stated under another relation than the one asked for
/// (--neighbouring) is no answer: it is refused, never shown as if it held.
std::optional<std::string> other_relation(const DpEvent& event, const std::string& accountant,
                                          Neighbouring answered,
                                          std::optional<Neighbouring> asked) {
  if (!asked || answered == *asked) return std::nullopt;
  return accountant + ": " + event_name(event) + " has no analysis under " +
         std::string(to_string(*asked)) + " neighbouring here (only " +
         std::string(to_string(answered)) + ")";
}

/// What answer() and attack_bounds_each() share: accountant `name` with the
/// question's event composed is asked `ask(accountant)`, which returns the
/// relations its answers hold under. The reason it gives no answer (it cannot
/// handle the event, or answered under another relation than asked), or
/// nullopt; an accountant named alone without an answer is an error.
template <class Ask>
std::optional<std::string> answer_one(const Question& q, const AccountantChoice& choice,
                                      const std::string& name, Ask ask) {
  auto accountant = make_accountant(name, choice.options);
  std::optional<std::string> why = accountant->unsupported_reason(*q.event);
  if (!why) {
    try {
      accountant->compose(*q.event);
      for (Neighbouring n : ask(*accountant))
        if (!why) why = other_relation(*q.event, name, n, choice.options.neighbouring);
    } catch (const InvalidParameter& e) {
      // A limit met only when computing (pld's grids are built lazily): the
      // other accountants still answer; named alone, it is the error.
      if (choice.names.size() == 1) throw;
      why = e.what();
    }
  }
  if (why && choice.names.size() == 1)
    throw UnsupportedEvent(q.what.empty() ? *why : q.what + ": " + *why);
  return why;
}

/// Each accountant's guarantees for `q.event` at every target, as run rows
/// (skipped accountants' reasons into `skipped`).
std::vector<AnswerRow> run_rows(const Question& q, const AccountantChoice& choice,
                                std::vector<std::string>& skipped) {
  std::vector<AnswerRow> rows;
  const bool own_event = event_is_the_run(q);
  for (const auto& name : choice.names) {
    std::vector<AnswerRow> mine;
    const auto why = answer_one(q, choice, name, [&](const Accountant& accountant) {
      std::vector<Neighbouring> relations;
      for (double target : q.targets) {
        AnswerRow row;
        row.guarantee = q.solve_delta ? accountant.delta(target) : accountant.epsilon(target);
        claim_lower_end(row.guarantee, own_event);
        if (q.attained) claim_attained_lower_end(row.guarantee, *q.attained, choice.options);
        if (q.run) row.sampling = q.run->sampling;
        relations.push_back(row.guarantee.neighbouring);
        mine.push_back(std::move(row));
      }
      return relations;
    });
    if (why) {
      skipped.push_back(*why);
      continue;
    }
    for (auto& row : mine) rows.push_back(std::move(row));
  }
  return rows;
}

/// The rows of a lower bound on a shuffled run's ε (or δ), one per target:
/// the lower end of the PLD interval of shuffle_lower_bound_event(run). With
/// every other record's gradient 0, the record lands in a uniformly random
/// batch of each epoch: the shuffled run on those datasets *is* that
/// balls-in-bins pair, so its exact value is attained by the run and the
/// interval's lower end bounds the run's from below. None when no such pair
/// is formed here (N not a multiple of B, no whole epoch).
std::vector<AnswerRow> shuffle_lower_rows(const Question& q, std::vector<std::string>& warnings) {
  const DpSgdRun& run = *q.run;
  const EventPtr pair = shuffle_lower_bound_event(run);
  if (!pair) return {};
  AccountantOptions options = q.accountants.options;
  options.neighbouring = std::nullopt;  // the pair's own relation: a record or none
  options.pld.tolerance = std::max(options.pld.tolerance, kLowerBoundTolerance);
  PldAccountant pld(options);
  // pld computes lazily: a grid it cannot hold shows at the first query.
  std::vector<Guarantee> found;
  try {
    pld.compose(*pair);
    for (double target : q.targets)
      found.push_back(q.solve_delta ? pld.delta(target) : pld.epsilon(target));
  } catch (const std::exception& e) {
    warnings.push_back(std::string("no lower bound for the shuffled run: ") + e.what());
    return {};
  }
  std::vector<AnswerRow> rows;
  for (std::size_t i = 0; i < q.targets.size(); ++i) {
    const double target = q.targets[i];
    const Guarantee& g = found[i];
    AnswerRow row;
    row.role = RowRole::lower;
    row.sampling = Sampling::shuffle;
    Guarantee& lower = row.guarantee;
    lower.accountant = "pld";
    lower.bound = BoundKind::lower;
    lower.neighbouring = run_relation(run);
    lower.epsilon = q.solve_delta ? target : g.epsilon_lower.value_or(0);
    lower.delta = q.solve_delta ? g.delta_lower.value_or(0) : target;
    lower.notes.push_back(
        "lower: every other record's gradient 0, the record in a uniformly random batch of each "
        "epoch (the balls-in-bins pair of the whole epochs): this run loses at least this much");
    rows.push_back(std::move(row));
  }
  return rows;
}

/// The Poisson estimate's rows: each chosen accountant's answer for the run
/// as if Poisson-sampled at q = B/N (the usual estimate, not a bound for this
/// loader), or nothing from an accountant without a Poisson analysis.
std::vector<AnswerRow> poisson_estimate_rows(Question q, std::vector<std::string>& warnings) {
  q.event = poisson_estimate_event(*q.run);
  q.run.reset();
  q.attained = nullptr;  // a pair of the run, not of the Poisson-sampled one
  q.accountants.options.neighbouring = std::nullopt;
  std::vector<std::string> skipped;
  std::vector<AnswerRow> rows;
  try {
    rows = run_rows(q, q.accountants, skipped);
  } catch (const UnsupportedEvent& e) {  // one accountant, which has no Poisson analysis here
    warnings.push_back(std::string("no Poisson estimate: ") + e.what());
  }
  // An accountant skipped here is not comparable: the run's own rows say why.
  // The estimate is of another run than this one: its interval's lower end bounds nothing
  // about this run (a Poisson-sampled run at q = B/N can lose more than the shuffled or
  // balls-in-bins run does), so it says only how close its upper end is (accuracy).
  for (auto& row : rows) {
    row.role = RowRole::poisson_estimate;
    row.sampling = Sampling::poisson;
    row.guarantee.bound = BoundKind::estimate;
    claim_lower_end(row.guarantee, false);
  }
  return rows;
}

bool has_companions(const Question& q) {
  return q.companions && q.run &&
         (q.run->sampling == Sampling::shuffle || q.run->sampling == Sampling::balls_in_bins);
}

}  // namespace

bool event_is_the_run(const Question& q) {
  return q.event_is_own && (!q.run || event_is_the_run(*q.run));
}

void claim_lower_end(Guarantee& g, bool event_is_own) {
  if (!event_is_own) g.lower_end = LowerEnd::accuracy;
}

void claim_lower_end(AttackBounds& a, bool event_is_own) {
  if (!event_is_own) a.lower_end = LowerEnd::accuracy;
}

void claim_attained_lower_end(Guarantee& g, const DpEvent& attained,
                              const AccountantOptions& options) {
  if (!g.epsilon_lower && !g.delta_lower) return;
  AccountantOptions own = options;
  own.neighbouring = g.neighbouring;
  PldAccountant pld(own);
  if (pld.unsupported_reason(attained)) return;
  // Both ends found before either is replaced: a lower end is never left half-claimed.
  std::optional<double> epsilon_lower = g.epsilon_lower, delta_lower = g.delta_lower;
  try {
    pld.compose(attained);
    if (g.epsilon_lower) {
      const Guarantee a = pld.epsilon(g.delta);
      if (a.lower_end != LowerEnd::lower_bound || !a.epsilon_lower) return;
      epsilon_lower = a.epsilon_lower;
    }
    if (g.delta_lower) {
      const Guarantee a = pld.delta(g.epsilon);
      if (a.lower_end != LowerEnd::lower_bound || !a.delta_lower) return;
      delta_lower = a.delta_lower;
    }
  } catch (const InvalidParameter&) {
    return;  // a grid pld cannot hold (built lazily): the lower end keeps its own claim
  }
  g.epsilon_lower = epsilon_lower;
  g.delta_lower = delta_lower;
  g.lower_end = LowerEnd::lower_bound;
}

std::optional<Neighbouring> run_neighbouring(const DpSgdRun& run) {
  if (run.sampling == Sampling::shuffle) return run_relation(run);
  return std::nullopt;
}

void mark_recommended(std::vector<AnswerRow>& rows, bool solve_delta) {
  auto target = [&](const Guarantee& g) { return solve_delta ? g.epsilon : g.delta; };
  auto computed = [&](const Guarantee& g) { return solve_delta ? g.delta : g.epsilon; };
  auto sound = [](const AnswerRow& r) {
    return r.role == RowRole::run && r.guarantee.bound == BoundKind::upper;
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].recommended = false;
    if (!sound(rows[i])) continue;
    // The first sound row of its target that no other sound row beats.
    bool best = true;
    for (std::size_t j = 0; best && j < rows.size(); ++j) {
      if (j == i || !sound(rows[j]) || target(rows[j].guarantee) != target(rows[i].guarantee))
        continue;
      const double a = computed(rows[j].guarantee), b = computed(rows[i].guarantee);
      best = j < i ? a > b : a >= b;
    }
    rows[i].recommended = best;
  }
}

Answer answer(const Question& q) {
  Answer out;
  const bool companions = has_companions(q);
  // The Poisson estimate runs on its own thread beside the run's own rows.
  std::vector<std::string> estimate_warnings;
  std::future<std::vector<AnswerRow>> estimate;
  if (companions)
    estimate = std::async(std::launch::async, [&q, &estimate_warnings] {
      return poisson_estimate_rows(q, estimate_warnings);
    });
  std::vector<AnswerRow> rows;
  try {
    rows = run_rows(q, q.accountants, out.skipped);
  } catch (...) {
    if (estimate.valid()) estimate.wait();
    throw;
  }
  std::vector<std::string> accountants;
  for (const auto& r : rows)
    if (std::find(accountants.begin(), accountants.end(), r.guarantee.accountant) ==
        accountants.end())
      accountants.push_back(r.guarantee.accountant);
  if (accountants.empty()) {
    if (estimate.valid()) estimate.wait();
    throw UnsupportedEvent((q.what.empty() ? "" : q.what + ": ") +
                           "no accountant supports this event");
  }
  out.several_accountants = accountants.size() > 1;
  out.rows = std::move(rows);
  if (companions) {
    if (q.run->sampling == Sampling::shuffle)
      for (auto& row : shuffle_lower_rows(q, out.warnings)) out.rows.push_back(std::move(row));
    for (auto& row : estimate.get()) out.rows.push_back(std::move(row));
    for (auto& w : estimate_warnings) out.warnings.push_back(std::move(w));
  }
  mark_recommended(out.rows, q.solve_delta);
  if (q.run) out.notes = run_notes(*q.run, q.solve_delta ? std::vector<double>{} : q.targets);
  return out;
}

BudgetCheck check_budget(const Question& q, const Answer& a, double budget) {
  BudgetCheck out;
  out.row_over.assign(a.rows.size(), false);
  for (double target : q.targets) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < a.rows.size(); ++i)
      if (a.rows[i].recommended && a.rows[i].guarantee.delta == target) best = i;
    const bool over = !best || !(a.rows[*best].guarantee.epsilon <= budget);
    for (std::size_t i = 0; i < a.rows.size(); ++i)
      if (a.rows[i].guarantee.delta == target) out.row_over[i] = over;
    if (!best) {
      out.status = BudgetStatus::no_upper_bound;
    } else if (over) {
      if (out.status == BudgetStatus::within) out.status = BudgetStatus::over;
      out.over_rows.push_back(*best);
    }
  }
  if (out.status != BudgetStatus::no_upper_bound) return out;
  // Which accountants not chosen would give a sound bound for this event
  // (one whose DP-SGD figure is an approximation, gdp's, is left out: it is
  // a bound only when the releases are unsampled Gaussians).
  for (const auto& d : accountants()) {
    const auto& chosen = q.accountants.names;
    if (d.dp_sgd_figure == DpSgdFigure::approximation ||
        std::find(chosen.begin(), chosen.end(), d.name) != chosen.end())
      continue;
    if (!d.make(q.accountants.options)->unsupported_reason(*q.event))
      out.would_bound.push_back(d.name);
  }
  return out;
}

std::vector<AccountantAttackBounds> attack_bounds_each(const Question& q,
                                                       std::span<const double> fprs) {
  std::vector<AccountantAttackBounds> out;
  const bool own_event = event_is_the_run(q);
  for (const auto& name : q.accountants.names) {
    AccountantAttackBounds a{name, std::nullopt, std::nullopt};
    a.unsupported = answer_one(q, q.accountants, name, [&](const Accountant& accountant) {
      a.bounds = accountant.attack_bounds(fprs);
      claim_lower_end(*a.bounds, own_event);
      return std::vector<Neighbouring>{a.bounds->neighbouring};
    });
    if (a.unsupported) a.bounds.reset();
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace dpb
