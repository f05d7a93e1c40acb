#pragma once
// What the stages of the PLD accountant (pld.hpp, docs/pld.md#privacy-loss) share. Included
// only by src/accounting/pld_*.cpp; not part of the library's interface.
//
// Method and error terms, one numbered stage per file (the numbers are cited
// in the code; docs/pld.md restates each, from docs/pld.md#one-release to
// docs/pld.md#refinement):
//   (1), (2)  one release, connect-the-dots         discretise.cpp,
//                                                   mixture.cpp, atoms.cpp
//   (3)       lower bound by coupling; reading      bounds.cpp
//             δ(ε) and ε(δ) off the composed loss
//   (4)       composition by FFT                    compose.cpp
//   (4)       the window, by Chernoff bounds        tail_window.cpp
//   (4), (5)  few coefficients (spectral form)      spectrum.cpp
//   (5)       round-off                             compose.cpp, spectrum.cpp
//   (6)       refinement loop, the interval         refine.cpp
//
// (1) One release. With μ0 = base noise at 0, μ1 = at 1, μ = (1−q)μ0 + qμ1,
//     the remove-direction loss is L(z) = log((1−q) + q·r(z)), r = dμ1/dμ0,
//     nondecreasing in z (r(z) = exp((2z−1)/(2σ²)) for the Gaussian,
//     exp((|z| − |z−1|)/b) for Laplace), z ∼ μ; the add direction has loss −L(z),
//     z ∼ μ0 (docs/pld.md#directions). Because L is monotone, P(X ≤ l) and Q(X ≤ l) are CDFs of
//     μ and μ0 at the generalised inverse of L, so bucket masses are exact
//     differences of normal / Laplace CDFs, taken on the accurate side (erfc
//     in the upper tail). The same holds for pairs of Gaussian mixtures with a
//     monotone loss (the REPLACE pair of a Poisson-subsampled Gaussian, the
//     mixture of Gaussians), inverted numerically (mixture.cpp). Losses
//     with point masses only (randomized response, the canonical (ε, δ) pair,
//     discrete Laplace / Gaussian) are split atom by atom (atoms.cpp), and
//     a release that reveals which of several pairs it used (a blend) is the
//     weighted sum of their discretisations (discretise.cpp). Mass at +∞
//     by definition (an atom at +∞) counts in both bounds.
// (2) Connect-the-dots (Doroshenko et al. 2022, Alg. 1 / Thm 4.3): the P-mass p
//     of a bucket B = (l, l+Δ] with Q-mass qB = ∫_B e^{−X} dP goes to l and
//     l+Δ as p = a + b, qB = a·e^{−l} + b·e^{−l−Δ}. The discrete pair's profile
//     equals the true one at every grid point and is linear in e^ε in between;
//     the true profile is convex in e^ε, so the discrete pair dominates, and
//     dominance survives composition (Zhu, Dong & Wang 2022, Thm 10). Mass
//     outside [l_lo, l_hi] is put at +∞. Hence the UPPER bound needs no other
//     discretisation term.
// (3) LOWER bound by coupling (in the spirit of Gopi, Lee & Wutschitz 2021,
//     Thm 5.1). Send a point at X = l + u (0 ≤ u ≤ Δ) up with probability
//     w(u) = (1 − e^{−u})/(1 − e^{−Δ}), else down: this randomised rounding Y
//     reproduces exactly the masses of (2). D = Y − X has E[D | X] =
//     Δ·w(u) − u ∈ [0, β], β ≤ (Δ/2 + Δ²/12)²/2 ≈ Δ²/8, and a zero-mean part W,
//     |W| ≤ Δ, Var W ≤ Δ²·Σ_B p·w̄(1 − w̄) (Jensen, w(1−w) concave). Bernstein:
//     P(Σ W ≥ s) ≤ exp(−s²/(2(V + Δs/3))). On {Σ D ≤ t} the true sum is at least
//     Σ Y − t and (1 − e^{ε−x})₊ is nondecreasing in x, so
//       δ_true(ε) ≥ δ_Y(ε + t) − η,  t = T·β + s(η).
//     Dropping the truncated tails only lowers δ, so it is sound here.
//     A second bound from the same coupling charges D only near ε, where
//     (1 − e^{ε−s})₊ has its kink: δ_true(ε) ≥ δ_Y(ε) − β_T·P(S > ε) −
//     E Ψ(|S − ε|), second order in Δ (docs/pld.md#second-order-lower-bound);
//     the lower end is the larger of the two. With coarse tails (buckets of
//     width s·Δ where little mass lies) both bounds hold on the event that at
//     most K releases fall in a coarse bucket, whose complement is charged
//     (docs/pld.md#coarse-tails).
// (4) Composition: one forward real FFT per distinct release, Π_c X_c^{T_c}
//     pointwise (in log-polar form, |X| ≤ 1 clamped), one inverse FFT. After
//     many compositions only a few coefficients are not negligible (|Z_k| ≥
//     e^{−50}); then they are found from a transform of each release at its
//     own, smaller size plus a Lipschitz bound, computed by direct sums, and
//     δ(ε) = Σ_j y_j (1 − e^{ε−l_j})₊ is read from them in closed form
//     (geometric sums), with no transform of the whole window. The
//     window [a, b] comes from Chernoff bounds on the composed discrete loss,
//     P(S ≥ b) ≤ e^{−λb} Π_c M_c(λ)^{T_c}, with M_c evaluated on blocks at their
//     worst end. The circular convolution folds what lies outside the window
//     into it: mass from above moves down (can only lower δ: added to the
//     upper bound), mass from below moves up (can only raise δ: subtracted
//     from the lower bound).
// (5) Round-off, under the standard model of floating point (unit round-off
//     u) and of FFTs in it (Higham 2002, §24.1; Thm 24.2 is the normwise form):
//     each forward coefficient is within ρ_c = γ_N·‖x_c‖₁, γ_N = 8⌈log₂N⌉u, of
//     the exact one (every butterfly stage adds a relative error of a few u to
//     partial sums whose moduli add up to at most ‖x‖₁; the direct sums have
//     their own, similar constant). Z_k = Π_c X_ck^{T_c} moves by at most
//     Σ_c T_c ρ_c (r_ck + ρ_c)^{T_c−1} Π_{c'≠c}(r_c'k + ρ_c')^{T_c'}; the
//     log-polar power adds a relative error ≤ 8u((2 + C)·Σ_c T_c|log|X_ck|| +
//     Σ_c T_c|θ_c|(1 + |θ_c|) + 2π·C + 8), θ_c = arg X_ck; direct sums are
//     centred so that their error
//     shrinks with the frequency (docs/pld.md#round-off); the inverse
//     transform adds γ_N‖Ẑ‖₂ (normwise). By Parseval, Σ_j |ŷ_j − y_j| ≤
//     ‖Ẑ − Z‖₂ + γ_N‖Ẑ‖₂ (unnormalised F), and since (1 − e^{ε−l})₊ ≤ 1 that L1
//     bound is added to the upper δ and subtracted from the lower δ. Negative
//     outputs are clamped to 0, which only moves them towards the
//     (non-negative) truth. These bounds hold for FFT algorithms of the
//     Cooley–Tukey family under that model; FFTW is of that family but its
//     codelets are not individually proven to meet the constant.
// (6) Refinement. Both directions are composed on one grid Δ (the add
//     direction on a second thread) and the interval takes, end by end, the
//     larger of the two (docs/pld.md#directions: the result is the max over both
//     directions). Δ shrinks until (upper − lower) meets the tolerance; the
//     loop stops early, with a note, when the width stops shrinking (the
//     terms of (2)–(5) that do not depend on Δ dominate) or the grid reaches
//     its limit (pld.hpp).
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "accounting/numerics/double_limits.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::pld::detail {

