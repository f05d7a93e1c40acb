// Rényi DP of the subsampled Gaussian mechanism under sampling without
// replacement and replace-one neighbouring, docs/rdp.md#without-replacement.
//
// References
//  [WBK19] Y.-X. Wang, B. Balle, S. Kasiviswanathan, "Subsampled Rényi
//          Differential Privacy and Analytical Moments Accountant",
//          AISTATS 2019, arXiv:1808.00087. Theorem numbers below are those
//          dp_accounting's rdp_privacy_accountant.py cites for
//          _compute_rdp_sample_wor_gaussian (Theorem 9 of the AISTATS paper,
//          "Theorem 27" of the arXiv version for the ternary-|χ|^j
//          strengthening, Corollary 10 for fractional orders).
//
// Setting. A batch of m of the N records is drawn uniformly without
// replacement (γ = m/N); the base mechanism is the Gaussian mechanism on the
// batch with noise multiplier σ. Under replace-one its sensitivity is
// Δ = 2 clipping norms (see the header), so its RDP is
//   ε(α) = αΔ²/(2σ²) = a·α,   a := Δ²/(2σ²) = 2/σ².
// For two Gaussians P, Q with means Δ apart (σ the noise), the likelihood
// ratio L = dP/dQ has E_Q[L^k] = exp(a·k(k−1)) for every k.
//
// The bound. For integer α ≥ 2 ([WBK19] Thm 9 and its ternary-|χ|^j form),
//   A_α := E_q[(p/q)^α] ≤ 1 + Σ_{j=2..α} C(α,j) γ^j · min{ 4·ζ̄_j , 2·e^{(j−1)ε(j)} },
//   ρ(α) = log A_α / (α − 1),
// where ζ̄_j bounds the ternary |χ|^j divergence E_Q[|L − 1|^j] of the base
// Gaussian:
//   - j even: ζ_j = E_Q[(L − 1)^j] = Σ_{k=0..j} C(j,k)(−1)^{j−k} e^{a·k(k−1)},
//     the j-th forward difference of k ↦ e^{(k−1)ε(k)} at 0;
//   - j odd: ζ̄_j = √(ζ_{j−1}·ζ_{j+1}) ≥ E_Q|L − 1|^j (Cauchy–Schwarz);
//   - j = 2 gives the 4(e^{ε(2)} − 1) of Thm 9;
// and 2e^{(j−1)ε(j)} is Thm 9's e^{(j−1)ε(j)}·min{2, (e^{ε(∞)} − 1)^j} with
// ε(∞) = ∞ for the Gaussian.
//
// Fractional α ([WBK19] Cor. 10): log E[(p/q)^α] = (α − 1)·D_α is convex in
// α (Hölder), so with f = ⌊α⌋, c = ⌈α⌉, t = α − f and log A_1 = 0,
//   (α − 1)ρ(α) ≤ (1 − t)·log A_f + t·log A_c.
// Both forms are also capped by the plain Gaussian a·α: the subsampled output
// pair is a mixture of identical pairs and replace-one neighbour pairs, and
// e^{(α−1)D_α} is jointly convex.
//
// Computing ζ_j. The alternating sum cancels badly when a·j is small (then
// ζ_j ≈ (j−1)!!·(2a)^{j/2} while the terms are ≈ 2^j). Two methods, each with
// an error bound, and the result is rounded up:
//   direct: the alternating sum in long double, scaled by its largest term,
//     used when its cancellation error bound is below 1e-12 relative;
//   series: expanding e^{a·k(k−1)} = Σ_n a^n (k(k−1))^n/n! and taking the
//     j-th difference term by term gives a series of non-negative terms
//       ζ_j = Σ_n a^n W(n,j)/n!,
//     W(n,j) = number of sequences of n ordered pairs of distinct elements of
//     {1..j} whose union is all of {1..j} (Δ^j of the falling factorial
//     k^(m) at 0 is j!·[m = j], and (k^(2))^n expands in falling factorials
//     with these counts). Classifying by what the last pair adds,
//       W(n+1,j) = j(j−1)·(W(n,j) + 2W(n,j−1) + W(n,j−2)),  W(0,j) = [j = 0],
//     and W(n,j) ≤ (j(j−1))^n bounds the tail of the series by a Poisson tail.
// If neither method applies (huge orders with small a), the 4ζ̄_j option is
// dropped and the term uses 2e^{(j−1)ε(j)}: still a sound, looser bound.
#include "accounting/rdp/rdp_without_replacement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/log_math.hpp"

