#include "accounting/dpsgd/calibration.hpp"

#include <algorithm>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "accounting/accountant_descriptor.hpp"
#include "accounting/errors.hpp"

namespace dpb {

Guarantee EpsilonOracle::operator()(const DpEvent& event) const {
  auto acc = make_accountant(accountant, options);
  acc->compose(event);
  switch (measure) {
    case Measure::epsilon:
      return acc->epsilon(delta);
    case Measure::tpr: {
      const double fprs[] = {fpr};
      const AttackBounds b = acc->attack_bounds(fprs);
      Guarantee g;
      g.accountant = b.accountant;
      g.bound = b.bound;
      g.neighbouring = b.neighbouring;
      g.epsilon = b.tpr.front();
      g.details = b.details;
      g.details.emplace_back("fpr", fpr);
      g.details.emplace_back("tpr", b.tpr.front());
      g.notes = b.notes;
      return g;
    }
    case Measure::advantage: {
      // The advantage max_x (TPR(x) − x) is the total variation distance, δ(0).
      Guarantee g = acc->delta(0);
      g.epsilon = g.delta;
      g.details.emplace_back("advantage", g.delta);
      return g;
    }
  }
  throw InvalidParameter("measure", "unknown");
}

std::string EpsilonOracle::quantity() const {
  switch (measure) {
    case Measure::epsilon:
      return "epsilon";
    case Measure::tpr: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "the TPR bound at FPR %.6g", fpr);
      return buf;
    }
    case Measure::advantage:
      return "the advantage";
  }
  return "epsilon";
}

namespace {

bool fits(const Guarantee& g, double target) { return g.epsilon <= target; }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Where a costly accountant starts its σ search: a cheaper accountant's σ
// for the same target (the accountant its descriptor names,
// AccountantDescriptor::sigma_hint_from). A PLD evaluation composes on a grid
// of 10^5–10^6 points (tens of ms), and the search from σ = 1 spends most of
// its time far from the answer (σ = 1, 2, 4, …; issue 17). RDP's σ is a few
// per cent above PLD's (its conversion to (ε, δ) is looser: 5–9% at
// q = 0.01), so the bracket [σ_rdp / kHintStep, σ_rdp] usually holds PLD's σ.
// Only a starting point: the bracket is checked like any other, and a failed
// hint (an event the cheaper accountant refuses, a target it cannot meet)
// starts from 1.

/// The hint is solved only this closely (relative): a starting point.
constexpr double kHintTolerance = 1e-2;
/// First step from the hint, down (or up), before the usual halving (doubling).
constexpr double kHintStep = 1.25;

std::optional<double> sigma_hint(const std::function<EventPtr(double)>& event_of,
                                 const EpsilonOracle& oracle, double target_epsilon,
                                 double max_sigma) {
  const AccountantDescriptor* asked = find_accountant(oracle.accountant);
  if (!asked || asked->sigma_hint_from.empty()) return std::nullopt;
  EpsilonOracle cheaper = oracle;
  cheaper.accountant = asked->sigma_hint_from;
  try {
    return smallest_noise_multiplier(event_of, cheaper, target_epsilon, kHintTolerance, max_sigma)
        .noise_multiplier;
  } catch (const std::exception&) {
    return std::nullopt;  // no hint: the search starts from 1
  }
}

}  // namespace