using dpb::kInf;
using dpb::kU;  // the u of stage (5)
/// Smallest probability used as a tail mass or a failure probability η: positive
/// and far above the subnormal range, so logarithms and quotients stay finite.
inline constexpr double kTinyProbability = 1e-300;

/// Compensated (Kahan) summation: s − c holds the sum within 2u + O(n·u²)
/// of the moduli added.
struct Compensated {
  double s = 0, c = 0;
  void add(double v) {
    const double y = v - c;
    const double t = s + y;
    c = (t - s) - y;
    s = t;
  }
  double total() const { return s - c; }
};

/// A grid over its limit (pld.hpp); the refinement loop turns it into a note.
struct GridTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --- (1), (2) discretise.cpp --------------------------------------------

/// Throws InvalidParameter unless m is a valid mechanism.
void validate(const Mechanism& m);

/// The loss range holding all but ≤ τ of one release's P-mass at each end
/// (what discretise_cdf() keeps at tail τ), for the kinds that get coarse
/// tails; nullopt for the others.
std::optional<std::pair<double, double>> coarse_range(const Mechanism& m, Direction d, double tau);

/// discretise() with a grid limit of `max_points` (GridTooLarge past it).
DiscreteLoss discretise_impl(const Mechanism& m, Direction d, double interval, double tail_mass,
                             std::size_t max_points, Coarsening coarsening = {});

