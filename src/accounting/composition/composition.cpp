#include "accounting/composition/composition.hpp"

#include <algorithm>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "accounting/errors.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/normal.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

constexpr double kLog2Pi = 1.8378770664093454836;
/// One unit in the last place, relative (2^-52): the first step of every nudge below.
constexpr double kUlp = 0x1p-52;
/// Up to n = 100 the Stirling error comes from lgamma in long double; above, its
/// series, whose first omitted term is < 1e-21 there.
constexpr double kStirlingSeriesFrom = 100;
/// The deviance by its series in v = (x−m)/(x+m) when |v| < 0.1 (each term 100×
/// smaller), where x·log(x/m) + m − x would cancel.
constexpr double kDevianceSeriesBand = 0.1;
/// Cap on the deviance series; with |v| < 0.1 it converges in fewer than 20 terms.
constexpr int kDevianceMaxTerms = 1000;
/// Stop summing one side of the optimal sum when its tail bound is below this
/// fraction of the sum: far below double rounding (1.1e-16).
constexpr double kTailStop = 1e-18;
/// log δ_opt is clamped here for the root finder, below the log of the smallest
/// double (−745), so the solver never sees −inf.
constexpr double kLogDeltaFloor = -3000;
/// TOMS 748 iteration cap, a safety net: the root is bracketed and the function monotone.
constexpr std::uintmax_t kSolverMaxIterations = 300;
/// Full double precision: the default tolerance of optimal_epsilon, in bits.
constexpr int kFullPrecisionBits = 52;
/// Steps of growing size (a few ulps at first) that move a root found by the
/// solver onto the safe side of the very function callers evaluate.
constexpr int kOptimalNudgeSteps = 200;
/// Ulps of |log| in the log of the peak term of the optimal sum: Loader's
/// Stirling errors, deviances and half-log (each a few roundings of
/// magnitude ≤ |log Bin|, accurate to ~1e-15 relative, Loader 2000) and the
/// log of the factor; 16 cover them with room.
constexpr double kOptimalLogUlps = 16;
/// Ulps of the sum of the optimal terms relative to the peak: its additions
/// (positive terms, ≤ u each relative to the sum once it has settled near
/// the peak) and each factor's expm1 (≤ 2u): 16 with room.
constexpr double kOptimalSumUlps = 16;
/// The absolute rounding error of the gap ε' − (k − 2l)ε among subnormal
/// numbers: a product and a difference, each off by up to half the smallest
/// double there; two smallest doubles.
constexpr double kSubnormalGapError = 2 * std::numeric_limits<double>::denorm_min();
/// The advanced δ' nudge doubles its step from one ulp: 64 doublings reach any δ' ≤ 1.
constexpr int kAdvancedNudgeSteps = 64;
/// Ulps by which the advanced bound's ε is stepped up: ε·√(2k·(−log δ')) has
/// a log (≤ 1 ulp), three products and a square root (which halves the
/// relative error under it): ≤ 4u; kε·expm1(ε) two products and an expm1:
/// ≤ 3u; the sum of two positive terms one more: ≤ 5u relative in all, i.e.
/// ≤ 5 ulps (an ulp is ≥ u relative); 16 leave room for second-order terms.
constexpr int kAdvancedUlps = 16;
/// kδ + δ': a product and a sum of positive terms, ≤ 2u relative: 4 ulps
/// (twice that, for room).
constexpr int kAdvancedDeltaUlps = 4;

void check_eps(double epsilon, const char* field = "epsilon") {
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    throw InvalidParameter(field, "must be a finite number >= 0");
}
void check_delta(double delta, const char* field = "delta") {
  if (!(delta >= 0 && delta <= 1)) throw InvalidParameter(field, "must be in [0, 1]");
}
void check_k(std::int64_t k) {
  if (k < 0) throw InvalidParameter("count", "must be an integer >= 0");
}

/// A number in a NoSolution message.
std::string shown(double v) { return shown_number(v); }