SigmaSolution smallest_noise_multiplier(const std::function<EventPtr(double)>& event_of,
                                        const EpsilonOracle& oracle, double target_epsilon,
                                        double tolerance, double max_sigma) {
  // The accountant's re-ask margin (AccountantDescriptor::reask_margin).
  const AccountantDescriptor* asked = find_accountant(oracle.accountant);
  const double goal = target_epsilon * (1 - (asked ? asked->reask_margin : 0.0));
  auto sigma_fits = [goal](const Guarantee& g) { return g.epsilon <= goal; };
  std::map<double, Guarantee> seen;  // every evaluation, by σ (each one fresh)
  auto eval = [&](double s) -> const Guarantee& {
    auto it = seen.find(s);
    if (it == seen.end()) it = seen.emplace(s, oracle(*event_of(s))).first;
    return it->second;
  };
  auto verified = [&](double s) -> SigmaSolution {
    if (!sigma_fits(eval(s)))  // cannot happen: every hi was checked
      throw NoSolution("no noise multiplier found for " + oracle.quantity() + " " +
                       num(target_epsilon));
    return {s, eval(s)};
  };

  // Bracket lo < hi with ε(lo) > target ≥ ε(hi), from 1 (or a cheaper
  // accountant's σ, first step kHintStep): upward at least doubling, and past
  // 1.5 times the σ where the last two failing σ, extrapolated in log ε
  // against log σ, reach the target (at most ×64 per step, so a target out of
  // reach is found in a few evaluations); downward by halving.
  double start = 1, first_step = 2;
  if (const auto hint = sigma_hint(event_of, oracle, target_epsilon, max_sigma)) {
    start = *hint;
    first_step = kHintStep;
  }
  double hi = std::min(start, max_sigma), lo = 0, step = first_step;
  while (!sigma_fits(eval(hi))) {
    if (hi >= max_sigma)
      throw NoSolution(oracle.quantity() + " " + num(target_epsilon) +
                       " needs a noise multiplier above " + num(max_sigma) +
                       " (--max-sigma); at that sigma " + oracle.quantity() + " is " +
                       num(eval(hi).epsilon));
    double next = step * hi;
    step = 2;
    if (lo > 0) {
      const double e_lo = eval(lo).epsilon, e_hi = eval(hi).epsilon;
      if (std::isfinite(e_lo) && e_hi > 0 && e_lo > e_hi && target_epsilon > 0) {
        const double slope = std::log(e_lo / e_hi) / std::log(hi / lo);
        const double predicted = hi * std::exp(std::log(e_hi / target_epsilon) / slope);
        if (std::isfinite(predicted)) next = std::max(next, 1.5 * predicted);
        next = std::min(next, 64 * hi);
      }
    }
    lo = hi;
    hi = std::min(next, max_sigma);
  }
  if (lo == 0) {
    lo = hi / first_step;
    while (sigma_fits(eval(lo))) {
      hi = lo;
      lo /= 2;
      if (lo < 1e-12) return verified(hi);  // ε ≤ target at any σ (e.g. q = 0): σ → 0⁺
    }
  }
  // Root of f(x) = log ε(e^x) − log target by TOMS 748 (Alefeld, Potra & Shi
  // 1995), which keeps the bracket: f(log lo) > 0 ≥ f(log hi) throughout, so
  // hi stays a σ that fits. Geometric bisection first while ε is not finite
  // and positive at both ends (log needs it).
  // The root sought is that of the goal (the target less the re-ask margin).
  auto f = [&](double x) { return std::log(eval(std::exp(x)).epsilon) - std::log(goal); };
  auto finite_log = [&](double s) {
    const double e = eval(s).epsilon;
    return e > 0 && std::isfinite(e);
  };
  while (hi / lo - 1 > tolerance && (!finite_log(lo) || !finite_log(hi) || target_epsilon == 0)) {
    const double mid = std::sqrt(lo * hi);
    if (mid <= lo || mid >= hi) break;
    (sigma_fits(eval(mid)) ? hi : lo) = mid;
  }
  if (hi / lo - 1 > tolerance && std::log(hi) > std::log(lo)) {
    const double a = std::log(lo), b = std::log(hi);
    const double fa = f(a), fb = f(b);
    if (fb == 0) return verified(hi);
    std::uintmax_t max_iter = 200;
    const double width = std::log1p(tolerance);
    const auto r = boost::math::tools::toms748_solve(
        f, a, b, fa, fb, [width](double u, double v) { return std::abs(v - u) <= width; },
        max_iter);
    // r.second keeps the sign of f(b) ≤ 0 (unless f hit 0 exactly at r.first).
    const double s1 = std::exp(r.first), s2 = std::exp(r.second);
    hi = sigma_fits(eval(s1)) ? s1 : s2;
  }
  return verified(hi);
}