/// A probability of the form P(z' ≤ z) kept on its accurate side: `v` is the
/// CDF when !upper, the survival function when upper.
struct Prob {
  double v = 0;
  bool upper = false;
  double cdf() const { return upper ? 1 - v : v; }
  double sf() const { return upper ? v : 1 - v; }
  Prob flipped() const { return {v, !upper}; }
};

/// P(a < X ≤ b) from the CDF values at a ≤ b, without cancelling in the tails.
inline double difference(const Prob& a, const Prob& b) {
  double d;
  if (a.upper && b.upper)
    d = a.v - b.v;
  else if (!a.upper && !b.upper)
    d = b.v - a.v;
  else
    d = b.cdf() - a.cdf();
  return d > 0 ? d : 0.0;
}

/// Cap on the exponent of e^{l} in (2): e^{700} < DBL_MAX ≈ e^{709.8}, so the
/// product stays finite (b is clamped to [0, p] anyway).
inline constexpr double kMaxExpArgument = 700.0;

/// Grid indices [k_lo, k_hi] covering the loss range [lo, hi], one extra point
/// each side (so that an atom on a boundary point lands inside a bucket);
/// GridTooLarge past max_points.
std::pair<std::int64_t, std::int64_t> grid_span(double lo, double hi, double interval,
                                                std::size_t max_points);

/// The computed probability of a coarse bucket is rounded up by this share
/// (far above the round-off of a CDF value).
inline constexpr double kCoarseProbabilityMargin = 1e-6;