// --- Binomial probabilities, Loader (2000), "Fast and Accurate Computation of
// Binomial Probabilities": log Bin(x; n, p) =
//   δ(n) − δ(x) − δ(n−x) − D(x, np) − D(n−x, nq) + ½ log(n / (2π x (n−x))),
// with the Stirling error δ(n) = log n! − log(√(2πn)(n/e)ⁿ) and the deviance
// D(x, M) = x log(x/M) + M − x (computed by a series when x ≈ M).

double stirling_error(double n) {
  if (n <= kStirlingSeriesFrom) {
    const long double nl = n;
    return static_cast<double>(std::lgamma(nl + 1) - (nl + 0.5L) * std::log(nl) + nl -
                               0.5L * static_cast<long double>(kLog2Pi));
  }
  // Stirling series: 1/(12n) − 1/(360n³) + 1/(1260n⁵) − 1/(1680n⁷); next term < 1e-21 for n > 100.
  const double nn = n * n;
  return (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - 1.0 / (1680 * nn)) / nn) / nn) / n;
}

double deviance(double x, double m) {
  if (std::abs(x - m) < kDevianceSeriesBand * (x + m)) {
    // x log(x/m) + m − x = (x−m)v + 2x Σ_{j≥1} v^{2j+1}/(2j+1),  v = (x−m)/(x+m).
    const double v = (x - m) / (x + m);
    double s = (x - m) * v;
    double ej = 2 * x * v;
    const double v2 = v * v;
    for (int j = 1; j < kDevianceMaxTerms; ++j) {
      ej *= v2;
      const double s1 = s + ej / (2 * j + 1);
      if (s1 == s) return s1;
      s = s1;
    }
    return s;
  }
  return x * std::log(x / m) + m - x;
}

struct Binomial {
  double n, p, q, log_p, log_q;
  double log_pmf(double x) const {
    if (x == 0) return n * log_q;
    if (x == n) return n * log_p;
    const double y = n - x;
    return stirling_error(n) - stirling_error(x) - stirling_error(y) - deviance(x, n * p) -
           deviance(y, n * q) + 0.5 * std::log(n / (2 * std::numbers::pi * x * y));
  }
};

}  // namespace

EpsDelta compose_basic(double epsilon, double delta, std::int64_t k) {
  check_eps(epsilon);
  check_delta(delta);
  check_k(k);
  // k is exact in a double (k < 2^53). Each product of the inputs is rounded
  // to nearest, not up: for decimal inputs the exact kε is typically a short
  // decimal (100 × 1e-8 = 1e-6) that the nearest double stands for, within the
  // inputs' own decimal-to-double rounding; a step up would print 1.00001e-06
  // in text. JSON and CSV print its decimal at or above the double
  // (report::directed), which covers the decimal inputs' exact product.
  const double kd = static_cast<double>(k);
  return {kd * epsilon, std::min(1.0, kd * delta)};
}

EpsDelta compose_advanced(double epsilon, double delta, std::int64_t k, double delta_prime) {
  check_eps(epsilon);
  check_delta(delta);
  check_k(k);
  if (!(delta_prime > 0 && delta_prime <= 1))
    throw InvalidParameter("delta_prime", "must be in (0, 1]");
  const double kd = static_cast<double>(k);
  // log(1/δ') as −log δ' (one rounding, relative to its value, even for δ' near 1).
  const double eps =
      epsilon * std::sqrt(2 * kd * -std::log(delta_prime)) + kd * epsilon * std::expm1(epsilon);
  return {outward::up(eps, kAdvancedUlps),
          std::min(1.0, outward::up(kd * delta + delta_prime, kAdvancedDeltaUlps))};
}

double advanced_slack(double delta, std::int64_t k, double target_delta) {
  check_delta(target_delta, "target_delta");
  check_delta(delta);
  check_k(k);
  // kδ rounded up and the difference stepped down: kδ + δ' ≤ δ_total exactly.
  const double kd = outward::product_up(static_cast<double>(k), delta);
  const double slack = outward::difference_down(target_delta, kd);
  if (!(slack > kAdvancedMinSlack * target_delta))
    throw NoSolution("advanced composition needs target delta > k*delta = " + shown(kd) +
                     " (delta' = target delta - k*delta must be > 0 beyond rounding)");
  return std::min(slack, 1.0);
}

