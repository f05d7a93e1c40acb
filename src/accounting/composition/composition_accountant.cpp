#include "accounting/composition/composition_accountant.hpp"

#include <algorithm>
#include <boost/math/tools/minima.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "accounting/composition/amplification.hpp"
#include "accounting/composition/composition.hpp"
#include "accounting/composition/composition_planner.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "accounting/mechanisms/laplace_mechanism.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

using detail::checked_count_sum;
using detail::collect_steps;
using detail::CollectedSteps;

using Step = CompositionAccountant::Step;

// The search for the split of the total δ between the steps (δ0) and the
// theorem. Every split gives a valid bound; these settings only trade how
// tight the reported split is against time.

/// Solver precision (bits) of optimal_epsilon while the split is searched
/// (~1.5e-11 relative: enough to rank splits; the winner is re-solved at kReportBits).
constexpr int kSearchBits = 36;
/// Solver precision (bits) of the reported ε: full double precision.
constexpr int kReportBits = 52;
/// Brent's precision on the split, in bits: about half of double's 52, the most
/// a minimiser can resolve (near a minimum f changes quadratically).
constexpr int kBrentBits = 24;
/// Brent iteration cap (each iteration evaluates the composed ε or δ once).
constexpr std::uintmax_t kBrentMaxIterations = 60;
/// ε(δ): log δ0 searched over [log δ0_max − 60, log δ0_max]; a δ0 below e^−60
/// (1e-26) of the largest only raises ε0 without buying any slack.
constexpr double kEpsilonSplitLogRange = 60;
/// ε(δ): grid points over that range before Brent (2 nats, ×7.4 in δ0, apart).
constexpr int kEpsilonSplitGrid = 30;
/// δ(ε): the lowest log δ0 searched, e^−700 ≈ 1e-304, next to the smallest
/// normal double (e^−708): the best δ0 can be tiny when the target ε is large.
constexpr double kDeltaSplitLogFloor = -700;
/// δ(ε): grid points over [−700, log δ0_max] before Brent (~10 nats apart).
constexpr int kDeltaSplitGrid = 70;
/// log of a zero total δ for the minimiser: below the log of every positive double.
constexpr double kLogOfZero = -1e300;

// Per-step (ε0, δ0) profile of the mechanism, after amplification
// (docs/composition.md#per-step-profiles).
// δ0 ≤ max_step_delta(step).

/// Relative round-up of the closed-form profiles below (a few roundings).
constexpr double kProfileRoundUp = 8 * std::numeric_limits<double>::epsilon();

/// Whether the step is a sampled one (amplified: docs/composition.md#amplification-poisson).
bool amplified(const Step& s) {
  return s.kind == Step::Kind::sampled_gaussian ||
         ((s.kind == Step::Kind::fixed || s.kind == Step::Kind::zcdp) && s.q < 1);
}

/// Whether the step has a finite ε at δ0 = 0.
bool is_pure(const Step& s) {
  return s.kind == Step::Kind::laplace || (s.kind == Step::Kind::fixed && s.delta == 0) ||
         (s.kind == Step::Kind::zcdp && s.parameter == 0);
}

double max_step_delta(const Step& s) { return amplified(s) ? s.q : 1.0; }

// The (ε, δ) randomized response (Kairouz, Oh & Viswanath 2015, Thm 2.1:
// every (ε, δ)-DP mechanism is a post-processing of it): outputs with
// probabilities (δ, 0, (1−δ)p, (1−δ)(1−p)) against their mirror image,
// p = e^ε/(1 + e^ε), so its hockey-stick divergence at ε0 < ε is
//   δ(ε0) = δ + (1 − δ)(e^ε − e^{ε0})/(1 + e^ε) = δ + (1 − δ)(1 − e^{ε0−ε})/(1 + e^{−ε}).
double fixed_delta(double eps, double delta, double e0) {
  if (e0 >= eps) return delta;
  const double v = delta + (1 - delta) * (-std::expm1(e0 - eps)) / (1 + std::exp(-eps));
  return std::min(1.0, v * (1 + kProfileRoundUp));
}
/// Its inverse: the smallest ε0 with fixed_delta(ε0) ≤ δ0 (inf when δ0 < δ).
double fixed_epsilon(double eps, double delta, double d0) {
  if (d0 < delta) return kInf;
  if (d0 >= 1) return 0;
  const double x = (d0 - delta) / (1 - delta);
  // e^{ε0} = e^ε(1 − x) − x, i.e. ε0 = ε + log((1 − x) − x e^{−ε}).
  const double v = (1 - x) - x * std::exp(-eps);
  if (!(v > std::exp(-eps))) return 0;
  return std::min(eps, (eps + std::log(v)) * (1 + kProfileRoundUp));
}

