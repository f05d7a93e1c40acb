// Rényi DP of the Poisson-subsampled Gaussian mechanism and the conversion of
// RDP curves to (ε, δ): docs/rdp.md#subsampled-gaussian, docs/rdp.md#laplace,
// docs/rdp.md#conversion.
//
// References
//  [M17]   I. Mironov, "Rényi Differential Privacy", CSF 2017.
//  [MTZ19] I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the
//          Sampled Gaussian Mechanism", arXiv:1908.10530, 2019.
//  [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis
//          Testing Interpretations and Renyi Differential Privacy", AISTATS 2020.
//
// Notation (docs/rdp.md#subsampled-gaussian): q sampling rate, σ noise multiplier, μ0 = N(0, σ²),
// r(z) = μ1(z)/μ0(z) = exp((2z − 1)/(2σ²)) the likelihood ratio and
//   A_α = E_{z∼μ0}[((1 − q) + q·r(z))^α],   ρ(α) = log(A_α)/(α − 1)
// ([MTZ19] §3, eq. (2)–(4)). Since E[r] = 1 we compute B = A_α − 1 rather than
// A_α: for small q, A_α − 1 = O(q²) and log A_α = log1p(B) keeps its relative
// accuracy where summing to A_α directly would lose it all.
#include "accounting/rdp/rdp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/log_math.hpp"
#include "accounting/numerics/multiprecision.hpp"

