#include "accounting/dataset_budget.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "accounting/accountant_descriptor.hpp"
#include "accounting/errors.hpp"
#include "accounting/gdp/gdp.hpp"
#include "accounting/gdp/gdp_accountant.hpp"
#include "accounting/numerics/outward.hpp"
#include "accounting/rdp/rdp.hpp"
#include "accounting/rdp/rdp_accountant.hpp"

namespace dpb {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// log(|Λ|) − log(δ) is two logarithms (each within 1 ulp) and a difference
/// (half an ulp): stepped up 4 ulps it is at least the exact value.
constexpr int kLogTermUlps = 4;
/// δ_μ(ε) is evaluated through Φ in log space to a few ulps relative
/// (gdp.hpp); the budget's μ keeps δ_μ(ε) below δ by this relative margin so
/// that the evaluation's error cannot carry it over.
constexpr double kGdpDeltaMargin = 1e-9;
/// gdp_epsilon is accurate to a few ulps (gdp.hpp); a needed ε stepped up
/// this far is not below it.
constexpr int kNeededUlps = 8;
/// Bisection steps for the budget's μ: the bracket [0, 2^7] halved 200 times
/// reaches adjacent doubles long before.
constexpr int kMuBisections = 200;
/// The largest μ the budget's search tries: a budget loose enough to allow
/// more is taken as μ = 128 (smaller than its own: still sound), far beyond
/// any release that protects anyone (128-GDP tells datasets apart almost surely).
constexpr double kMuSearchLimit = 128;

/// Σ into += add at each place, rounded up (outward::sum_up), +inf kept.
void add_up(std::vector<double>& into, std::span<const double> add) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = outward::sum_up(into[i], add[i]);
}

/// used and order of a Rényi filter state (FilterState::used).
void settle_renyi(FilterState& s, std::span<const double> orders) {
  s.used = kInfinity;
  s.order.reset();
  s.within = false;
  for (std::size_t i = 0; i < s.spent.size(); ++i) {
    if (s.spent[i] <= s.budget_curve[i]) s.within = true;
    if (!(s.budget_curve[i] > 0)) continue;
    const double used = s.spent[i] / s.budget_curve[i];
    if (used < s.used) s.used = used;
  }
  // The order named is the one with the most room left (the smallest share
  // used); with nothing spent anywhere, the first order with a positive budget.
  for (std::size_t i = 0; i < s.spent.size(); ++i)
    if (s.budget_curve[i] > 0 && s.spent[i] / s.budget_curve[i] == s.used) {
      s.order = orders[i];
      break;
    }
}

FilterState start_state(const DatasetBudget& budget) {
  FilterState s;
  s.filter = budget.filter;
  if (budget.filter == LedgerFilter::renyi) {
    s.budget_curve = renyi_budget_curve(budget);
    s.spent.assign(budget.orders.size(), 0.0);
  } else {
    s.mu_budget = gdp_budget_mu(budget);
  }
  return s;
}

/// Fills within / used / order from the sums.
void settle(const DatasetBudget& budget, FilterState& s) {
  if (s.filter == LedgerFilter::renyi) {
    settle_renyi(s, budget.orders);
  } else {
    const double cap = outward::product_down(s.mu_budget, s.mu_budget);
    s.within = s.mu_squared <= cap;
    s.used = cap > 0 ? outward::quotient_up(s.mu_squared, cap) : kInfinity;
  }
}

void add_release(FilterState& s, const Contribution& c, const std::string& which) {
  if (s.filter == LedgerFilter::renyi) {
    if (c.rdp.empty() || c.rdp_unusable)
      throw UnsupportedEvent(which + ": the Rényi filter needs the release's RDP curve: " +
                             c.rdp_unusable.value_or("rdp gives none"));
    add_up(s.spent, c.rdp);
  } else {
    if (!c.mu)
      throw UnsupportedEvent(which +
                             ": the Gaussian-DP filter takes only releases that are "
                             "exactly mu-GDP (Gaussian mechanisms): " +
                             c.mu_unusable.value_or("no exact mu"));
    s.mu_squared = outward::sum_up(s.mu_squared, outward::product_up(*c.mu, *c.mu));
  }
}

}  // namespace

std::string_view to_string(LedgerMode mode) {
  return mode == LedgerMode::adaptive ? "adaptive" : "planned";
}

std::string_view to_string(LedgerFilter filter) {
  return filter == LedgerFilter::renyi ? "renyi" : "gdp";
}