double advanced_epsilon(double epsilon, double delta, std::int64_t k, double target_delta) {
  return compose_advanced(epsilon, delta, k, advanced_slack(delta, k, target_delta)).epsilon;
}

double advanced_delta_prime(double epsilon, std::int64_t k, double epsilon_total) {
  check_eps(epsilon);
  check_k(k);
  if (!(epsilon_total >= 0)) throw InvalidParameter("epsilon_total", "must be a number >= 0");
  // (0, kδ + δ') for every δ' > 0, hence (0, kδ): δ' → 0 is the limit.
  if (k == 0 || epsilon == 0) return 0;
  const double kd = static_cast<double>(k);
  const double drift = kd * epsilon * std::expm1(epsilon);
  if (!(epsilon_total > drift))
    throw NoSolution("advanced composition needs target epsilon > k*eps*(e^eps - 1) = " +
                     shown(drift));
  const double x = (epsilon_total - drift) / epsilon;
  double dp = std::exp(-x * x / (2 * kd));
  if (dp >= 1) return 1;
  if (dp == 0) return 0;  // underflow: below every double, δ' → 0 is the limit
  for (int i = 0;
       i < kAdvancedNudgeSteps && compose_advanced(epsilon, 0, k, dp).epsilon > epsilon_total; ++i)
    dp = std::min(1.0, dp * (1 + kUlp * std::ldexp(1.0, i)));
  return dp;
}

double advanced_delta(double epsilon, double delta, std::int64_t k, double epsilon_total) {
  check_delta(delta);
  const double dp = advanced_delta_prime(epsilon, k, epsilon_total);
  return std::min(1.0, outward::up(static_cast<double>(k) * delta + dp, kAdvancedDeltaUlps));
}

double basic_epsilon(double epsilon, double delta, std::int64_t k, double target_delta) {
  check_delta(target_delta, "target_delta");
  const EpsDelta r = compose_basic(epsilon, delta, k);
  if (r.delta > target_delta)
    throw NoSolution("basic composition needs target delta >= k*delta = " + shown(r.delta));
  return r.epsilon;
}

double basic_delta(double epsilon, double delta, std::int64_t k, double epsilon_total) {
  if (!(epsilon_total >= 0)) throw InvalidParameter("epsilon_total", "must be a number >= 0");
  const EpsDelta r = compose_basic(epsilon, delta, k);
  if (epsilon_total < r.epsilon)
    throw NoSolution("basic composition needs target epsilon >= k*eps = " + shown(r.epsilon));
  return r.delta;
}