namespace dpb {
namespace {

namespace lm = logmath;
using ld = long double;

constexpr ld kInfL = std::numeric_limits<ld>::infinity();
constexpr ld kUnitL = std::numeric_limits<ld>::epsilon() / 2;

/// Largest moment order computed by the non-negative series (O(j·rows) work).
constexpr long long kMaxSeriesMoment = 258;
/// Largest moment order computed at all; beyond, terms use 2e^{(j−1)ε(j)}.
constexpr long long kMaxMoment = 4098;
/// Row cap of the series (the rows needed grow like a·j²).
constexpr long long kMaxSeriesRows = 20000;
/// Largest integer order summed term by term; beyond, the plain Gaussian.
constexpr double kMaxSummedOrder = 1e6;
/// Relative error accepted from the direct alternating sum.
constexpr ld kDirectRelTol = 1e-12L;

/// log ζ_j (even j) for the base Gaussian with a = Δ²/(2σ²); +inf when not
/// computed. Values are rounded up by their error bounds.
class EvenMoments {
 public:
  EvenMoments(ld a, long long max_j) : a_(a), max_j_(std::min(max_j, kMaxMoment)) {}

  ld log_zeta(long long j) {
    if (j > max_j_) return kInfL;
    if (j == 2) return lm::log(lm::expm1(2 * a_));  // e^{ε(2)} − 1, exact
    auto it = cache_.find(j);
    if (it != cache_.end()) return it->second;
    ld v = kInfL;
    // The top term e^{a·j(j−1)} dominates once 2a(j − 1) exceeds log j;
    // well below that the direct sum cancels and the series is cheap.
    const ld spread = 2 * a_ * ld(j - 1);  // log of e^{a·j(j−1)} / e^{a·(j−1)(j−2)}
    if (spread >= 1 && (j <= kMaxSeriesMoment || spread >= lm::log(ld(j)) + 3)) v = direct(j);
    if (!(v < kInfL) && j <= kMaxSeriesMoment) v = series(j);
    cache_[j] = v;
    return v;
  }

 private:
  /// Σ_k C(j,k)(−1)^{j−k} e^{a·k(k−1)} summed from k = j down, relative to
  /// e^{a·j(j−1)}: the k-th term is e^{d_k} with
  ///   d_k = log C(j,k) − a·(j−k)(j+k−1),
  /// computed directly so that its rounding error is small where the term is
  /// large. The terms below k total at most 2^j·e^{a(k−1)(k−2)} (a·i(i−1)
  /// increases with i), which bounds the truncation.
  ld direct(long long j) const {
    const ld log2 = lm::log(ld(2));
    const ld top = a_ * ld(j) * ld(j - 1);
    ld ref = 0;  // scale of the running sums: they hold Σ e^{d_k − ref}
    ld sum = 0, abs_sum = 0, err = 0, lc = 0;
    ld rest = -kInfL;  // log bound on the terms not summed, relative to e^{top}
    for (long long k = j; k >= 0; --k) {
      const ld drop = a_ * ld(j - k) * ld(j + k - 1);
      const ld d = lc - drop;
      if (d > ref) {
        const ld f = lm::exp(ref - d);
        sum *= f, abs_sum *= f, err *= f;
        ref = d;
      }
      const ld t = lm::exp(d - ref);
      sum += ((j - k) % 2 == 0) ? t : -t;
      abs_sum += t;
      // Rounding error of d: the log recurrence for lc and the product `drop`.
      err += t * kUnitL * (4 * std::fabs(lc) + 3 * drop + ld(2 * (j - k) + 8));
      if (k == 0) break;
      const ld below = ld(j) * log2 + a_ * ld(k - 1) * ld(k - 2) - top;
      if (below < ref - 80) {  // e^{−80} ≈ 2e-35 relative
        rest = below;
        break;
      }
      lc += lm::log(ld(k) / ld(j - k + 1));  // log C(j, k−1)
    }
    err += abs_sum * kUnitL * ld(j + 4);
    if (rest > -kInfL) err += lm::exp(rest - ref);
    if (!(sum > 0) || !(err <= kDirectRelTol * sum)) return kInfL;
    // top carries a relative rounding error ≤ 2u.
    return top * (1 + 2 * kUnitL) + ref + lm::log(sum + err);
  }