namespace dpb {
namespace {

namespace lm = logmath;

/// Accept an evaluation when its estimated relative error in log A is below this.
constexpr double kTargetRelErr = 4e-12;
/// Stop a series when the bound on its remainder is below this fraction of B.
constexpr double kTruncRelTol = 2e-14;
/// Largest fractional order evaluated by the series; beyond it the convexity
/// bound between the neighbouring integers is used (it is then very tight).
constexpr double kMaxSeriesOrder = 1e5;
/// Largest head (number of series terms below α) tried in 50-digit arithmetic.
constexpr double kMaxMpOrder = 300;
/// Largest integer order summed term by term; beyond it a closed-form bound.
constexpr double kMaxIntegerOrder = 4e6;
/// Caps on the number of tail terms (no hang whatever the input).
constexpr int kMaxDirectTerms = 4000;
constexpr int kMaxEulerTerms = 160;
/// Largest integer order retried in 50-digit arithmetic (O(α) terms there).
constexpr long long kMaxMpIntegerOrder = 5000;
/// log A_α at or beyond this is reported as +∞: arithmetic on it would overflow.
constexpr double kMaxLogA = 1e300;

// Error bookkeeping, in units of the unit round-off u of the precision used.
/// Fixed roundings of one series term (its logs, exps and products).
constexpr double kTermUlps = 16;
/// Per step of the ratio recurrence that builds |C(α, k)| (a subtraction, an
/// addition, a division and a product) ...
constexpr double kCoefStepUlps = 4;
/// ... and per logarithm of a ratio summed into log|C(α, i)|.
constexpr double kLogCoefStepUlps = 2;
/// One exp or erfc evaluation and the product with it (exp_half_erfc).
constexpr double kExpUlps = 8;
/// The final logarithm of A_α (integer orders: log1p_exp of log B).
constexpr double kLogAUlps = 4;
/// The final logarithms and product of log_a_fractional.
constexpr double kFinalUlps = 8;
/// Sound bounds (Jensen, convexity) are rounded up by this relative amount
/// (~9u), more than the few roundings in them.
constexpr double kBoundRoundUp = 1e-15;

// Integer orders.
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

// Fractional orders.
/// Below this q, (1−q)^α − 1 + αq is summed as its series (expm1 would cancel).
constexpr double kSeriesMaxQ = 0.1;
/// Cap on the terms of that series (no hang whatever the input).
constexpr int kMaxBinomialTerms = 2000;
/// That series stops when a term is below u/kSeriesStopDivisor of the sum.
constexpr double kSeriesStopDivisor = 8;
/// Below x = −1, ½erfc(x) > 0.92 is computed as 1 − ½erfc(−x).
constexpr double kErfcReflectBelow = -1;
/// Direct e^E·½erfc(x) for x < 25 (erfc(25) ≈ 8e-274, still a normal double)
/// and E < 700 (e^{700} < DBL_MAX ≈ e^{709.8}); beyond, in log space.
constexpr double kErfcDirectMax = 25;
constexpr double kExpDirectMax = 700;
/// Keeps a relative error finite where the quantity it is relative to is 0.
constexpr double kTinyDenominator = 1e-300;
/// Fold |C(α, i)| of the tail into its logarithm below this, far above the
/// underflow of every precision.
constexpr double kTailFoldLow = 1e-200;
/// One side of the tail is dropped once its term is below this share of the
/// truncation tolerance (its whole remainder is then below that term).
constexpr double kDropSideShare = 1e-3;
/// Sum the tail directly while a_{i+1}/a_i ≤ kEulerSwitchRatio, then switch to
/// the Euler transform.
constexpr double kEulerSwitchRatio = 0.5;

// Laplace (rdp_laplace).
/// Below (2α−1)/b = 1 the inner sum is a power series (expm1 would cancel).
constexpr double kLaplaceSeriesMax = 1;
/// Cap on its terms: with x + y < 1 they fall faster than 1/k!.
constexpr int kMaxLaplaceTerms = 60;
/// It stops when a term is below this share of the sum (below u/100).
constexpr double kLaplaceSeriesStop = 1e-18;
/// The result is rounded up by this relative amount (~3.6u), covering the
/// roundings of the final log and division.
constexpr double kLaplaceRoundUp = 4e-16;

// RDP → (ε, δ): kConversionRoundUp (rdp.hpp).

/// log A_α with the estimated relative error of that logarithm.
/// `value` has already been rounded up by the error estimate.
struct LogAEstimate {
  double value;
  double rel_err;
};

template <class T>
T abs_t(T x) {
  return x < 0 ? -x : x;
}

/// Rounds a T up to a double that is ≥ it.
template <class T>
double round_up(T x) {
  const double d = static_cast<double>(x);
  if (std::isnan(d)) return kInf;
  if (T(d) < x) return std::nextafter(d, kInf);
  return d;
}

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

// ---------------------------------------------------------------------------
// Fractional orders.
//
// [MTZ19] §3.3: split the integral at z0 = σ² ln(1/q − 1) + ½, where
// q·r(z0) = 1 − q. With u(z) = q·r/(1−q) ≤ 1 on z ≤ z0 and v(z) = 1/u ≤ 1 on
// z > z0, the generalised binomial theorem (convergent for |u| ≤ 1) gives
//   left:  Σ_i C(α,i) (1−q)^{α−i} q^i exp((i²−i)/(2σ²)) · ½erfc((i − z0)/(√2σ))
//   right: Σ_i C(α,i) q^{α−i} (1−q)^i exp((j²−j)/(2σ²)) · ½erfc((z0 − j)/(√2σ)),
// j = α − i, using E[r^i; z ≤ z0] = e^{(i²−i)/(2σ²)}·Φ((z0 − i)/σ).
//
// We sum B = A_α − 1 = E[(1−q+qr)^α − (1 − αq) − αq·r] (E[r] = 1): on the left
// the i = 0, 1 terms become
//   T0 = ((1−q)^α − 1 + αq)·P(z ≤ z0),  T1 = αq((1−q)^{α−1} − 1)·E[r; z ≤ z0],
// and the right side loses S = (1 − αq)·P(z > z0) + αq·E[r; z > z0].
//
// Tail (i ≥ n0 = ⌊α⌋ + 1). The i-th left term is C(α,i)(1−q)^α·E[u^i; z ≤ z0]
// and the right one C(α,i) q^α·E[r^α v^i; z > z0]; E[u^i], E[v^i] are moment
// sequences of measures on [0, 1] (0 ≤ u, v ≤ 1), and so is
// |C(α,i)| ∝ Γ(i−α)/Γ(i+1) = B(i−α, α+1)/Γ(α+1) = ∫ t^{i−α−1}(1−t)^α dt/Γ(α+1).
// Products and sums of Hausdorff moment sequences are moment sequences, so with
// a_i = |left_i + right_i| the tail is Σ_{i≥n0} (−1)^{i−n0} a_i, alternating
// (C(α,n0) > 0), with a_i completely monotone. Hence
//  * |remainder after a_m| ≤ a_m, with the sign of the first omitted term;
//  * the Euler transform Σ_{i≥e}(−1)^{i−e} a_i = Σ_k 2^{−k−1} (−Δ)^k a_e has
//    non-negative terms that do not increase in k, so stopping after K terms
//    leaves a remainder in [0, 2^{−K}(−Δ)^K a_e]  (from 1/(1+t) = Σ (1−t)^k/2^{k+1}).
// a_{i+1}/a_i is non-decreasing (log-convexity of moment sequences), so we sum
// directly while a_{i+1}/a_i ≤ ½ and switch to the Euler transform after.
// Every bound is added on the pessimistic side, so the result is an upper bound.
// ---------------------------------------------------------------------------

/// (1−q)^α − 1 + αq, accurate for small q (series Σ_{k≥2} C(α,k)(−q)^k).
template <class T>
T binomial_excess(T q, T alpha, T l1q) {
  if (q < T(kSeriesMaxQ)) {
    T term = alpha * (alpha - 1) / 2 * q * q;  // k = 2
    T sum = term;
    const T eps = lm::unit_roundoff<T>() / kSeriesStopDivisor;
    for (int k = 2; k < kMaxBinomialTerms; ++k) {
      term *= -q * (alpha - T(k)) / T(k + 1);
      sum += term;
      if (abs_t(term) <= eps * abs_t(sum)) break;
    }
    return sum;
  }
  return lm::expm1(alpha * l1q) + alpha * q;
}

template <class T>
struct FracSeries {
  bool ok = false;  ///< false: the evaluation failed (non-finite intermediate)
  T scale = 0;      ///< every quantity below is multiplied by e^{−scale}
  T b = 0;          ///< estimate of B·e^{−scale}
  T up = 0;         ///< truth ≤ b + up (truncation + rounding)
  T down = 0;       ///< truth ≥ b − down
};

/// e^E·½erfc(x) without overflow or needless logarithms, and the relative error
/// of the result in units of u beyond that of E itself (`kappa`).
template <class T>
T exp_half_erfc(T e, T x, T& kappa) {
  if (x < T(kErfcReflectBelow)) {
    kappa = kExpUlps;
    return lm::exp(e) * (1 - lm::erfc(-x) / 2);
  }
  if (x < T(kErfcDirectMax) && e < T(kExpDirectMax)) {
    kappa = kExpUlps;
    return lm::exp(e) * lm::erfc(x) / 2;
  }
  // The logarithm of the asymptotic expansion has size ≈ x².
  const T l = lm::log_half_erfc(x);
  kappa = abs_t(l) + kExpUlps;
  return lm::exp(e + l);
}

template <class T>
FracSeries<T> frac_series(double q_in, double sigma_in, double alpha_in) {
  using std::floor;
  using std::sqrt;
  FracSeries<T> out;
  const T q = q_in, sigma = sigma_in, a = alpha_in;
  const T u = lm::unit_roundoff<T>();
  const T lq = lm::log(q), l1q = lm::log1p(-q);
  const T h = 1 / (2 * sigma * sigma);
  const T s = 1 / (sigma * sqrt(T(2)));
  const T z0 = sigma * sigma * (l1q - lq) + T(0.5);
  const long long n0 = static_cast<long long>(floor(alpha_in)) + 1;

  // Exponents of left_i and right_i without the erfc factor and without
  // log|C(α, i)|, their erfc arguments and error factors.
  struct Pieces {
    T el, er, xl, xr, kappa;
  };
  auto pieces = [&](long long i) {
    const T ti = T(i), j = a - ti;
    const T pl1 = (a - ti) * l1q, pl2 = ti * lq, pl3 = (ti * ti - ti) * h;
    const T pr1 = ti * l1q, pr2 = j * lq, pr3 = (j * j - j) * h;
    Pieces p;
    p.el = pl1 + pl2 + pl3;
    p.er = pr1 + pr2 + pr3;
    p.xl = (ti - z0) * s;
    p.xr = (z0 - j) * s;
    const T kl = abs_t(pl1) + abs_t(pl2) + abs_t(pl3);
    const T kr = abs_t(pr1) + abs_t(pr2) + abs_t(pr3);
    p.kappa = (kl > kr ? kl : kr) + kLogCoefStepUlps * ti + kTermUlps;
    return p;
  };
  // log ½erfc(x) ≤ −x² for x ≥ 0 (erfc(x) ≤ e^{−x²}) and ≤ 0 always: an upper
  // bound on the log of a term that needs no special function.
  auto bound = [](T e, T x) { return x > 0 ? e - x * x : e; };

  // Head, i < n0: every term positive. The first pass fixes a scale ≥ the log
  // of every term (later terms are smaller: |C(α,i+1)/C(α,i)| < 1 and u, v ≤ 1).
  std::vector<Pieces> head;
  std::vector<T> head_lc;
  head.reserve(static_cast<std::size_t>(n0));
  head_lc.reserve(static_cast<std::size_t>(n0));
  T lc = 0;
  T scale = 0;
  for (long long i = 0; i < n0; ++i) {
    head.push_back(pieces(i));
    head_lc.push_back(lc);
    const Pieces& p = head.back();
    const T bl = bound(lc + p.el, p.xl), br = bound(lc + p.er, p.xr);
    if (bl != bl || br != br) return out;  // NaN
    if (i >= 2 && bl > scale) scale = bl;
    if (br > scale) scale = br;
    lc += lm::log((a - T(i)) / T(i + 1));  // → log|C(α, i+1)|
  }
  if (scale == lm::infinity<T>()) {
    out.ok = true;
    out.scale = scale;
    out.b = 1;
    return out;
  }
  out.scale = scale;

  T sum = 0, abs_sum = 0, err = 0, kf = 0;
  long long count = 0;
  auto add = [&](T v, T kappa) {
    sum += v;
    abs_sum += abs_t(v);
    err += abs_t(v) * kappa;
    ++count;
  };
  const T x_pl = -z0 * s, x_el = (1 - z0) * s, x_pr = z0 * s, x_er = (z0 - 1) * s;
  T k_pl = 0, k_el = 0, k_pr = 0, k_er = 0;
  const T p_left = exp_half_erfc(-scale, x_pl, k_pl);    // P(z ≤ z0)·e^{−scale}
  const T er_left = exp_half_erfc(-scale, x_el, k_el);   // E[r; z ≤ z0]·e^{−scale}
  const T p_right = exp_half_erfc(-scale, x_pr, k_pr);   // P(z > z0)·e^{−scale}
  const T er_right = exp_half_erfc(-scale, x_er, k_er);  // E[r; z > z0]·e^{−scale}
  const T excess = binomial_excess(q, a, l1q);
  const T excess_kappa = q < T(kSeriesMaxQ) ? T(kTermUlps)
                                            : kExpUlps * (1 + a * q + abs_t(a * l1q)) /
                                                  (abs_t(excess) + T(kTinyDenominator));
  const T ks = abs_t(scale) + kExpUlps;
  add(excess * p_left, excess_kappa + k_pl + ks);
  add(a * q * lm::expm1((a - 1) * l1q) * er_left, abs_t((a - 1) * l1q) + k_el + ks + kTermUlps);
  add(-(1 - a * q) * p_right, k_pr + ks + kTermUlps);
  add(-a * q * er_right, k_er + ks + kTermUlps);
  for (long long i = 0; i < n0; ++i) {
    const Pieces& p = head[static_cast<std::size_t>(i)];
    const T l = head_lc[static_cast<std::size_t>(i)];
    const T kappa = p.kappa + abs_t(l) + ks;
    if (i >= 2) {
      const T v = exp_half_erfc(l + p.el - scale, p.xl, kf);
      add(v, kappa + kf);
    }
    const T v = exp_half_erfc(l + p.er - scale, p.xr, kf);
    add(v, kappa + kf);
  }

  // Tail, i ≥ n0: Σ (−1)^{i−n0} a_i with a_i completely monotone (see above).
  // |C(α, i)| is carried as c·e^{lc} to avoid a logarithm per term.
  T c = 1;
  T up = 0, down = 0;
  T direct = 0, prev = -1;
  int sign = 1;
  bool euler = false, use_left = true, use_right = true;
  int euler_sign = 1;
  T euler_sum = 0, euler_first = 0, euler_kappa = 0, pow2 = 1;
  std::vector<T> diff;  // diff[k] = (−Δ)^k a_{i−k}
  for (long long i = n0;; ++i) {
    const Pieces p = pieces(i);
    T kl = 0, kr = 0;
    const T vl = use_left ? c * exp_half_erfc(lc + p.el - scale, p.xl, kl) : T(0);
    const T vr = use_right ? c * exp_half_erfc(lc + p.er - scale, p.xr, kr) : T(0);
    const T ai = vl + vr;
    if (ai != ai) return out;
    const T kappa = p.kappa + abs_t(lc) + ks + (kl > kr ? kl : kr);
    err += ai * kappa;
    abs_sum += ai;
    ++count;
    c *= (T(i) - a) / T(i + 1);  // → |C(α, i+1)|
    if (c < T(kTailFoldLow)) {
      lc += lm::log(c);
      c = 1;
    }
    const long long m = i - n0;
    if (!euler) {
      const T total = abs_t(sum + direct);
      if (ai <= T(kTruncRelTol) * total) {
        (sign > 0 ? up : down) += ai;  // remainder has the sign of a_i, size ≤ a_i
        break;
      }
      if (prev > 0 && ai > prev * T(kEulerSwitchRatio)) {
        euler = true;
        euler_sign = sign;
        euler_first = ai;
        euler_kappa = kappa;
        diff.assign(1, ai);
      } else {
        direct += T(sign) * ai;
        prev = ai;
        sign = -sign;
        // Either side alone is an alternating series with completely monotone
        // terms, so once one is negligible its whole remainder is below its
        // current term: drop it and count that term as error.
        const T negligible = T(kDropSideShare) * T(kTruncRelTol) * total;
        if (use_left && vl <= negligible) {
          use_left = false;
          err += vl / u;
        }
        if (use_right && vr <= negligible) {
          use_right = false;
          err += vr / u;
        }
        if (m >= kMaxDirectTerms) {
          (sign > 0 ? up : down) += ai;  // next term, ≤ a_i, has sign `sign`
          break;
        }
        continue;
      }
    } else {
      T carry = ai;
      for (auto& d : diff) {
        const T next = d - carry;
        d = carry;
        carry = next;
      }
      diff.push_back(carry);
      if (kappa > euler_kappa) euler_kappa = kappa;
    }
    const std::size_t k = diff.size() - 1;
    const T trunc = pow2 * abs_t(diff[k]);
    const T total = abs_t(sum + direct + T(euler_sign) * euler_sum);
    if (trunc <= T(kTruncRelTol) * total || static_cast<int>(k) >= kMaxEulerTerms) {
      // Remainder of the Euler series ∈ [0, trunc]; the differences carry
      // rounding noise of at most (k+1)·u·κ·a_first in either direction.
      (euler_sign > 0 ? up : down) += trunc;
      err += T(static_cast<double>(k + 1)) * euler_kappa * euler_first;
      break;
    }
    euler_sum += pow2 / 2 * diff[k];
    pow2 /= 2;
  }
  err = err * u + T(static_cast<double>(count)) * u * abs_sum;
  out.b = sum + direct + T(euler_sign) * euler_sum;
  out.up = up + err;
  out.down = down + err;
  out.ok = true;
  return out;
}

/// log A_α for fractional α through frac_series in precision T.
template <class T>
LogAEstimate log_a_fractional(double q, double sigma, double alpha) {
  const FracSeries<T> fs = frac_series<T>(q, sigma, alpha);
  if (!fs.ok) return {kInf, kInf};
  if (fs.scale == lm::infinity<T>()) return {kInf, 0.0};
  const T u = lm::unit_roundoff<T>();
  auto log_a = [&](T b) {  // log(1 + b·e^{scale})
    if (fs.scale == 0) return lm::log1p(b);
    return fs.scale + lm::log(b + lm::exp(-fs.scale));
  };
  const T hi = fs.b + fs.up, lo = fs.b - fs.down;
  if (!(hi > 0) || !(lo > 0)) return {kInf, kInf};
  const T log_hi = log_a(hi), log_lo = log_a(lo);
  const T rel = (log_hi - log_lo) / log_hi + kFinalUlps * u;
  return {round_up(log_hi * (1 + kFinalUlps * u)), static_cast<double>(rel)};
}

bool is_integer(double x) { return std::floor(x) == x; }

/// Upper bound log((1−q) + q·e^{α(α−1)/(2σ²)}) on log A_α, from the
/// convexity of x ↦ x^α: ((1−q)·1 + q·r)^α ≤ (1−q) + q·r^α.
double log_a_jensen_bound(double q, double sigma, double alpha) {
  const double quad = alpha * (alpha - 1) / (2 * sigma * sigma);
  return round_up(lm::log_add(std::log1p(-q), std::log(q) + quad) * (1 + kBoundRoundUp));
}

double log_a_integer_order(double q, double sigma, long long alpha);

/// log A_α is convex in α (Hölder), so for f = ⌊α⌋, c = f + 1,
///   log A_α ≤ (c − α)·log A_f + (α − f)·log A_c, with log A_1 = 0.
double log_a_convex_bound(double q, double sigma, double alpha) {
  const double f = std::floor(alpha), c = f + 1;
  const double la_f = f < 2 ? 0.0 : log_a_integer_order(q, sigma, static_cast<long long>(f));
  const double la_c = log_a_integer_order(q, sigma, static_cast<long long>(c));
  if (std::isinf(la_c) || std::isinf(la_f)) return kInf;
  return round_up(((c - alpha) * la_f + (alpha - f) * la_c) * (1 + kBoundRoundUp));
}

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

double log_a_fractional_order(double q, double sigma, double alpha) {
  if (alpha > kMaxSeriesOrder) return log_a_convex_bound(q, sigma, alpha);
  const LogAEstimate e = log_a_fractional<double>(q, sigma, alpha);
  if (e.rel_err <= kTargetRelErr) return e.value;
  const LogAEstimate el = log_a_fractional<long double>(q, sigma, alpha);
  if (el.rel_err <= kTargetRelErr) return el.value;
  double best = std::min(e.value, el.value);
  if (alpha <= kMaxMpOrder) {
    const LogAEstimate em = log_a_fractional<mp50>(q, sigma, alpha);
    if (em.rel_err <= kTargetRelErr) return em.value;
    best = std::min(best, em.value);
  }
  // Still not certified to the target: fall back to the best sound upper bound.
  return std::min(best, log_a_convex_bound(q, sigma, alpha));
}

void check_gaussian_parameters(double q, double sigma) {
  if (!(q >= 0 && q <= 1)) throw InvalidParameter("sampling_probability", "must be in [0, 1]");
  if (!(sigma > 0)) throw InvalidParameter("noise_multiplier", "must be > 0");
}

void check_order(double alpha) {
  if (!(alpha > 1)) throw InvalidParameter("orders", "every order must be > 1");
}

/// ρ = log A/(α − 1), rounded up.
double rdp_from_log_a(double log_a, double alpha) {
  if (!(log_a > 0)) return 0.0;
  if (std::isinf(log_a)) return kInf;
  return std::nextafter(log_a / (alpha - 1), kInf);
}

}  // namespace

std::vector<double> default_rdp_orders() {
  std::vector<double> orders;
  for (int x = 1; x <= 99; ++x) orders.push_back(1 + x / 10.0);
  for (int a = 2; a <= 64; ++a) orders.push_back(a);
  for (double a : {128.0, 256.0, 512.0, 1024.0}) orders.push_back(a);
  std::sort(orders.begin(), orders.end());
  orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
  return orders;
}

double log_a_poisson_gaussian(double q, double sigma, double alpha) {
  check_gaussian_parameters(q, sigma);
  check_order(alpha);
  if (q == 0 || std::isinf(sigma)) return 0.0;
  if (std::isinf(alpha)) return kInf;
  const double h = 1 / (2 * sigma * sigma);
  if (q == 1) return round_up(alpha * (alpha - 1) * h);  // plain Gaussian, [M17] Prop. 7
  // A_α ≥ E[(q·r)^α] = q^α·e^{α(α−1)/(2σ²)}: when that overflows, so does A_α.
  const double lower = alpha * (std::log(q) + (alpha - 1) * h);
  if (!(lower < kMaxLogA)) return kInf;
  if (is_integer(alpha)) return log_a_integer_order(q, sigma, static_cast<long long>(alpha));
  return log_a_fractional_order(q, sigma, alpha);
}

double rdp_poisson_gaussian(double q, double sigma, double alpha) {
  return rdp_from_log_a(log_a_poisson_gaussian(q, sigma, alpha), alpha);
}

std::vector<double> rdp_poisson_gaussian(double q, double sigma, std::span<const double> orders) {
  std::vector<double> out;
  out.reserve(orders.size());
  for (double a : orders) out.push_back(rdp_poisson_gaussian(q, sigma, a));
  return out;
}

double rdp_gaussian(double sigma, double alpha) {
  check_gaussian_parameters(1, sigma);
  check_order(alpha);
  return alpha / (2 * sigma * sigma);  // [M17] Prop. 7
}

double rdp_laplace(double scale, double alpha) {
  if (!(scale > 0)) throw InvalidParameter("scale", "must be > 0");
  check_order(alpha);
  if (std::isinf(alpha)) return 1 / scale;  // D_∞ = pure ε
  // [M17] Prop. 6, for α > 1:
  //   ρ(α) = 1/(α−1)·log( α/(2α−1)·e^{(α−1)/b} + (α−1)/(2α−1)·e^{−α/b} ).
  const double b = scale, am1 = alpha - 1;
  const double x = am1 / b, y = alpha / b;
  double log_inner;
  if (x + y < kLaplaceSeriesMax) {
    // Inner = 1 + N/(2α−1) with N = α·expm1(x) + (α−1)·expm1(−y); the first-order
    // terms cancel exactly (α·x = (α−1)·y), so N = Σ_{k≥2} (α·x^k + (α−1)(−y)^k)/k!.
    double n = 0, px = x, py = -y, fact = 1;
    for (int k = 2; k < kMaxLaplaceTerms; ++k) {
      px *= x;
      py *= -y;
      fact *= k;
      const double t = (alpha * px + am1 * py) / fact;
      n += t;
      if (std::abs(t) <= kLaplaceSeriesStop * std::abs(n)) break;
    }
    log_inner = std::log1p(n / (2 * alpha - 1));
  } else {
    // Factor out e^{(α−1)/b}: inner = e^x·(α + (α−1)e^{−(2α−1)/b})/(2α−1).
    log_inner = x + std::log(alpha + am1 * std::exp(-(x + y))) - std::log(2 * alpha - 1);
  }
  return std::max(0.0, log_inner / am1) * (1 + kLaplaceRoundUp);
}

// ---------------------------------------------------------------------------
// RDP → (ε, δ): docs/rdp.md#conversion, docs/rdp.md#kl-shortcut.
//  classic  [M17] Prop. 3:     ε = ρ(α) + log(1/δ)/(α−1),  δ = e^{(α−1)(ρ(α)−ε)}.
//  improved [BBGHS20] Thm. 21: ε = ρ(α) + log((α−1)/α) − (log δ + log α)/(α−1),
//                              log δ = (α−1)(ρ(α) − ε + log(1 − 1/α)) − log α.
//  KL shortcut (improved only): D_KL ≤ D_α = ρ(α) (Rényi divergences increase
//  with α) and Bretagnolle–Huber gives TV ≤ √(1 − e^{−KL}); δ(0) = TV, so
//  δ² ≥ 1 − e^{−ρ(α)} certifies ε = 0, and δ(ε) ≤ √(1 − e^{−ρ(α)}) for all ε.
// Each candidate is rounded up by a few ulps of its terms.
// ---------------------------------------------------------------------------
ConversionTerm rdp_conversion_term(double alpha, double log_delta, RdpConversion conversion) {
  if (conversion == RdpConversion::classic) {
    const double c = -log_delta / (alpha - 1);
    return {c, std::abs(c)};
  }
  const double c1 = std::log1p(-1 / alpha), c2 = -(log_delta + std::log(alpha)) / (alpha - 1);
  return {c1 + c2, std::abs(c1) + std::abs(c2)};
}

RdpEpsilon epsilon_from_rdp(std::span<const double> orders, std::span<const double> rdp,
                            double delta, RdpConversion conversion) {
  if (orders.size() != rdp.size() || orders.empty())
    throw InvalidParameter("orders", "orders and RDP values must have the same, non-zero length");
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  const double log_delta = std::log(delta);
  if (conversion == RdpConversion::improved) {
    for (std::size_t i = 0; i < orders.size(); ++i)
      if (rdp[i] < kInf && delta * delta + std::expm1(-rdp[i]) >= 0) return {0.0, orders[i], true};
  }
  RdpEpsilon best{kInf, orders.front(), false};
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i], r = rdp[i];
    check_order(a);
    if (!(r >= 0)) throw InvalidParameter("rdp", "RDP values must be >= 0");
    if (std::isinf(r)) continue;
    const ConversionTerm c = rdp_conversion_term(a, log_delta, conversion);
    const double eps = r + c.value + kConversionRoundUp * (r + c.magnitude);
    if (eps < best.epsilon) best = {eps, a, false};
  }
  if (best.epsilon < 0) best.epsilon = 0;
  return best;
}