double optimal_log_delta_sum(double epsilon, std::int64_t k, double epsilon_total) {
  check_eps(epsilon);
  check_k(k);
  // The sum has O(sqrt(k)) significant terms and the solvers evaluate it
  // hundreds of times: past kMaxOptimalCount (1e9) steps that takes hours. Fail fast instead.
  if (k > kMaxOptimalCount)
    throw InvalidParameter("count", "optimal composition is limited to 1e9 steps (use rdp or pld)");
  if (!(epsilon_total >= 0)) throw InvalidParameter("epsilon_total", "must be a number >= 0");
  const double kd = static_cast<double>(k);
  // Only l with (k − 2l)ε > ε' contribute; none if ε = 0 or ε' ≥ kε.
  if (k == 0 || epsilon == 0 || epsilon_total >= kd * epsilon) return -kInf;
  Binomial bin{kd, 0, 0, -detail::softplus(epsilon), -detail::softplus(-epsilon)};
  bin.p = std::exp(bin.log_p);
  bin.q = std::exp(bin.log_q);
  const auto l_max = static_cast<std::int64_t>(
      std::min(kd, std::floor((kd * epsilon - epsilon_total) / (2 * epsilon))));
  auto term = [&](std::int64_t l) {
    const double gap = epsilon_total - static_cast<double>(k - 2 * l) * epsilon;
    if (l < 0 || l > l_max || gap >= 0) return -kInf;
    return bin.log_pmf(static_cast<double>(l)) + detail::log1mexp(gap);
  };
  // The summand is log-concave in l (binomial pmf times the log-concave
  // 1 − e^{−x}) and its factor decreases in l, so the peak lies in
  // [0, min(l_max, binomial mode)]: find it by bisection on the sign of the
  // forward difference.
  std::int64_t lo = 0;
  std::int64_t hi = std::min<std::int64_t>(l_max, static_cast<std::int64_t>((kd + 1) * bin.p));
  hi = std::max<std::int64_t>(hi, 0);
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (term(mid + 1) > term(mid))
      lo = mid + 1;
    else
      hi = mid;
  }
  const double ref = term(lo);
  if (ref == -kInf) return -kInf;
  // Rounding-error bound of the result (u = 2⁻⁵³), added to it below: the
  // peak's log of Loader's terms (ref_err); each term's gap ε' − (k − 2l)ε,
  // which rounds by ≤ gap_err = 2u of its parts, moves the term Bin(l)·(1 − e^gap)
  // by ≤ Bin(l)·gap_err: relative to the peak, w(l)·gap_err for the others and
  // gap_err/(1 − e^{peak gap}) for the peak (accumulated in the sum below).
  const double u = kU;
  const double ref_err = kOptimalLogUlps * u * (std::abs(ref) + std::log(kd) + 1);
  // Among subnormal numbers a rounding errs by up to half the smallest
  // double, not by u relative: kSubnormalGapError more, so that the bound
  // never underflows to 0 (times an overflowed weight, a NaN).
  const double gap_err = 2 * u * (epsilon_total + kd * epsilon) + kSubnormalGapError;
  double weights = 1 / -std::expm1(epsilon_total - static_cast<double>(k - 2 * lo) * epsilon);
  // Sum outward from the peak. Past the peak each side decreases with ratios
  // that keep shrinking (log-concavity), so the rest of a side is at most
  // t/(1 − r) for the current term t and ratio r: stop when that is < kTailStop of the sum.
  // The binomial weight relative to the peak, w(l) = Bin(l)/e^{ref}, follows
  // w(l+1)/w(l) = (k−l)/(l+1)·e^{−ε} (p/q = e^{−ε}); it is recomputed from
  // Loader's form every kResync terms, so the product's rounding stays below
  // ~kResync ulps. The factor 1 − e^{gap} is evaluated afresh for every term.
  constexpr std::int64_t kResync = 64;
  const double e_minus = std::exp(-epsilon), e_plus = std::exp(epsilon);
  auto factor = [&](std::int64_t l) {
    return -std::expm1(epsilon_total - static_cast<double>(k - 2 * l) * epsilon);
  };
  double sum = 1;
  for (int dir = -1; dir <= 1; dir += 2) {
    double prev = 1;
    double w = 0;
    for (std::int64_t l = lo + dir, n = 1; l >= 0 && l <= l_max; l += dir, ++n) {
      if (n % kResync == 1) {
        w = std::exp(bin.log_pmf(static_cast<double>(l)) - ref);
      } else if (dir > 0) {  // from l − 1 to l
        w *= static_cast<double>(k - l + 1) / static_cast<double>(l) * e_minus;
      } else {  // from l + 1 to l
        w *= static_cast<double>(l + 1) / static_cast<double>(k - l) * e_plus;
      }
      const double t = w * factor(l);
      sum += t;
      weights += w;
      const double r = t / prev;
      if (t == 0 || (r < 1 && t / (1 - r) < kTailStop * sum)) break;
      prev = t;
    }
    if (!(sum < kInf)) return 0;  // terms beyond double range: δ_opt ≤ 1 is all that is known
  }
  // The sum: each weight drifts ≤ 2u per step over ≤ kResync steps between
  // resyncs, each from an exp of Loader's form (its own error in ref_err's
  // share), times a factor (expm1, ≤ 2u); the positive sum ≤ kOptimalSumUlps more;
  // the omitted tails < kTailStop of it; the gaps' error relative to the sum.
  const double sum_err = (2 * static_cast<double>(kResync) + kOptimalSumUlps) * u + kTailStop +
                         gap_err * weights / sum;
  const double ls = ref + std::log(sum);
  const double bound = ls + ref_err + sum_err + u * std::abs(ls);
  // δ_opt ≤ 1; an error bound that overflowed (a gap next to 0, whose weight
  // is past every double) leaves only that.
  return bound < 0 ? bound : 0.0;
}