// (ξ, ρ)-zCDP is (ξ + ρ + 2√(ρ log(1/δ0)), δ0)-DP for every δ0 > 0 (Bun &
// Steinke 2016, Prop. 1.3); inverted, δ(ε0) = exp(−(ε0 − ξ − ρ)²/(4ρ)) above
// ξ + ρ. ρ = 0 is pure ξ-DP (every Rényi divergence, the ∞ one too, ≤ ξ).
double zcdp_epsilon(double rho, double xi, double d0) {
  if (rho == 0) return xi;
  if (d0 >= 1) return xi + rho;
  if (!(d0 > 0)) return kInf;
  return (xi + rho + 2 * std::sqrt(rho * -std::log(d0))) * (1 + kProfileRoundUp);
}
double zcdp_delta(double rho, double xi, double e0) {
  if (rho == 0) return e0 >= xi ? 0 : 1;
  const double t = e0 - xi - rho;
  if (!(t > 0)) return 1;
  return std::min(1.0, std::exp(-t * t / (4 * rho)) * (1 + kProfileRoundUp));
}

/// The profile of the mechanism itself (before sampling).
double base_epsilon(const Step& s, double d0) {
  switch (s.kind) {
    case Step::Kind::gaussian:
    case Step::Kind::sampled_gaussian:
      return gaussian_epsilon(s.parameter, d0);
    case Step::Kind::laplace:
      return laplace_epsilon(s.parameter, d0);
    case Step::Kind::fixed:
      return fixed_epsilon(s.parameter, s.delta, d0);
    case Step::Kind::zcdp:
      return zcdp_epsilon(s.parameter, s.delta, d0);
    case Step::Kind::non_private:
      return kInf;
    case Step::Kind::none:
      return 0;
  }
  return kInf;
}

double base_delta(const Step& s, double e0) {
  switch (s.kind) {
    case Step::Kind::gaussian:
    case Step::Kind::sampled_gaussian:
      return gaussian_delta(s.parameter, e0);
    case Step::Kind::laplace:
      return laplace_delta(s.parameter, e0);
    case Step::Kind::fixed:
      return fixed_delta(s.parameter, s.delta, e0);
    case Step::Kind::zcdp:
      return zcdp_delta(s.parameter, s.delta, e0);
    case Step::Kind::non_private:
      return 1;
    case Step::Kind::none:
      return 0;
  }
  return 1;
}

double step_epsilon(const Step& s, double d0) {
  if (!amplified(s)) return base_epsilon(s, d0);
  if (s.q == 0) return 0;
  const double inner = base_epsilon(s, std::min(1.0, d0 / s.q));
  if (!std::isfinite(inner)) return kInf;
  return amplify_poisson(inner, 0, s.q).epsilon;
}

double step_delta(const Step& s, double e0) {
  if (!amplified(s)) return base_delta(s, e0);
  if (s.q == 0) return 0;
  return s.q * base_delta(s, amplification_inner_epsilon(e0, s.q));
}

// Minimises f over u ∈ [lo, hi]: a coarse grid, then Brent around the best
// grid point. Returns the argmin (any u is a valid split; this only tightens).
double minimise(const std::function<double(double)>& f, double lo, double hi, int grid) {
  if (!(hi > lo)) return hi;
  double best_u = hi;
  double best = f(hi);
  const double h = (hi - lo) / grid;
  int best_i = grid;
  for (int i = 0; i < grid; ++i) {
    const double u = lo + h * i;
    const double v = f(u);
    if (v < best) {
      best = v;
      best_u = u;
      best_i = i;
    }
  }
  if (!std::isfinite(best)) return best_u;
  const double a = std::max(lo, lo + h * (best_i - 1));
  const double b = std::min(hi, lo + h * (best_i + 1));
  std::uintmax_t iters = kBrentMaxIterations;
  const auto r = boost::math::tools::brent_find_minima(f, a, b, kBrentBits, iters);
  return r.second < best ? r.first : best_u;
}