RdpDelta delta_from_rdp(std::span<const double> orders, std::span<const double> rdp, double epsilon,
                        RdpConversion conversion) {
  if (orders.size() != rdp.size() || orders.empty())
    throw InvalidParameter("orders", "orders and RDP values must have the same, non-zero length");
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be >= 0");
  double best_log = kInf, best_order = orders.front();
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i], r = rdp[i];
    check_order(a);
    if (!(r >= 0)) throw InvalidParameter("rdp", "RDP values must be >= 0");
    if (std::isinf(r)) continue;
    double log_d, mag;
    if (conversion == RdpConversion::classic) {
      log_d = (a - 1) * (r - epsilon);
      mag = (a - 1) * (r + epsilon);
    } else {
      const double c = std::log1p(-1 / a);
      log_d = (a - 1) * (r - epsilon + c) - std::log(a);
      mag = (a - 1) * (r + epsilon - c) + std::log(a);
      // Bretagnolle–Huber: δ ≤ TV ≤ √(1 − e^{−ρ}).
      const double kl = r == 0 ? -kInf : 0.5 * std::log(-std::expm1(-r));
      if (kl < log_d) {
        log_d = kl;
        mag = std::abs(kl);
      }
    }
    log_d += kConversionRoundUp * (mag + 1);
    if (log_d < best_log) {
      best_log = log_d;
      best_order = a;
    }
  }
  return {std::min(1.0, std::exp(best_log)), best_order};
}

}  // namespace dpb
