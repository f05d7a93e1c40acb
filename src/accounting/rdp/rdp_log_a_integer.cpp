// log A_α of the Poisson-subsampled Gaussian at integer orders: the binomial
// sum of docs/rdp.md#integer-orders, redone in higher precision until
// certified, and the Jensen bound beyond the largest order summed
// (docs/rdp.md#accuracy-guard). Notation and references in rdp_log_a.hpp.
#include <algorithm>
#include <cmath>

#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/log_math.hpp"
#include "accounting/numerics/multiprecision.hpp"
#include "accounting/rdp/rdp_log_a.hpp"

namespace dpb::log_a_detail {
namespace {

/// Largest integer order summed term by term; beyond it a closed-form bound.
constexpr double kMaxIntegerOrder = 4e6;
/// Largest integer order retried in 50-digit arithmetic (O(α) terms there).
constexpr long long kMaxMpIntegerOrder = 5000;

// Error bookkeeping, in units of the unit round-off u of the precision used
// (kTermUlps: rdp_log_a.hpp).
/// Per step of the ratio recurrence that builds |C(α, k)| (a subtraction, an
/// addition, a division and a product) ...
constexpr double kCoefStepUlps = 4;
/// The final logarithm of A_α (integer orders: log1p_exp of log B).
constexpr double kLogAUlps = 4;

/// Terms below e^{−kNegligibleLog} of the largest are skipped: below every
/// precision used here (their total is still counted as error).
constexpr double kNegligibleLog = 800;
/// Raise the reference when a term exceeds it by e^{kRescaleLog}: the scaled
/// sum stays far inside the range of every precision.
constexpr double kRescaleLog = 400;
/// Fold the running binomial coefficient into its logarithm when it leaves
/// [kFoldLow, kFoldHigh]: far from overflow, one log per ~200 decades.
constexpr double kFoldHigh = 1e100;
constexpr double kFoldLow = 1e-100;

// ---------------------------------------------------------------------------
// Integer orders.
//
// [MTZ19] §3.3 (and [M17]-style binomial expansion): for integer α,
//   A_α = Σ_{k=0..α} C(α,k) (1−q)^{α−k} q^k exp((k² − k)/(2σ²)),
// because E_{μ0}[r^k] = exp((k² − k)/(2σ²)). Subtracting
// Σ_k C(α,k)(1−q)^{α−k}q^k = 1 gives a sum of positive terms only
// (the k = 0, 1 terms vanish):
//   A_α − 1 = Σ_{k=2..α} C(α,k) (1−q)^{α−k} q^k expm1((k² − k)/(2σ²)).
// Summed in log space, every term carries a relative error ≈ u·(magnitude of
// its log-space pieces), so the sum has the same relative error.
// ---------------------------------------------------------------------------
template <class T>
LogAEstimate log_a_integer(double q_in, double sigma_in, long long alpha) {
  const T q = q_in, sigma = sigma_in, a = T(alpha);
  const T u = lm::unit_roundoff<T>();
  const T lq = lm::log(q), l1q = lm::log1p(-q);
  const T h = 1 / (2 * sigma * sigma);
  // |C(α, k)| = c·e^{lc}: the ratio (α−k)/(k+1) is applied to c, and c is
  // folded into lc only when it leaves [1e-100, 1e100] (one log per fold).
  T lc = lm::log(a) + lm::log(a - 1) - lm::log(T(2));  // log C(α, 2)
  T c = 1;
  // Σ term·e^{−ref} and Σ term·κ·e^{−ref}, with ref raised when a term exceeds it.
  T ref = -lm::infinity<T>(), sum = 0, sum_kappa = 0;
  const T far = T(kNegligibleLog);
  for (long long k = 2; k <= alpha; ++k) {
    const T kk = T(k);
    const T quad = kk * (kk - 1) * h;
    const T p1 = (a - kk) * l1q, p2 = kk * lq;
    const T t = lc + p1 + p2 + lm::log_expm1(quad);
    if (t > ref + T(kRescaleLog)) {
      if (ref > -lm::infinity<T>()) {
        const T f = lm::exp(ref - t);
        sum *= f;
        sum_kappa *= f;
      }
      ref = t;
    }
    if (t > ref - far) {
      const T v = c * lm::exp(t - ref);
      const T kappa = abs_t(lc) + abs_t(p1) + abs_t(p2) + quad + kCoefStepUlps * kk + kTermUlps;
      sum += v;
      sum_kappa += v * kappa;
    }
    if (k < alpha) {
      c *= (a - kk) / (kk + 1);
      if (c > T(kFoldHigh) || c < T(kFoldLow)) {
        lc += lm::log(c);
        c = 1;
      }
    }
  }
  const T log_b = ref + lm::log(sum);  // log(A_α − 1)
  if (!(log_b < lm::infinity<T>())) return {kInf, 0.0};
  const T log_a = lm::log1p_exp(log_b);
  // Relative error r of B (term errors weighted by the terms, summation error,
  // terms skipped below e^{−800}) ⇒ absolute error r·B/(1+B) in log A.
  const T r = u * (sum_kappa / sum + T(alpha) + kTermUlps) + T(alpha) * lm::exp(-far);
  const T abs_err = r * lm::exp(log_b - log_a) + kLogAUlps * u * log_a;
  const double value = round_up(log_a + abs_err);
  const double rel = static_cast<double>(abs_err / log_a);
  return {value, rel};
}

/// Upper bound log((1−q) + q·e^{α(α−1)/(2σ²)}) on log A_α, from the
/// convexity of x ↦ x^α: ((1−q)·1 + q·r)^α ≤ (1−q) + q·r^α.
double log_a_jensen_bound(double q, double sigma, double alpha) {
  const double quad = alpha * (alpha - 1) / (2 * sigma * sigma);
  return round_up(lm::log_add(std::log1p(-q), std::log(q) + quad) * (1 + kBoundRoundUp));
}

}  // namespace

double log_a_integer_order(double q, double sigma, long long alpha) {
  if (static_cast<double>(alpha) > kMaxIntegerOrder)
    return log_a_jensen_bound(q, sigma, static_cast<double>(alpha));
  LogAEstimate e = log_a_integer<double>(q, sigma, alpha);
  if (e.rel_err <= kTargetRelErr) return e.value;
  const LogAEstimate el = log_a_integer<long double>(q, sigma, alpha);
  if (el.rel_err <= kTargetRelErr || alpha > kMaxMpIntegerOrder) return std::min(e.value, el.value);
  const LogAEstimate em = log_a_integer<mp50>(q, sigma, alpha);
  return std::min({e.value, el.value, em.value});
}

}  // namespace dpb::log_a_detail