// Heterogeneous ledgers (docs/composition.md#heterogeneous).

using Ledger = CompositionAccountant::Ledger;

/// Ulps of room beyond the m − 1 of a sum of m non-negative terms (each term
/// a product and a tanh or a square: a few roundings more).
constexpr int kHeterogeneousRoomUlps = 4;

/// The relative rounding of a ledger's sums: 2(m + room)·u.
double ledger_rounding(const Ledger& ledger) {
  return 2 * static_cast<double>(ledger.size() + kHeterogeneousRoomUlps) * kU;
}

/// The per-use δ0 of step `s` when every use is given d0: capped at its
/// largest useful δ (a sampled step's q).
double use_delta(const Step& s, double d0) { return std::min(d0, max_step_delta(s)); }

/// The ledger's sums at per-use δ0 = d0: Σ kε, Σ kε·tanh(ε/2) (the means of
/// Kairouz, Oh & Viswanath 2015, Thm 3.5: (e^ε − 1)/(e^ε + 1) = tanh(ε/2)), Σ kε².
struct LedgerSums {
  double epsilon = 0, mean = 0, squares = 0;
};
LedgerSums ledger_sums(const Ledger& ledger, double d0) {
  LedgerSums t;
  for (const auto& [s, k] : ledger) {
    const double e = step_epsilon(s, use_delta(s, d0));
    const double kd = static_cast<double>(k);
    if (!std::isfinite(e)) return {kInf, kInf, kInf};
    t.epsilon += kd * e;
    t.mean += kd * e * std::tanh(e / 2);
    t.squares += kd * e * e;
  }
  return t;
}

/// Σ k·log(1 − δ0) over the ledger: log of the probability that no use takes
/// its δ branch (≤ 0), rounded toward −inf (the side of a smaller slack δ̃
/// and of a larger total δ).
double log_no_delta(const Ledger& ledger, double d0) {
  double sum = 0;
  for (const auto& [s, k] : ledger) sum += static_cast<double>(k) * std::log1p(-use_delta(s, d0));
  return sum * (1 + ledger_rounding(ledger));
}

/// Kairouz, Oh & Viswanath 2015, Thm 3.5, its first and third terms: ε̃ at
/// slack δ̃ ∈ (0, 1] of sums `t` (exact arithmetic; the caller rounds).
double kov_epsilon(const LedgerSums& t, double slack) {
  double e = t.epsilon;
  if (slack > 0 && slack <= 1)
    e = std::min(e, t.mean + std::sqrt(2 * t.squares * -std::log(slack)));
  return e;
}

/// Whether every step of the ledger has a finite ε at δ0 = 0.
bool all_pure(const Ledger& ledger) {
  for (const auto& [s, k] : ledger)
    if (!is_pure(s)) return false;
  return true;
}

/// The largest per-use δ of any step (the search's upper end).
double largest_use_delta(const Ledger& ledger) {
  double d = 0;
  for (const auto& [s, k] : ledger) d = std::max(d, max_step_delta(s));
  return d;
}

/// δ(ε)'s split (docs/composition.md#delta-split): the per-use δ0 in
/// [e^−700, largest] minimising `total_delta`, or 0 when every step is pure
/// and it does at least as well; its total into `total`.
double delta_split(const std::function<double(double)>& total_delta, double largest, bool pure,
                   double& total) {
  const double u = minimise(
      [&](double v) {
        const double t = total_delta(std::exp(v));
        return t > 0 ? std::log(t) : kLogOfZero;
      },
      kDeltaSplitLogFloor, std::log(largest), kDeltaSplitGrid);
  double d0 = std::exp(u);
  total = total_delta(d0);
  if (pure) {
    const double t0 = total_delta(0);
    if (t0 <= total) {
      total = t0;
      d0 = 0;
    }
  }
  return d0;
}

}  // namespace