namespace {

/// log(ε / target): ≤ 0 exactly when ε fits (−inf at ε = 0, +inf at ε = inf).
double log_excess(const Guarantee& g, double target) {
  return std::log(g.epsilon) - std::log(target);
}

/// Narrows a bracket lo < hi with ε(lo) ≤ target < ε(hi) to the largest value
/// that fits: to adjacent integers (`Value` = int64) or to hi − lo ≤
/// tolerance·hi (double). ε is close to a power of the value, so each step
/// interpolates log ε linearly in log x between the ends (regula falsi with
/// the Illinois modification: an end kept twice has its weight halved);
/// after two steps that did not halve the bracket it bisects instead. The
/// invariant is kept whatever ε does, so a non-monotone ε costs steps, not
/// correctness: the returned value was evaluated and fits.
template <class Value>
std::pair<Value, Guarantee> narrow(const std::function<Guarantee(Value)>& eval, double target,
                                   Value lo, Guarantee g_lo, Value hi, Guarantee g_hi,
                                   double tolerance) {
  constexpr bool integral = std::is_integral_v<Value>;
  auto done = [&] {
    if constexpr (integral)
      return hi - lo <= 1;
    else
      return hi - lo <= tolerance * hi;
  };
  double fa = log_excess(g_lo, target), fb = log_excess(g_hi, target);
  int last = 0;  // +1: lo moved last, −1: hi moved last
  int slow = 0;  // consecutive steps that did not halve the bracket
  while (!done()) {
    const Value width = hi - lo;
    const auto dlo = static_cast<double>(lo), dhi = static_cast<double>(hi);
    double x = lo > 0 && dhi / dlo > 4 ? std::sqrt(dlo * dhi) : dlo + (dhi - dlo) / 2;
    if (slow < 2 && lo > 0 && std::isfinite(fa) && std::isfinite(fb) && fb > fa) {
      const double a = std::log(dlo), b = std::log(dhi);
      const double guess = std::exp(a + (b - a) * (-fa / (fb - fa)));
      if (std::isfinite(guess)) x = guess;
    } else if (lo == 0 && std::isfinite(fb) && fb > 0) {
      // No log at 0: take ε ∝ x near 0 (amplification by sampling), and at
      // most a factor 1000 down per step.
      x = dhi * std::clamp(std::exp(-fb), 1e-3, 0.5);
    }
    Value mid;
    if constexpr (integral) {
      mid = std::clamp<Value>(static_cast<Value>(std::llround(std::clamp(x, dlo, dhi))), lo + 1,
                              hi - 1);
    } else {
      // Stay a little inside so that every step shrinks the bracket.
      const double margin = (dhi - dlo) / 64;
      mid = std::clamp(x, lo > 0 ? dlo + margin : dlo, dhi - margin);
      if (!(mid > lo && mid < hi)) break;
    }
    Guarantee g = eval(mid);
    if (fits(g, target)) {
      lo = mid;
      fa = log_excess(g, target);
      g_lo = std::move(g);
      if (last == 1) fb /= 2;
      last = 1;
    } else {
      hi = mid;
      fb = log_excess(g, target);
      g_hi = std::move(g);
      if (last == -1) fa /= 2;
      last = -1;
    }
    slow = 2 * (hi - lo) > width ? slow + 1 : 0;
  }
  // The answer is the accountant's limit rather than the budget's: say so.
  if (std::isinf(g_hi.epsilon) && g_lo.epsilon < target) {
    std::string why = "the accountant gives epsilon inf just above this value";
    if (!g_hi.notes.empty()) why += " (" + g_hi.notes.back() + ")";
    g_lo.notes.push_back(why);
  }
  return {lo, std::move(g_lo)};
}

}  // namespace

CountSolution largest_integer(const std::function<EventPtr(std::int64_t)>& event_of,
                              const EpsilonOracle& oracle, double target_epsilon, std::int64_t lo,
                              std::int64_t hi) {
  const std::function<Guarantee(std::int64_t)> eval = [&](std::int64_t n) {
    return oracle(*event_of(n));
  };
  Guarantee g_lo = eval(lo);
  if (!fits(g_lo, target_epsilon))
    throw NoSolution("even " + std::to_string(lo) + " gives " + oracle.quantity() + " " +
                     num(g_lo.epsilon) + " > " + num(target_epsilon));
  Guarantee g_hi = eval(hi);
  if (fits(g_hi, target_epsilon)) return {hi, g_hi};
  auto [n, g] = narrow(eval, target_epsilon, lo, std::move(g_lo), hi, std::move(g_hi), 0.0);
  return {n, std::move(g)};
}