/// (1), (2) for a loss that is a nondecreasing function of one real variable:
/// `model.at(l, d)` gives P(X ≤ l) and Q(X ≤ l) (Prob), `model.range(d, τ)` a
/// loss range holding all but ≤ τ of the P-mass at each end. Every bucket's
/// P-mass and Q-mass are exact CDF differences, split by connect-the-dots;
/// with coarse tails the buckets outside the fine part are `stride`·Δ wide
/// (connect-the-dots holds for any points: docs/pld.md#coarse-tails).
template <typename Model>
DiscreteLoss discretise_cdf(const Model& model, Direction d, double interval, double tail_mass,
                            std::size_t max_points, Coarsening coarsening = {}) {
  const auto [lo, hi] = model.range(d, tail_mass);
  auto [k_lo, k_hi] = grid_span(lo, hi, interval, max_points);
  const auto s = static_cast<std::int64_t>(std::max<std::size_t>(coarsening.stride, 1));
  std::int64_t f_lo = k_lo, f_hi = k_hi;  // the fine part, in grid indices
  if (s > 1 && coarsening.tail > tail_mass) {
    const auto [fine_lo, fine_hi] = model.range(d, coarsening.tail);
    f_lo = std::clamp(static_cast<std::int64_t>(std::floor(fine_lo / interval)), k_lo, k_hi);
    f_hi = std::clamp(static_cast<std::int64_t>(std::ceil(fine_hi / interval)), f_lo, k_hi);
    // The coarse points reach past both ends of the range.
    k_lo = f_lo - s * ((f_lo - k_lo + s - 1) / s);
    k_hi = f_hi + s * ((k_hi - f_hi + s - 1) / s);
    if (!(static_cast<double>(k_hi - k_lo) < static_cast<double>(max_points)))
      throw GridTooLarge("pld: one release needs more than the grid limit");
  }
  DiscreteLoss out;
  out.interval = interval;
  out.first_index = k_lo;
  const auto n = static_cast<std::size_t>(k_hi - k_lo + 1);
  out.mass.assign(n, 0.0);
  out.stride = static_cast<std::size_t>(f_lo > k_lo || f_hi < k_hi ? s : 1);
  out.fine_begin = static_cast<std::size_t>(f_lo - k_lo);
  out.fine_end = static_cast<std::size_t>(f_hi - k_lo + 1);
  auto [p_prev, q_prev] = model.at(static_cast<double>(k_lo) * interval, d);
  const Prob p_first = p_prev;
  double var = 0, coarse = 0;
  // The coarse buckets hold X ≤ f_lo·Δ and X > f_hi·Δ.
  if (out.stride > 1)
    coarse = model.at(static_cast<double>(f_lo) * interval, d).first.cdf() +
             model.at(static_cast<double>(f_hi) * interval, d).first.sf();
  for (std::int64_t k = k_lo; k < k_hi;) {
    const std::int64_t step = k < f_lo || k >= f_hi ? s : 1;
    const std::int64_t next = k + step;
    const double l = static_cast<double>(k) * interval;
    const auto [p_next, q_next] = model.at(static_cast<double>(next) * interval, d);
    const double p = difference(p_prev, p_next);
    if (p > 0) {
      const double qb = difference(q_prev, q_next);
      // (2): b = (p − qB·e^{l}) / (1 − e^{−w}), w = step·Δ, clamped to [0, p] against round-off.
      const double down = -std::expm1(-static_cast<double>(step) * interval);
      double b = (p - qb * std::exp(l < kMaxExpArgument ? l : kMaxExpArgument)) / down;
      b = b < 0 ? 0.0 : (b > p ? p : b);
      const double a = p - b;
      out.mass[static_cast<std::size_t>(k - k_lo)] += a;
      out.mass[static_cast<std::size_t>(next - k_lo)] += b;
      // (3): a bucket of width w adds w²·w̄(1 − w̄) to Var W, here in units of Δ².
      var += a * b / p * static_cast<double>(step * step);
    }
    p_prev = p_next;
    q_prev = q_next;
    k = next;
  }
  out.dropped_mass = p_first.cdf() + p_prev.sf();
  out.split_variance = var;
  out.coarse_probability =
      out.stride > 1 ? std::min(1.0, coarse * (1 + kCoarseProbabilityMargin)) : 0.0;
  return out;
}

// --- (1), (2) further mechanisms: mixture.cpp, atoms.cpp ------------

/// gaussian_replace and gaussian_mixture: Gaussian mixtures with a common
/// standard deviation, loss inverted by a safeguarded solver.
DiscreteLoss discretise_mixture(const Mechanism& m, Direction d, double interval, double tail_mass,
                                std::size_t max_points, Coarsening coarsening = {});
double exact_delta_mixture(const Mechanism& m, Direction d, double epsilon);
std::pair<double, double> range_mixture(const Mechanism& m, Direction d, double tau);
void validate_mixture(const Mechanism& m);

/// atoms, discrete_laplace, discrete_gaussian: a loss with point masses only.
DiscreteLoss discretise_atoms(const Mechanism& m, Direction d, double interval, double tail_mass,
                              std::size_t max_points);
double exact_delta_atoms(const Mechanism& m, Direction d, double epsilon);
void validate_atoms(const Mechanism& m);

// --- (4) the window: tail_window.cpp -------------------------------------

/// Blocks of a discrete loss for Chernoff bounds: mass, mean loss, lowest and
/// highest loss. On a block e^{λy} lies below its chord (convexity), so
/// m·[e^{λ lo}(hi − mean) + e^{λ hi}(mean − lo)]/(hi − lo) bounds its share of
/// E[e^{λY}] for either sign of λ, tight to second order in the block width.
struct Block {
  double mass, mean, lo, hi;
};