void check_dataset_budget(const DatasetBudget& b) {
  if (!(b.epsilon > 0) || !std::isfinite(b.epsilon))
    throw InvalidParameter("epsilon", "must be a finite number > 0");
  if (!(b.delta > 0 && b.delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  if (b.orders.empty()) throw InvalidParameter("orders", "at least one order is needed");
  for (std::size_t i = 0; i < b.orders.size(); ++i) {
    if (!(b.orders[i] > 1) || !std::isfinite(b.orders[i]))
      throw InvalidParameter("orders", "each order must be a finite number > 1");
    if (i > 0 && !(b.orders[i] > b.orders[i - 1]))
      throw InvalidParameter("orders", "orders must be strictly ascending");
  }
}

Contribution contribution_of(const DpEvent& event, const DatasetBudget& budget) {
  Contribution c;
  AccountantOptions options;
  options.neighbouring = budget.neighbouring;
  options.rdp.orders = budget.orders;
  RdpAccountant rdp(options);
  if (auto why = rdp.unsupported_reason(event)) {
    c.rdp_unusable = *why;
  } else {
    try {
      rdp.compose(event);
      c.rdp = rdp.curve();
      if (rdp.has_extra_delta())
        c.rdp_unusable =
            "part of it is (epsilon, delta)-DP with delta > 0, which the RDP curve does not hold";
    } catch (const UnsupportedEvent& e) {
      c.rdp.clear();
      c.rdp_unusable = e.what();
    }
  }
  GdpAccountant gdp(options);
  if (auto why = gdp.unsupported_reason(event)) {
    c.mu_unusable = *why;
  } else {
    try {
      gdp.compose(event);
      if (gdp.exact())
        c.mu = gdp.mu_upper();
      else
        c.mu_unusable = "its mu comes from the central limit theorem (an approximation)";
    } catch (const UnsupportedEvent& e) {
      c.mu_unusable = e.what();
    }
  }
  return c;
}

// docs/ledger.md#renyi-filter: B(α) = ε − log(|Λ|/δ)/(α − 1), rounded down.
std::vector<double> renyi_budget_curve(const DatasetBudget& b) {
  const double log_term =
      outward::up(std::log(static_cast<double>(b.orders.size())) - std::log(b.delta), kLogTermUlps);
  std::vector<double> curve;
  curve.reserve(b.orders.size());
  for (double alpha : b.orders) {
    const double c = outward::quotient_up(log_term, outward::down(alpha - 1, 1));
    curve.push_back(outward::difference_down(b.epsilon, c));
  }
  return curve;
}

// docs/ledger.md#gdp-filter: the largest μ with δ_μ(ε) ≤ δ (Dong, Roth & Su
// 2022, Cor. 2.13: δ_μ(ε) increases with μ), found by bisection and rounded down.
double gdp_budget_mu(const DatasetBudget& b) {
  const double target = b.delta * (1 - kGdpDeltaMargin);
  double lo = 0, hi = kMuSearchLimit;
  for (int i = 0; i < kMuBisections && std::nextafter(lo, hi) < hi; ++i) {
    const double mid = lo + (hi - lo) / 2;
    (gdp_delta(mid, b.epsilon) <= target ? lo : hi) = mid;
  }
  return lo;
}

FilterState filter_state(const DatasetBudget& budget, std::span<const Contribution> releases) {
  FilterState s = start_state(budget);
  for (std::size_t i = 0; i < releases.size(); ++i)
    add_release(s, releases[i], "release " + std::to_string(i + 1));
  settle(budget, s);
  return s;
}

FilterState filter_add(const DatasetBudget& budget, const FilterState& state,
                       const Contribution& next) {
  FilterState s = state;
  add_release(s, next, "the release");
  settle(budget, s);
  return s;
}

std::vector<double> total_curve(const DatasetBudget& budget,
                                std::span<const Contribution> releases) {
  std::vector<double> total(budget.orders.size(), 0.0);
  for (const Contribution& c : releases) add_up(total, c.rdp);
  return total;
}

double curve_epsilon(const DatasetBudget& budget, std::span<const double> curve) {
  return epsilon_from_rdp(budget.orders, curve, budget.delta, RdpConversion::improved).epsilon;
}

double filter_needed_epsilon(const DatasetBudget& budget, const FilterState& state) {
  if (state.filter == LedgerFilter::gdp)
    return outward::up(gdp_epsilon(std::sqrt(outward::up(state.mu_squared, 1)), budget.delta),
                       kNeededUlps);
  // B(α) = ε − c(α), so the state fits a budget ε' iff ε' ≥ Σρ(α) + c(α) at some order.
  const std::vector<double> curve = renyi_budget_curve(budget);
  double needed = kInfinity;
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const double c = outward::difference_down(budget.epsilon, curve[i]);  // ≥ c(α): B rounded down
    needed = std::min(needed, outward::sum_up(state.spent[i], c));
  }
  return needed;
}

double ledger_pld_tolerance(const DatasetBudget& budget, double reference, double tolerance) {
  if (!(reference > 0) || !std::isfinite(reference)) return tolerance;
  return std::max(tolerance, kLedgerPldWidth * budget.epsilon / reference);
}

std::vector<std::string> accountants_that_bound(const DpEvent& event, const DatasetBudget& budget,
                                                std::span<const std::string> excluded) {
  AccountantOptions options;
  options.neighbouring = budget.neighbouring;
  std::vector<std::string> out;
  for (const auto& d : accountants()) {
    if (d.dp_sgd_figure == DpSgdFigure::approximation ||
        std::find(excluded.begin(), excluded.end(), d.name) != excluded.end())
      continue;
    if (!d.make(options)->unsupported_reason(event)) out.push_back(d.name);
  }
  return out;
}

PlannedVerdict planned_gate(const EventPtr& all, const DatasetBudget& budget,
                            std::span<const std::string> accountants,
                            const AccountantOptions& options) {
  PlannedVerdict v;
  // "<name>: <reason>", the name not repeated when the reason starts with it.
  const auto skip = [&](const std::string& name, const std::string& reason) {
    v.skipped.push_back(reason.rfind(name + ":", 0) == 0 ? reason : name + ": " + reason);
  };
  for (const std::string& name : accountants) {
    AccountantOptions o = options;
    o.neighbouring = budget.neighbouring;
    // An accountant asked after a sound upper bound over the budget: its pld
    // interval need only be fine against the budget (docs/ledger.md#planned-precision).
    if (v.smallest_upper)
      o.pld.tolerance = ledger_pld_tolerance(budget, *v.smallest_upper, o.pld.tolerance);
    auto acc = make_accountant(name, o);
    if (auto why = acc->unsupported_reason(*all)) {
      skip(name, *why);
      continue;
    }
    try {
      acc->compose(*all);
    } catch (const UnsupportedEvent& e) {
      skip(name, e.what());
      continue;
    }
    Guarantee g = acc->epsilon(budget.delta);
    if (g.neighbouring != budget.neighbouring) {
      skip(name, "answers under " + std::string(to_string(g.neighbouring)));
      continue;
    }
    const bool sound = g.bound == BoundKind::upper;
    v.guarantees.push_back(g);
    if (!sound) continue;
    if (!v.smallest_upper || g.epsilon < *v.smallest_upper) v.smallest_upper = g.epsilon;
    if (g.epsilon <= budget.epsilon) {
      v.admitted = true;
      break;
    }
  }
  return v;
}

double filter_solve(const DatasetBudget& budget, const FilterState& state, const LedgerOf& next,
                    RunUnknown unknown, const CalibrationSettings& settings) {
  const auto admits = [&](double value) {
    const EventPtr e = next(value);
    return filter_add(budget, state, contribution_of(*e, budget)).within;
  };
  if (unknown == RunUnknown::steps) {
    // The largest count: a count composes more copies, so the filter's sums
    // only grow with it (docs/ledger.md#whats-left).
    if (!admits(1)) throw NoSolution("not even one more fits in what the filter has left");
    std::int64_t lo = 1, hi = 2;
    while (hi < kUnboundedCount && admits(static_cast<double>(hi))) {
      lo = hi;
      hi = std::min(hi * 2, kUnboundedCount);
    }
    if (hi == kUnboundedCount && admits(static_cast<double>(hi))) return static_cast<double>(hi);
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (admits(static_cast<double>(mid)) ? lo : hi) = mid;
    }
    return static_cast<double>(lo);
  }
  // The smallest noise parameter: more noise is a post-processing of less
  // (docs/calibration.md#ledgers), so the sums only fall as it grows.
  double hi = 1;
  while (!admits(hi)) {
    hi *= 2;
    if (hi > settings.max_sigma)
      throw NoSolution("no noise up to " + std::to_string(settings.max_sigma) +
                       " fits in what the filter has left");
  }
  double lo = hi / 2;
  if (admits(lo)) {
    while (lo > std::numeric_limits<double>::min() && admits(lo / 2)) lo /= 2;
    hi = lo;
    lo = hi / 2;
  }
  while (hi - lo > settings.tolerance * hi) {
    const double mid = lo + (hi - lo) / 2;
    (admits(mid) ? hi : lo) = mid;
  }
  return hi;  // admitted: the value evaluated, within the tolerance above the threshold
}

EventPtr compose_releases(std::span<const EventPtr> events) {
  if (events.empty()) return make_event(NoOpEvent{});
  return make_event(ComposedEvent{{events.begin(), events.end()}});
}

}  // namespace dpb
