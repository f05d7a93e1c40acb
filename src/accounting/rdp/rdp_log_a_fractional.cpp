// log A_α of the Poisson-subsampled Gaussian at fractional orders: the
// series of docs/rdp.md#fractional-orders, split at z0 and summed with sound
// truncation bounds, redone in higher precision until certified, else the
// convexity bound between the neighbouring integer orders
// (docs/rdp.md#accuracy-guard). Notation and references in rdp_log_a.hpp.
#include <algorithm>
#include <cmath>
#include <vector>

#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/log_math.hpp"
#include "accounting/numerics/multiprecision.hpp"
#include "accounting/rdp/rdp_log_a.hpp"

namespace dpb::log_a_detail {
namespace {

/// Stop a series when the bound on its remainder is below this fraction of B.
constexpr double kTruncRelTol = 2e-14;
/// Largest fractional order evaluated by the series; beyond it the convexity
/// bound between the neighbouring integers is used (it is then very tight).
constexpr double kMaxSeriesOrder = 1e5;
/// Largest head (number of series terms below α) tried in 50-digit arithmetic.
constexpr double kMaxMpOrder = 300;
/// Caps on the number of tail terms (no hang whatever the input).
constexpr int kMaxDirectTerms = 4000;
constexpr int kMaxEulerTerms = 160;

// Error bookkeeping, in units of the unit round-off u of the precision used
// (kTermUlps: rdp_log_a.hpp).
/// Per logarithm of a ratio summed into log|C(α, i)|.
constexpr double kLogCoefStepUlps = 2;
/// One exp or erfc evaluation and the product with it (exp_half_erfc).
constexpr double kExpUlps = 8;
/// The final logarithms and product of log_a_fractional.
constexpr double kFinalUlps = 8;

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

/// The series' fixed quantities at (q, σ, α) in precision T: the split point
/// z0, the first index of the tail n0 = ⌊α⌋ + 1, and what every term is made of.
template <class T>
struct FracSetup {
  T q, sigma, a, u, lq, l1q, h, s, z0;
  long long n0;
};

template <class T>
FracSetup<T> frac_setup(double q_in, double sigma_in, double alpha_in) {
  using std::floor;
  using std::sqrt;
  const T q = q_in, sigma = sigma_in, a = alpha_in;
  const T u = lm::unit_roundoff<T>();
  const T lq = lm::log(q), l1q = lm::log1p(-q);
  const T h = 1 / (2 * sigma * sigma);
  const T s = 1 / (sigma * sqrt(T(2)));
  const T z0 = sigma * sigma * (l1q - lq) + T(0.5);
  const long long n0 = static_cast<long long>(floor(alpha_in)) + 1;
  return {q, sigma, a, u, lq, l1q, h, s, z0, n0};
}

/// Exponents of left_i and right_i without the erfc factor and without
/// log|C(α, i)|, their erfc arguments and error factors.
template <class T>
struct FracPieces {
  T el, er, xl, xr, kappa;
};

template <class T>
FracPieces<T> frac_pieces(const FracSetup<T>& f, long long i) {
  const T ti = T(i), j = f.a - ti;
  const T pl1 = (f.a - ti) * f.l1q, pl2 = ti * f.lq, pl3 = (ti * ti - ti) * f.h;
  const T pr1 = ti * f.l1q, pr2 = j * f.lq, pr3 = (j * j - j) * f.h;
  FracPieces<T> p;
  p.el = pl1 + pl2 + pl3;
  p.er = pr1 + pr2 + pr3;
  p.xl = (ti - f.z0) * f.s;
  p.xr = (f.z0 - j) * f.s;
  const T kl = abs_t(pl1) + abs_t(pl2) + abs_t(pl3);
  const T kr = abs_t(pr1) + abs_t(pr2) + abs_t(pr3);
  p.kappa = (kl > kr ? kl : kr) + kLogCoefStepUlps * ti + kTermUlps;
  return p;
}

/// The head, i < n0, where every term is positive: each term's pieces and
/// log|C(α, i)|, and a scale ≥ the log of every term.
template <class T>
struct FracHead {
  bool ok = false;  ///< false: a term's bound is NaN
  std::vector<FracPieces<T>> pieces;
  std::vector<T> lc;  ///< log|C(α, i)|
  T tail_lc = 0;      ///< log|C(α, n0)|, where the tail starts
  T scale = 0;
};

template <class T>
FracHead<T> frac_head(const FracSetup<T>& f) {
  // log ½erfc(x) ≤ −x² for x ≥ 0 (erfc(x) ≤ e^{−x²}) and ≤ 0 always: an upper
  // bound on the log of a term that needs no special function.
  auto bound = [](T e, T x) { return x > 0 ? e - x * x : e; };

  // The first pass fixes a scale ≥ the log of every term (later terms are
  // smaller: |C(α,i+1)/C(α,i)| < 1 and u, v ≤ 1).
  FracHead<T> head;
  head.pieces.reserve(static_cast<std::size_t>(f.n0));
  head.lc.reserve(static_cast<std::size_t>(f.n0));
  T lc = 0;
  T scale = 0;
  for (long long i = 0; i < f.n0; ++i) {
    head.pieces.push_back(frac_pieces(f, i));
    head.lc.push_back(lc);
    const FracPieces<T>& p = head.pieces.back();
    const T bl = bound(lc + p.el, p.xl), br = bound(lc + p.er, p.xr);
    if (bl != bl || br != br) return head;  // NaN
    if (i >= 2 && bl > scale) scale = bl;
    if (br > scale) scale = br;
    lc += lm::log((f.a - T(i)) / T(i + 1));  // → log|C(α, i+1)|
  }
  head.ok = true;
  head.tail_lc = lc;
  head.scale = scale;
  return head;
}

/// Terms summed so far (each times e^{−scale}): their sum, the sum of their
/// magnitudes, Σ |term|·κ (the rounding error, in units of u) and their number.
template <class T>
struct FracSums {
  T sum = 0, abs_sum = 0, err = 0;
  long long count = 0;
  void add(T v, T kappa) {
    sum += v;
    abs_sum += abs_t(v);
    err += abs_t(v) * kappa;
    ++count;
  }
};

/// The head's terms: T0, T1 and −S (see above), then left_i (i ≥ 2) and
/// right_i for i < n0. `ks`: the error factor of e^{−scale}.
template <class T>
void sum_frac_head(const FracSetup<T>& f, const FracHead<T>& head, T ks, FracSums<T>& sums) {
  const T q = f.q, a = f.a, l1q = f.l1q, s = f.s, z0 = f.z0, scale = head.scale;
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
  sums.add(excess * p_left, excess_kappa + k_pl + ks);
  sums.add(a * q * lm::expm1((a - 1) * l1q) * er_left,
           abs_t((a - 1) * l1q) + k_el + ks + kTermUlps);
  sums.add(-(1 - a * q) * p_right, k_pr + ks + kTermUlps);
  sums.add(-a * q * er_right, k_er + ks + kTermUlps);
  T kf = 0;
  for (long long i = 0; i < f.n0; ++i) {
    const FracPieces<T>& p = head.pieces[static_cast<std::size_t>(i)];
    const T l = head.lc[static_cast<std::size_t>(i)];
    const T kappa = p.kappa + abs_t(l) + ks;
    if (i >= 2) {
      const T v = exp_half_erfc(l + p.el - scale, p.xl, kf);
      sums.add(v, kappa + kf);
    }
    const T v = exp_half_erfc(l + p.er - scale, p.xr, kf);
    sums.add(v, kappa + kf);
  }
}

/// One more term a_i of the Euler transform: diff[k] = (−Δ)^k a_{i−k}, updated
/// in place and one longer.
template <class T>
void push_euler_difference(std::vector<T>& diff, T ai) {
  T carry = ai;
  for (auto& d : diff) {
    const T next = d - carry;
    d = carry;
    carry = next;
  }
  diff.push_back(carry);
}

/// B·e^{−scale}, the head's sum and the tail's, and the bounds of the tail's
/// remainder on each side (its rounding error is added to `sums`).
template <class T>
struct FracTotal {
  bool ok = false;  ///< false: a term is NaN
  T b = 0, up = 0, down = 0;
};

/// The tail, i ≥ n0: Σ (−1)^{i−n0} a_i with a_i completely monotone (see
/// above), summed directly, then by the Euler transform, after the head's `sums`.
template <class T>
FracTotal<T> sum_frac_tail(const FracSetup<T>& f, const FracHead<T>& head, T ks,
                           FracSums<T>& sums) {
  const T a = f.a, u = f.u, scale = head.scale;
  const T sum = sums.sum;
  T& err = sums.err;
  FracTotal<T> out;
  // |C(α, i)| is carried as c·e^{lc} to avoid a logarithm per term.
  T lc = head.tail_lc;
  T c = 1;
  T up = 0, down = 0;
  T direct = 0, prev = -1;
  int sign = 1;
  bool euler = false, use_left = true, use_right = true;
  int euler_sign = 1;
  T euler_sum = 0, euler_first = 0, euler_kappa = 0, pow2 = 1;
  std::vector<T> diff;  // diff[k] = (−Δ)^k a_{i−k}
  for (long long i = f.n0;; ++i) {
    const FracPieces<T> p = frac_pieces(f, i);
    T kl = 0, kr = 0;
    const T vl = use_left ? c * exp_half_erfc(lc + p.el - scale, p.xl, kl) : T(0);
    const T vr = use_right ? c * exp_half_erfc(lc + p.er - scale, p.xr, kr) : T(0);
    const T ai = vl + vr;
    if (ai != ai) return out;
    const T kappa = p.kappa + abs_t(lc) + ks + (kl > kr ? kl : kr);
    err += ai * kappa;
    sums.abs_sum += ai;
    ++sums.count;
    c *= (T(i) - a) / T(i + 1);  // → |C(α, i+1)|
    if (c < T(kTailFoldLow)) {
      lc += lm::log(c);
      c = 1;
    }
    const long long m = i - f.n0;
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
      push_euler_difference(diff, ai);
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
  out.ok = true;
  out.b = sum + direct + T(euler_sign) * euler_sum;
  out.up = up;
  out.down = down;
  return out;
}

template <class T>
FracSeries<T> frac_series(double q_in, double sigma_in, double alpha_in) {
  FracSeries<T> out;
  const FracSetup<T> f = frac_setup<T>(q_in, sigma_in, alpha_in);
  const FracHead<T> head = frac_head(f);
  if (!head.ok) return out;
  const T scale = head.scale;
  if (scale == lm::infinity<T>()) {
    out.ok = true;
    out.scale = scale;
    out.b = 1;
    return out;
  }
  out.scale = scale;
  const T ks = abs_t(scale) + kExpUlps;
  FracSums<T> sums;
  sum_frac_head(f, head, ks, sums);
  const FracTotal<T> total = sum_frac_tail(f, head, ks, sums);
  if (!total.ok) return out;
  const T u = f.u;
  const T err = sums.err * u + T(static_cast<double>(sums.count)) * u * sums.abs_sum;
  out.b = total.b;
  out.up = total.up + err;
  out.down = total.down + err;
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

/// log A_α is convex in α (Hölder), so for f = ⌊α⌋, c = f + 1,
///   log A_α ≤ (c − α)·log A_f + (α − f)·log A_c, with log A_1 = 0.
double log_a_convex_bound(double q, double sigma, double alpha) {
  const double f = std::floor(alpha), c = f + 1;
  const double la_f = f < 2 ? 0.0 : log_a_integer_order(q, sigma, static_cast<long long>(f));
  const double la_c = log_a_integer_order(q, sigma, static_cast<long long>(c));
  if (std::isinf(la_c) || std::isinf(la_f)) return kInf;
  return round_up(((c - alpha) * la_f + (alpha - f) * la_c) * (1 + kBoundRoundUp));
}

}  // namespace

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

}  // namespace dpb::log_a_detail