/// A release's transform at a size of its own, from which candidates()
/// locates the few frequencies that survive many compositions: the moduli
/// |X̂(2πi/m)|, i ≤ m/2, their error bound ρ, and the spread Σ_j x_j |j − mean|
/// (in grid steps: the Lipschitz constant of |X(θ)|).
struct CoarseSpectrum {
  std::vector<double> modulus;
  std::size_t m = 0;
  double rho = 0, spread = 0;
};

/// One release discretised, with its Chernoff blocks and ψ(±λ) per λ: a pure
/// function of (mechanism, direction, Δ, tail mass, grid limit), shared by
/// every composition that asks for it (tail_window.cpp remembers them).
struct Release {
  DiscreteLoss loss;
  std::vector<Block> blocks;
  std::vector<double> mgf_up, mgf_down;  ///< ψ(λ), ψ(−λ) of one release
  /// Direct sums are taken about this index (the rounded mean of the mass),
  /// with Σ_j x_j |j − centre| (rounded up) and Σ_j x_j (compensated): their
  /// error then shrinks with the frequency (docs/pld.md#round-off).
  std::int64_t centre = 0;
  double centre_spread = 0;
  double total_mass = 0;
  /// Σ_j x_j over the coarse points (rounded up), and the number of points
  /// the direct sums visit (the fine part and the coarse points).
  double coarse_mass = 0;
  std::size_t terms = 0;
  /// Bound on |Ŷ_k − Y_k| of dft_at() at frequency k of n (direct_dft()).
  double direct_error(std::size_t k, std::size_t n) const;
  /// Computed on first use, once, from any thread (spectrum.cpp): the
  /// points of a series and a solver's iterates read the same release again.
  const CoarseSpectrum& coarse() const;
  /// Y_k = Σ_j x_j (e^{−2πi k(j − centre)/n} − 1) at the listed k, by
  /// direct_dft() (X_k about the centre is total_mass + Y_k); each
  /// (n, k) is computed once and remembered (up to kRememberedCoefficients),
  /// so the points of a series that share a period n share their sums.
  std::vector<std::complex<double>> dft_at(std::size_t n, std::span<const std::size_t> ks) const;
  /// fft::forward(loss.mass, n), the last n asked remembered (up to
  /// kRememberedTransformPoints).
  std::shared_ptr<const std::vector<std::complex<double>>> transform(std::size_t n) const;

 private:
  mutable std::once_flag coarse_once_;
  mutable CoarseSpectrum coarse_;
  mutable std::mutex mutex_;  ///< guards dft_ and transform_
  mutable std::map<std::pair<std::size_t, std::size_t>, std::complex<double>> dft_;
  mutable std::shared_ptr<const std::vector<std::complex<double>>> transform_;
  mutable std::size_t transform_n_ = 0;
};

/// The discretised releases of one direction, with their Chernoff bounds.
struct Prepared {
  std::vector<std::shared_ptr<const Release>> releases;
  std::vector<double> counts;
  std::int64_t first = 0, last = 0;  // support of the composed loss (grid indices)
  double total_count = 0;
  // Chernoff: log P(S ≥ x) ≤ min_λ −λx + Σ T ψ(λ) (upper), log P(S ≤ x) ≤ min_λ λx + Σ T ψ(−λ).
  std::vector<double> lambdas, psi_up, psi_down;
  const DiscreteLoss& loss(std::size_t c) const { return releases[c]->loss; }
  double log_tail_above(double x) const;
  double log_tail_below(double x) const;
};

/// Discretises every component (grid limit `max_points`) and tabulates ψ(±λ).
Prepared prepare(std::span<const Component> components, Direction d, double interval,
                 double tail_mass, std::size_t max_points, Coarsening coarsening = {});

/// The window [k_a, k_b] (grid indices, within [first, last]) outside which
/// each side's Chernoff bound is at most window_tail.
std::pair<std::int64_t, std::int64_t> window(const Prepared& prep, double interval,
                                             double window_tail);

// --- (3) reading the composed loss: bounds.cpp -------------------------