CountSolution largest_count(const std::function<EventPtr(std::int64_t)>& event_of,
                            const EpsilonOracle& oracle, double target_epsilon) {
  const std::function<Guarantee(std::int64_t)> eval = [&](std::int64_t n) {
    return oracle(*event_of(n));
  };
  const Guarantee g1 = eval(1);
  if (!fits(g1, target_epsilon))
    throw NoSolution((oracle.measure == Measure::epsilon
                          ? "one step already spends epsilon "
                          : "one step already gives " + oracle.quantity() + " ") +
                     num(g1.epsilon) + " > " + num(target_epsilon));
  // A closed form (RDP, docs/rdp.md#steps-closed-form) gives the answer up to rounding: check it
  // and its neighbour, and fall back to the search when the check fails.
  auto acc = make_accountant(oracle.accountant, oracle.options);
  // (The closed form is of ε only.)
  if (auto hint = oracle.measure == Measure::epsilon
                      ? acc->largest_count_hint(*event_of(1), target_epsilon, oracle.delta)
                      : std::nullopt) {
    const std::int64_t n = std::clamp<std::int64_t>(*hint, 1, kUnboundedCount);
    Guarantee g = eval(n);
    if (fits(g, target_epsilon) && (n == kUnboundedCount || !fits(eval(n + 1), target_epsilon)))
      return {n, g};
  }
  const std::int64_t limit = std::min(acc->max_count().value_or(kUnboundedCount), kUnboundedCount);
  // Search upward for a count that does not fit: at least doubling, and past
  // twice the count where the last two fitting counts, extrapolated in
  // log ε against log n, reach the target (at most ×64 per step).
  std::int64_t lo = 1, prev = 0;
  Guarantee g_lo = g1;
  double prev_eps = 0;
  for (;;) {
    double next = 2 * static_cast<double>(lo);
    if (g_lo.epsilon == 0) {
      next = 64 * static_cast<double>(lo);
    } else if (prev > 0 && prev_eps > 0 && g_lo.epsilon > prev_eps) {
      const double slope = std::log(g_lo.epsilon / prev_eps) /
                           std::log(static_cast<double>(lo) / static_cast<double>(prev));
      const double predicted =
          static_cast<double>(lo) * std::exp(std::log(target_epsilon / g_lo.epsilon) / slope);
      if (std::isfinite(predicted)) next = std::max(next, 2 * predicted);
      next = std::min(next, 64 * static_cast<double>(lo));
    }
    const std::int64_t hi =
        next >= static_cast<double>(limit) ? limit : static_cast<std::int64_t>(next);
    if (hi <= lo) {
      if (limit == kUnboundedCount) return {kUnboundedCount, g_lo};
      throw NoSolution("every count up to " + std::to_string(limit) + " fits, and the " +
                       oracle.accountant + " accountant evaluates at most " +
                       std::to_string(limit) + " (rdp and pld evaluate more)");
    }
    Guarantee g = eval(hi);
    if (!fits(g, target_epsilon)) {
      if (hi - lo <= 1) return {lo, g_lo};
      auto [n, gn] = narrow(eval, target_epsilon, lo, std::move(g_lo), hi, std::move(g), 0.0);
      return {n, std::move(gn)};
    }
    prev = lo;
    prev_eps = g_lo.epsilon;
    lo = hi;
    g_lo = std::move(g);
  }
}

RateSolution largest_value(const std::function<EventPtr(double)>& event_of,
                           const EpsilonOracle& oracle, double target_epsilon, double lo, double hi,
                           double tolerance) {
  const std::function<Guarantee(double)> eval = [&](double x) { return oracle(*event_of(x)); };
  Guarantee g_lo = eval(lo);
  if (!fits(g_lo, target_epsilon))
    throw NoSolution("even " + num(lo) + " gives " + oracle.quantity() + " " + num(g_lo.epsilon) +
                     " > " + num(target_epsilon));
  Guarantee g_hi = eval(hi);
  if (fits(g_hi, target_epsilon)) return {hi, g_hi};
  auto [x, g] = narrow(eval, target_epsilon, lo, std::move(g_lo), hi, std::move(g_hi), tolerance);
  return {x, std::move(g)};
}

}  // namespace dpb