std::string_view to_string(CompositionMethod m) {
  switch (m) {
    case CompositionMethod::basic:
      return "basic";
    case CompositionMethod::advanced:
      return "advanced";
    case CompositionMethod::optimal:
      return "optimal";
  }
  return "optimal";
}

CompositionAccountant::CompositionAccountant(const AccountantOptions& options)
    : method_(options.composition.method), relation_(options.neighbouring) {}

std::optional<std::string> CompositionAccountant::unsupported_reason(const DpEvent& event) const {
  const CollectedSteps c = collect_steps(event, 1, ledger_, relation_);
  if (c.error) return c.error;
  return count_reason(c.count);
}

std::optional<std::string> CompositionAccountant::count_reason(std::int64_t more) const {
  const auto limit = max_count();
  if (!limit || more <= *limit - count_) return std::nullopt;
  return "composition: optimal composition evaluates at most " + std::to_string(*limit) +
         " steps, this event has " + std::to_string(count_ + more) +
         " (advanced and basic composition, rdp and pld have no such limit)";
}

void CompositionAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (count <= 0) {
    if (auto why = unsupported_reason(event)) throw UnsupportedEvent(*why);
    return;
  }
  const CollectedSteps c = collect_steps(event, count, ledger_, relation_);
  if (c.error) throw UnsupportedEvent(*c.error);
  if (auto why = count_reason(c.count)) throw UnsupportedEvent(*why);
  const std::int64_t total = checked_count_sum(count_, c.count);
  ledger_ = c.ledger;
  count_ = total;
}

std::optional<std::int64_t> CompositionAccountant::max_count() const {
  if (method_ == CompositionMethod::optimal) return kMaxOptimalCount;
  return std::nullopt;
}

Guarantee CompositionAccountant::base() const {
  Guarantee g;
  g.accountant = "composition";
  g.bound = BoundKind::upper;
  g.neighbouring = relation_ ? *relation_
                   : !ledger_.empty() && ledger_.front().first.replace_one
                       ? Neighbouring::replace_one
                       : Neighbouring::add_remove;
  if (ledger_.size() > 1) return g;  // heterogeneous_epsilon / _delta say how
  g.notes.push_back(std::string(to_string(method_)) + " composition of " + std::to_string(count_) +
                    " steps, each (epsilon_step, delta_step)-DP");
  return g;
}

Guarantee CompositionAccountant::epsilon(double delta) const {
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  Guarantee g = base();
  g.delta = delta;
  if (ledger_.empty() || count_ == 0) {
    g.epsilon = 0;
    return g;
  }
  if (ledger_.size() > 1) {
    heterogeneous_epsilon(delta, g);
    return g;
  }
  const Step s = ledger_.front().first;
  const std::int64_t k = count_;
  const double kd = static_cast<double>(k);
  const bool pure = is_pure(s);
  double d0 = 0;
  double eps = kInf;
  double slack = 0;
  // ε of the composition for a per-step δ0; `bits` is the solver precision.
  auto total_eps = [&](double step_d, int bits) -> double {
    try {
      const double e0 = step_epsilon(s, step_d);
      if (!std::isfinite(e0)) return kInf;
      switch (method_) {
        case CompositionMethod::basic:
          return basic_epsilon(e0, step_d, k, delta);
        case CompositionMethod::advanced:
          return advanced_epsilon(e0, step_d, k, delta);
        case CompositionMethod::optimal:
          return optimal_epsilon(e0, step_d, k, delta, bits);
      }
    } catch (const NoSolution&) {
    }
    return kInf;
  };
  if (method_ == CompositionMethod::basic) {
    d0 = std::min(delta / kd, max_step_delta(s));
    while (kd * d0 > delta) d0 = std::nextafter(d0, 0.0);
    eps = total_eps(d0, kReportBits);
  } else {
    // Largest per-step δ0 that leaves room for the theorem's own δ.
    double d0_max =
        method_ == CompositionMethod::advanced ? delta / kd : -std::expm1(std::log1p(-delta) / kd);
    d0_max = std::min(d0_max, max_step_delta(s));
    const double u_hi = std::log(d0_max);
    const double u = minimise([&](double v) { return total_eps(std::exp(v), kSearchBits); },
                              u_hi - kEpsilonSplitLogRange, u_hi, kEpsilonSplitGrid);
    d0 = std::exp(u);
    eps = total_eps(d0, kReportBits);
    if (pure) {
      const double e_pure = total_eps(0, kReportBits);
      if (e_pure <= eps) {
        eps = e_pure;
        d0 = 0;
      }
    }
  }
  if (method_ == CompositionMethod::optimal)
    slack = delta + std::expm1(kd * std::log1p(-d0));  // δ − (1 − (1−δ0)^k)
  else
    slack = delta - kd * d0;
  g.epsilon = eps;
  g.add_count("composed_count", k);
  g.details.insert(
      g.details.end(),
      {{"epsilon_step", step_epsilon(s, d0)}, {"delta_step", d0}, {"delta_slack", slack}});
  return g;
}

