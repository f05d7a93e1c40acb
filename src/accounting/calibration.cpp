#include "accounting/calibration.hpp"

#include <algorithm>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "accounting/errors.hpp"

namespace dpb {

Guarantee EpsilonOracle::operator()(const DpEvent& event) const {
  auto acc = make_accountant(accountant, options);
  acc->compose(event);
  return acc->epsilon(delta);
}

namespace {

bool fits(const Guarantee& g, double target) { return g.epsilon <= target; }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

SigmaSolution smallest_noise_multiplier(const std::function<EventPtr(double)>& event_of,
                                        const EpsilonOracle& oracle, double target_epsilon,
                                        double tolerance, double max_sigma) {
  std::map<double, Guarantee> seen;  // every evaluation, by σ (each one fresh)
  auto eval = [&](double s) -> const Guarantee& {
    auto it = seen.find(s);
    if (it == seen.end()) it = seen.emplace(s, oracle(*event_of(s))).first;
    return it->second;
  };
  auto verified = [&](double s) -> SigmaSolution {
    if (!fits(eval(s), target_epsilon))  // cannot happen: every hi was checked
      throw NoSolution("no noise multiplier found for epsilon " + num(target_epsilon));
    return {s, eval(s)};
  };

  // Bracket lo < hi with ε(lo) > target ≥ ε(hi), doubling / halving from 1.
  double hi = std::min(1.0, max_sigma), lo = 0;
  while (!fits(eval(hi), target_epsilon)) {
    if (hi >= max_sigma)
      throw NoSolution("epsilon " + num(target_epsilon) + " needs a noise multiplier above " +
                       num(max_sigma) + " (--max-sigma); at that sigma epsilon is " +
                       num(eval(hi).epsilon));
    lo = hi;
    hi = std::min(2 * hi, max_sigma);
  }
  if (lo == 0) {
    lo = hi / 2;
    while (fits(eval(lo), target_epsilon)) {
      hi = lo;
      lo /= 2;
      if (lo < 1e-12) return verified(hi);  // ε ≤ target at any σ (e.g. q = 0): σ → 0⁺
    }
  }
  // Root of f(x) = log ε(e^x) − log target by TOMS 748 (Alefeld, Potra & Shi
  // 1995), which keeps the bracket: f(log lo) > 0 ≥ f(log hi) throughout, so
  // hi stays a σ that fits. Geometric bisection first while ε is not finite
  // and positive at both ends (log needs it).
  auto f = [&](double x) { return std::log(eval(std::exp(x)).epsilon) - std::log(target_epsilon); };
  auto finite_log = [&](double s) {
    const double e = eval(s).epsilon;
    return e > 0 && std::isfinite(e);
  };
  while (hi / lo - 1 > tolerance && (!finite_log(lo) || !finite_log(hi) || target_epsilon == 0)) {
    const double mid = std::sqrt(lo * hi);
    if (mid <= lo || mid >= hi) break;
    (fits(eval(mid), target_epsilon) ? hi : lo) = mid;
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
    hi = fits(eval(s1), target_epsilon) ? s1 : s2;
  }
  return verified(hi);
}

CountSolution largest_integer(const std::function<EventPtr(std::int64_t)>& event_of,
                              const EpsilonOracle& oracle, double target_epsilon, std::int64_t lo,
                              std::int64_t hi) {
  auto eval = [&](std::int64_t n) { return oracle(*event_of(n)); };
  Guarantee g_lo = eval(lo);
  if (!fits(g_lo, target_epsilon))
    throw NoSolution("even " + std::to_string(lo) + " gives epsilon " + num(g_lo.epsilon) + " > " +
                     num(target_epsilon));
  Guarantee g_hi = eval(hi);
  if (fits(g_hi, target_epsilon)) return {hi, g_hi};
  // Invariant: ε(lo) ≤ target < ε(hi).
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    Guarantee g = eval(mid);
    if (fits(g, target_epsilon)) {
      lo = mid;
      g_lo = std::move(g);
    } else {
      hi = mid;
    }
  }
  return {lo, g_lo};
}

CountSolution largest_count(const std::function<EventPtr(std::int64_t)>& event_of,
                            const EpsilonOracle& oracle, double target_epsilon) {
  auto eval = [&](std::int64_t n) { return oracle(*event_of(n)); };
  const Guarantee g1 = eval(1);
  if (!fits(g1, target_epsilon))
    throw NoSolution("one step already spends epsilon " + num(g1.epsilon) + " > " +
                     num(target_epsilon));
  // A closed form (RDP, SPEC §8) gives the answer up to rounding: check it and
  // its neighbour, and fall back to the search when the check fails.
  auto acc = make_accountant(oracle.accountant, oracle.options);
  if (auto hint = acc->largest_count_hint(*event_of(1), target_epsilon, oracle.delta)) {
    const std::int64_t n = std::clamp<std::int64_t>(*hint, 1, kUnboundedCount);
    Guarantee g = eval(n);
    if (fits(g, target_epsilon) && (n == kUnboundedCount || !fits(eval(n + 1), target_epsilon)))
      return {n, g};
  }
  // Exponential search for a failing count, then bisection.
  std::int64_t lo = 1, hi = 2;
  Guarantee g_lo = g1;
  for (;;) {
    Guarantee g = eval(hi);
    if (!fits(g, target_epsilon)) break;
    lo = hi;
    g_lo = std::move(g);
    if (hi >= kUnboundedCount) return {kUnboundedCount, g_lo};
    hi = std::min(2 * hi, kUnboundedCount);
  }
  if (hi - lo <= 1) return {lo, g_lo};
  return largest_integer(event_of, oracle, target_epsilon, lo, hi);
}

RateSolution largest_value(const std::function<EventPtr(double)>& event_of,
                           const EpsilonOracle& oracle, double target_epsilon, double lo, double hi,
                           double tolerance) {
  auto eval = [&](double x) { return oracle(*event_of(x)); };
  Guarantee g_lo = eval(lo);
  if (!fits(g_lo, target_epsilon))
    throw NoSolution("even " + num(lo) + " gives epsilon " + num(g_lo.epsilon) + " > " +
                     num(target_epsilon));
  Guarantee g_hi = eval(hi);
  if (fits(g_hi, target_epsilon)) return {hi, g_hi};
  // Invariant: ε(lo) ≤ target < ε(hi); stop when hi − lo ≤ tolerance·hi.
  while (hi - lo > tolerance * hi) {
    const double mid = lo > 0 && hi / lo > 4 ? std::sqrt(lo * hi) : lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    Guarantee g = eval(mid);
    if (fits(g, target_epsilon)) {
      lo = mid;
      g_lo = std::move(g);
    } else {
      hi = mid;
    }
  }
  return {lo, g_lo};
}

}  // namespace dpb