  /// Fills the series for the columns up to (at least) `j` and returns column
  /// j. Recomputed with twice the columns when a later call needs more.
  ld series(long long j) {
    if (j < static_cast<long long>(series_log_.size())) return series_value(j);
    const long long cols =
        std::min({std::max(j + 1, 2 * static_cast<long long>(series_log_.size())),
                  kMaxSeriesMoment + 1, max_j_ + 1});
    // Scaled terms T(n,i) = a^{−⌈i/2⌉}·a^n W(n,i)/n!:
    //   T(n+1,i) = i(i−1)/(n+1)·(a·T(n,i) + 2a^{[i even]}·T(n,i−1) + T(n,i−2)).
    std::vector<ld> row(static_cast<std::size_t>(cols), 0), next(row.size(), 0);
    std::vector<ld> total(row.size(), 0);
    std::vector<bool> done(row.size(), false);
    row[0] = 1;
    total[0] = 1;
    const ld log_a = lm::log(a_);
    series_log_.assign(row.size(), kInfL);
    for (long long n = 0; n < kMaxSeriesRows; ++n) {
      bool all_done = true;
      for (long long i = 2; i < cols; i += 2) {
        const auto ui = static_cast<std::size_t>(i);
        if (done[ui]) continue;
        // Tail after row n: Σ_{m>n} a^m W(m,i)/m! ≤ Σ_{m>n} b^m/m!, b = a·i(i−1);
        // for n + 2 > b it is ≤ b^{n+1}/(n+1)!/(1 − b/(n+2)).
        const ld b = a_ * ld(i) * ld(i - 1);
        const ld h = ld((i + 1) / 2);
        if (2 * b + ld(i) > ld(kMaxSeriesRows)) {  // cannot converge: not available
          done[ui] = true;
          continue;
        }
        if (ld(n + 2) > 2 * b && n >= i / 2) {
          const ld log_tail = ld(n + 1) * lm::log(b) - lm::lgamma(ld(n + 2)) -
                              lm::log1p(-b / ld(n + 2)) - h * log_a;
          if (total[ui] > 0 && std::isfinite(total[ui]) &&
              log_tail < lm::log(total[ui]) - ld(42)) {  // e^{−42} ≈ 6e-19
            // Rounding: every T carries ≤ 4(n+1) roundings of a positive sum.
            const ld s = total[ui] * (1 + ld(4 * (n + 8)) * kUnitL) + lm::exp(log_tail);
            series_log_[ui] = h * log_a + lm::log(s);
            done[ui] = true;
            continue;
          }
        }
        all_done = false;
      }
      if (all_done) break;
      const ld inv = ld(1) / ld(n + 1);
      next[0] = next[1] = 0;
      for (long long i = 2; i < cols; ++i) {
        const auto ui = static_cast<std::size_t>(i);
        const ld mid = (i % 2 == 0) ? a_ : ld(1);
        next[ui] = ld(i) * ld(i - 1) * inv * (a_ * row[ui] + 2 * mid * row[ui - 1] + row[ui - 2]);
      }
      std::swap(row, next);
      for (std::size_t i = 0; i < row.size(); ++i) total[i] += row[i];
    }
    return series_value(j);
  }

  ld series_value(long long j) const {
    const auto uj = static_cast<std::size_t>(j);
    return uj < series_log_.size() ? series_log_[uj] : kInfL;
  }

  ld a_;
  long long max_j_;
  std::map<long long, ld> cache_;
  std::vector<ld> series_log_;
};

/// Everything an evaluation at one (γ, σ) shares between orders.
class WorGaussian {
 public:
  WorGaussian(double gamma, double sigma, long long max_moment)
      // a = Δ²/(2σ²), rounded up (ζ_j and ε(j) increase with a).
      : a_(std::nextafter(
            ld(kReplaceOneSensitivity * kReplaceOneSensitivity) / (2 * ld(sigma) * ld(sigma)),
            kInfL)),
        log_gamma_(std::log(gamma)),
        moments_(a_, max_moment) {}

  /// Plain Gaussian under replace-one: a·α, rounded up.
  double plain(double alpha) const {
    return std::nextafter(static_cast<double>(a_ * ld(alpha)), kInf);
  }