Guarantee CompositionAccountant::delta(double epsilon) const {
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  Guarantee g = base();
  g.epsilon = epsilon;
  if (ledger_.empty() || count_ == 0) {
    g.delta = 0;
    return g;
  }
  if (ledger_.size() > 1) {
    heterogeneous_delta(epsilon, g);
    return g;
  }
  const Step s = ledger_.front().first;
  const std::int64_t k = count_;
  const double kd = static_cast<double>(k);
  const bool pure = is_pure(s);
  // δ of the composition at ε for a per-step δ0 (ε0 from the step's profile).
  auto total_delta = [&](double step_d) -> double {
    const double e0 = step_epsilon(s, step_d);
    if (!std::isfinite(e0)) return 1;
    if (method_ == CompositionMethod::advanced) {
      try {
        return advanced_delta(e0, step_d, k, epsilon);
      } catch (const NoSolution&) {
        return 1;  // ε at or below the theorem's kε0(e^ε0 − 1): only the trivial δ = 1
      }
    }
    return optimal_delta(e0, step_d, k, epsilon);
  };
  double d0 = 0;
  double total = 1;
  double e0 = 0;
  if (method_ == CompositionMethod::basic) {
    e0 = epsilon / kd;
    d0 = step_delta(s, e0);
    total = std::min(1.0, kd * d0);
  } else {
    d0 = delta_split(total_delta, max_step_delta(s), pure, total);
    e0 = step_epsilon(s, d0);
  }
  const double slack = method_ == CompositionMethod::optimal
                           ? total + std::expm1(kd * std::log1p(-d0))
                           : total - kd * d0;
  g.delta = total;
  g.add_count("composed_count", k);
  g.details.insert(g.details.end(),
                   {{"epsilon_step", e0}, {"delta_step", d0}, {"delta_slack", slack}});
  return g;
}

namespace {

/// The notes of a heterogeneous answer: how the ledger was composed.
void heterogeneous_notes(Guarantee& g, CompositionMethod method, std::int64_t count,
                         std::size_t distinct) {
  const std::string steps = std::to_string(count) + " steps of " + std::to_string(distinct) +
                            " different kinds, each use (its epsilon, delta_step)-DP";
  if (method == CompositionMethod::basic) {
    g.notes.push_back("basic composition of " + steps);
    return;
  }
  g.notes.push_back("heterogeneous advanced composition of " + steps +
                    " (Kairouz, Oh & Viswanath 2015, Thm 3.5)");
  if (method == CompositionMethod::optimal)
    g.notes.push_back(
        "optimal composition is for one repeated (epsilon, delta); for different steps it is "
        "#P-complete to evaluate (Murtagh & Vadhan 2016), so the advanced bound is given");
}

}  // namespace