/// Upper bounds on the TPR at each FPR from the composed loss of every
/// direction: min over a grid of ε ≥ 0 of the (ε, δ_up(ε)) two-line bound,
/// δ_up the largest over the directions (Dong, Roth & Su 2022, Prop. 2.12).
std::vector<double> tpr_upper(std::span<const ComposedLoss> directions,
                              std::span<const double> fprs);
/// Lower bounds on the largest TPR of a test of P against Q (the direction
/// given) at each FPR: the largest TPR is inf over ε ∈ ℝ of δ(ε) + e^ε·x
/// (Neyman–Pearson duality), bounded below piece by piece of an ε grid by
/// the lower δ bound (stage (3)).
std::vector<double> tpr_lower(const ComposedLoss& direction, std::span<const double> fprs);

// --- (4), (5) composition: compose.cpp ----------------------------------

/// γ_N of (5) for an FFT of size n.
double fft_gamma(std::size_t n);

/// Weight of coefficient k ≤ N/2 in sums over all N (the Hermitian mirror
/// counts twice).
inline double hermitian_weight(std::size_t k, std::size_t n) {
  return (k == 0 || (n % 2 == 0 && k == n / 2)) ? 1.0 : 2.0;
}

/// compose() with a grid limit of `max_grid` (GridTooLarge past it). With
/// `shared` (Options::share_releases) the period is a power of two where the
/// limits allow, so that nearby run lengths share one and with it the
/// release's remembered transforms (Release::dft_at, Release::transform).
/// `roundoff_target`: when full transforms leave a round-off bound above it,
/// their few survivors are computed again by centred direct sums if that is
/// affordable (docs/pld.md#round-off); 0: whenever affordable.
///
/// `coarsening`: coarse tails for the releases that allow them; the bound K on
/// the releases in coarse buckets is exceeded with probability at most
/// `window_tail` (docs/pld.md#coarse-tails).
ComposedLoss compose_impl(std::span<const Component> components, Direction d, double interval,
                          double tail_mass, double window_tail, std::size_t max_grid,
                          bool shared = false, double roundoff_target = 0,
                          Coarsening coarsening = {});

/// Coarse tails (docs/pld.md#coarse-tails): with N the number of releases in a
/// coarse bucket, a sum of independent indicators with Σ p_i = `lambda`,
/// P(N ≥ j) ≤ λ^j/j! (a union bound over the j-subsets). Returns the least K
/// with P(N > K) ≤ `target` (at most `releases`, where P(N > K) = 0) and the
/// bound on P(N > K).
std::pair<double, double> coarse_count_bound(double lambda, double releases, double target);

// --- (4), (5) few coefficients: spectrum.cpp ----------------------------

/// The points of `x` that direct_dft() visits: runs begin, begin + stride, …
/// (count of them): the fine part and the coarse points of each tail.
struct Segment {
  std::size_t begin, stride, count;
};
std::vector<Segment> segments_of(const DiscreteLoss& x);

/// Y_k = Σ_j x_j (e^{−2πi k(j − centre)/n} − 1) over the points of
/// `segments`, for the listed k only (the sign convention of fft::forward),
/// each phase reduced exactly modulo n in integers; its error is
/// Release::direct_error().
std::vector<std::complex<double>> direct_dft(const std::vector<double>& x, std::size_t n,
                                             const std::vector<std::size_t>& ks,
                                             std::int64_t centre,
                                             std::span<const Segment> segments);

/// The frequencies k ≤ n/2 at which Π_c |X_ck|^{T_c} may exceed e^{bound_log};
/// nullopt when too many remain for direct sums.
std::optional<std::vector<std::size_t>> candidates(const Prepared& prep, std::size_t n,
                                                   double bound_log);

/// The spectral form of the composed loss on the window starting at k_a, from
/// the composed coefficients z[i] at frequency ks[i] of the circular array in
/// which y_j (loss (k_a + j)Δ) sits at position j + shift; adds the round-off
/// of evaluating it to `roundoff`.
ComposedLoss spectral_form(double interval, std::int64_t k_a, std::size_t n, std::int64_t shift,
                           std::span<const std::size_t> ks, std::span<const std::complex<double>> z,
                           double& roundoff);

}  // namespace dpb::pld::detail