  /// Upper bound on log A_α for integer α ≥ 1 (Thm 9 / ternary form above).
  ld log_a(long long alpha) {
    if (alpha <= 1) return 0;
    auto it = log_a_cache_.find(alpha);
    if (it != log_a_cache_.end()) return it->second;
    const ld al = ld(alpha);
    const ld log2 = lm::log(ld(2)), log4 = lm::log(ld(4));
    ld lc = lm::log(al) + lm::log(al - 1) - log2;  // log C(α, 2)
    ld ref = -kInfL, sum = 0, max_err = 0;
    for (long long j = 2; j <= alpha; ++j) {
      const ld jl = ld(j);
      const ld crude = log2 + a_ * jl * (jl - 1);  // 2e^{(j−1)ε(j)}
      ld fine = kInfL;                             // 4ζ̄_j
      if (j % 2 == 0) {
        fine = log4 + moments_.log_zeta(j);
      } else {
        const ld lo = moments_.log_zeta(j - 1), hi = moments_.log_zeta(j + 1);
        if (lo < kInfL && hi < kInfL) fine = log4 + (lo + hi) / 2;
      }
      const ld inner = std::min(crude, fine);
      const ld t = lc + jl * ld(log_gamma_) + inner;
      // Error in t: log γ carries u_double relative, the rest u_ld per op.
      const ld err = ld(kU) * std::fabs(jl * ld(log_gamma_)) +
                     kUnitL * (2 * std::fabs(lc) + 2 * std::fabs(inner) + 4 * jl + 8);
      max_err = std::max(max_err, err);
      if (t > ref) {
        sum = (ref > -kInfL ? sum * lm::exp(ref - t) : 0) + 1;
        ref = t;
      } else {
        sum += lm::exp(t - ref);
      }
      if (j < alpha) lc += lm::log((al - jl) / (jl + 1));  // log C(α, j+1)
    }
    // log B, rounded up by the term errors and the summation error.
    const ld log_b = ref + lm::log(sum) + max_err + ld(alpha + 4) * kUnitL;
    const ld v = lm::log1p_exp(log_b);
    log_a_cache_[alpha] = v;
    return v;
  }

  double rdp(double alpha) {
    const double plain_rdp = plain(alpha);
    if (!(alpha <= kMaxSummedOrder)) return plain_rdp;  // also α = +inf
    const double f = std::floor(alpha);
    ld la;
    if (f == alpha) {
      la = log_a(static_cast<long long>(f));
    } else {
      // [WBK19] Cor. 10: interpolate log A between ⌊α⌋ and ⌈α⌉.
      const ld t = ld(alpha) - ld(f);
      la = (1 - t) * log_a(static_cast<long long>(f)) + t * log_a(static_cast<long long>(f) + 1);
    }
    if (!(la < kInfL)) return plain_rdp;
    const ld r = la / (ld(alpha) - 1);
    double d = static_cast<double>(r);
    if (ld(d) < r) d = std::nextafter(d, kInf);
    d = std::nextafter(d, kInf);  // the interpolation and the division
    return std::min(d, plain_rdp);
  }

 private:
  ld a_;
  double log_gamma_;
  EvenMoments moments_;
  std::map<long long, ld> log_a_cache_;
};

void check(double ratio, double sigma) {
  if (!(ratio >= 0 && ratio <= 1)) throw InvalidParameter("sampling_ratio", "must be in [0, 1]");
  if (!(sigma > 0)) throw InvalidParameter("noise_multiplier", "must be > 0");
}

/// Moment orders needed for integer orders up to ⌈α⌉ (odd j uses j + 1).
long long moments_for(double alpha) {
  if (!(alpha <= kMaxSummedOrder)) return 0;
  return static_cast<long long>(std::ceil(alpha)) + 1;
}

}  // namespace

std::vector<double> rdp_sampled_without_replacement_gaussian(double sampling_ratio, double sigma,
                                                             std::span<const double> orders) {
  check(sampling_ratio, sigma);
  for (double a : orders)
    if (!(a > 1)) throw InvalidParameter("orders", "every order must be > 1");
  std::vector<double> out(orders.size(), 0.0);
  if (sampling_ratio == 0) return out;
  long long max_moment = 0;
  for (double a : orders) max_moment = std::max(max_moment, moments_for(a));
  WorGaussian w(sampling_ratio, sigma, max_moment);
  for (std::size_t i = 0; i < orders.size(); ++i)
    out[i] = sampling_ratio == 1 ? w.plain(orders[i]) : w.rdp(orders[i]);
  return out;
}

double rdp_sampled_without_replacement_gaussian(double sampling_ratio, double sigma, double alpha) {
  const double orders[1] = {alpha};
  return rdp_sampled_without_replacement_gaussian(sampling_ratio, sigma, orders).front();
}

}  // namespace dpb