void CompositionAccountant::heterogeneous_epsilon(double delta, Guarantee& g) const {
  const Ledger& l = ledger_;
  const double kd = static_cast<double>(count_);
  const double r = ledger_rounding(l);
  double d0 = 0, eps = kInf, slack = 0;
  if (method_ == CompositionMethod::basic) {
    // (Σ kε, Σ kδ0): every use δ/K (Dwork & Roth 2014, Thm 3.16).
    d0 = delta / kd;
    while (kd * d0 > delta) d0 = std::nextafter(d0, 0.0);
    eps = ledger_sums(l, d0).epsilon * (1 + r);
    double used = 0;
    for (const auto& [s, k] : l) used += static_cast<double>(k) * use_delta(s, d0);
    slack = delta - used;
  } else {
    // δ̃ = 1 − (1 − δ)/Π(1 − δ0)^k, rounded down; ε̃ of Thm 3.5, rounded up.
    auto slack_at = [&](double step_d) {
      // log(1 − δ) toward 0 and the ledger's sum toward −inf: a smaller δ̃.
      return -std::expm1(std::log1p(-delta) * (1 - r) - log_no_delta(l, step_d)) * (1 - r);
    };
    auto total_eps = [&](double step_d) {
      const double t_slack = slack_at(step_d);
      if (!(t_slack > 0)) return kInf;
      return kov_epsilon(ledger_sums(l, step_d), t_slack) * (1 + r);
    };
    const double d0_max = std::min(-std::expm1(std::log1p(-delta) / kd), largest_use_delta(l));
    const double u_hi = std::log(d0_max);
    const double u = minimise([&](double v) { return total_eps(std::exp(v)); },
                              u_hi - kEpsilonSplitLogRange, u_hi, kEpsilonSplitGrid);
    d0 = std::exp(u);
    eps = total_eps(d0);
    if (all_pure(l)) {
      const double e_pure = total_eps(0);
      if (e_pure <= eps) {
        eps = e_pure;
        d0 = 0;
      }
    }
    slack = slack_at(d0);
  }
  g.epsilon = eps;
  g.add_count("composed_count", count_);
  g.add_count("distinct_steps", static_cast<std::int64_t>(l.size()));
  g.details.insert(g.details.end(), {{"delta_step", d0}, {"delta_slack", slack}});
  heterogeneous_notes(g, method_, count_, l.size());
}

void CompositionAccountant::heterogeneous_delta(double epsilon, Guarantee& g) const {
  const Ledger& l = ledger_;
  const double kd = static_cast<double>(count_);
  const double r = ledger_rounding(l);
  double d0 = 0, total = 1, slack = 0;
  if (method_ == CompositionMethod::basic) {
    // Every use ε/K: Σ kδ(ε/K) (Dwork & Roth 2014, Thm 3.16).
    const double e0 = epsilon / kd;
    double sum = 0;
    for (const auto& [s, k] : l) sum += static_cast<double>(k) * step_delta(s, e0);
    total = std::min(1.0, sum * (1 + r));
  } else {
    // The smallest δ̃ whose ε̃ (Thm 3.5) fits ε, rounded up: δ̃ = 0 when
    // Σ kε ≤ ε; else exp(−(ε − A)²/(2S)) with A and S rounded up and the
    // exponent down.
    auto slack_at = [&](const LedgerSums& t) {
      if (t.epsilon <= epsilon) return 0.0;
      const double mean = t.mean * (1 + r), squares = t.squares * (1 + r);
      if (!(epsilon > mean) || !(squares > 0) || !std::isfinite(squares)) return 1.0;
      const double gap = (epsilon - mean) * (1 - r);
      const double exponent = gap * gap / (2 * squares) * (1 - r);
      return std::min(1.0, std::exp(-exponent) * (1 + r));
    };
    auto total_delta = [&](double step_d) {
      const LedgerSums t = ledger_sums(l, step_d);
      if (!std::isfinite(t.epsilon)) return 1.0;
      const double t_slack = slack_at(t);
      const double v = -std::expm1(std::log1p(-t_slack) * (1 + r) + log_no_delta(l, step_d));
      return std::min(1.0, v * (1 + r));
    };
    d0 = delta_split(total_delta, largest_use_delta(l), all_pure(l), total);
    slack = slack_at(ledger_sums(l, d0));
  }
  g.delta = total;
  g.add_count("composed_count", count_);
  g.add_count("distinct_steps", static_cast<std::int64_t>(l.size()));
  if (method_ == CompositionMethod::basic)
    g.details.emplace_back("epsilon_step", epsilon / kd);
  else
    g.details.insert(g.details.end(), {{"delta_step", d0}, {"delta_slack", slack}});
  heterogeneous_notes(g, method_, count_, l.size());
}

}  // namespace dpb