double optimal_delta(double epsilon, double delta, std::int64_t k, double epsilon_total) {
  check_delta(delta);
  const double ls = optimal_log_delta_sum(epsilon, k, epsilon_total);  // an upper bound
  // 1 − (1−δ)^k (1 − δ_opt) = −expm1(k·log1p(−δ) + log1p(−δ_opt)), decreasing
  // in the exponent x: x is lowered by its rounding bound (two log1p ≤ 1 ulp,
  // a product and a sum ≤ ½ ulp each: 3u of its parts), δ_opt's exp rounded up.
  const double d_opt = std::min(1.0, outward::up(std::exp(ls), 1));
  const double a = static_cast<double>(k) * std::log1p(-delta), b = std::log1p(-d_opt);
  const double x = a + b - 3 * kU * (std::abs(a) + std::abs(b));
  const double r = outward::up(-std::expm1(x), 2);  // expm1 ≤ 1 ulp
  return std::clamp(r, 0.0, 1.0);
}

double optimal_epsilon(double epsilon, double delta, std::int64_t k, double target_delta) {
  return optimal_epsilon(epsilon, delta, k, target_delta, kFullPrecisionBits);
}

double optimal_epsilon(double epsilon, double delta, std::int64_t k, double target_delta,
                       int tolerance_bits) {
  check_eps(epsilon);
  check_delta(delta);
  check_delta(target_delta, "target_delta");
  check_k(k);
  const double kd = static_cast<double>(k);
  if (k == 0 || target_delta >= 1) return 0;
  // δ_total ≤ target ⇔ δ_opt ≤ need = 1 − (1 − target)/(1 − δ)^k.
  const double need = -std::expm1(std::log1p(-target_delta) - kd * std::log1p(-delta));
  if (need < 0)
    throw NoSolution(
        "optimal composition cannot reach the target delta: it is below 1-(1-delta)^k");
  if (need == 0 || epsilon == 0) return kd * epsilon;  // δ_opt(ε') > 0 for every ε' < kε
  const double log_need = std::log(need);
  if (optimal_delta(epsilon, delta, k, 0) <= target_delta) return 0;  // an upper bound at 0
  auto f = [&](double e) {
    return std::max(optimal_log_delta_sum(epsilon, k, e), kLogDeltaFloor) - log_need;
  };
  // kε bounds the root (δ_opt(kε) = 0); where kε overflows, the bracket
  // ends at the largest double and a root beyond it is ∞, the only upper
  // bound a double holds (the exact kε exceeds every double).
  const double top = std::min(kd * epsilon, std::numeric_limits<double>::max());
  if (top < kd * epsilon && f(top) > 0) return kInf;
  std::uintmax_t iters = kSolverMaxIterations;
  const auto [lo_end, hi_end] = boost::math::tools::toms748_solve(
      f, 0.0, top, boost::math::tools::eps_tolerance<double>(tolerance_bits), iters);
  (void)lo_end;
  // hi_end is the safe end (f ≤ 0). Check it against the full δ_total as
  // optimal_delta() computes it and step up until it meets the target, so that
  // the returned ε' is an upper bound for the very function callers evaluate.
  double e = hi_end;
  for (int i = 0; i < kOptimalNudgeSteps && e < kd * epsilon &&
                  optimal_delta(epsilon, delta, k, e) > target_delta;
       ++i)  // + 1e-300: a step from ε' = 0 moves
    e = std::min(kd * epsilon, e * (1 + kUlp * std::ldexp(1.0, i / 2)) + 1e-300);
  return e;
}

}  // namespace dpb
