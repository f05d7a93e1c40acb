// Reading the composed loss (pld.hpp, ComposedLoss): δ(ε) and ε(δ) of the
// discrete distribution, turned into sound bounds on the true profile. The
// upper bound adds the error terms of stages (2), (4) and (5) of the PLD
// method (internal.hpp); the lower bound is stage (3), the coupling
// (in the spirit of Gopi, Lee & Wutschitz 2021, Thm 5.1) with Bernstein's
// inequality for the randomised rounding.
#include <algorithm>
#include <cmath>

#include "accounting/pld/internal.hpp"
#include "accounting/pld/pld.hpp"
#include "accounting/risk/attack_risk.hpp"

namespace dpb::pld {
namespace {

using detail::kInf;
using detail::kU;

/// Bisection on the spectral form: at most this many halvings (no hang) ...
constexpr int kBisectionMaxSteps = 200;
/// ... down to this relative width in ε, far below any interval width the
/// refinement aims at.
constexpr double kBisectionRelWidth = 1e-13;
/// Sums over n grid points are within kTailSumUlps·n·u relative.
constexpr double kTailSumUlps = 4;
/// (3): candidate failure probabilities η = f·δ of the lower bound; the best
/// is kept, so every f is sound and more of them only tighten the bound.
constexpr double kEtaFractions[] = {0.3, 0.1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5, 1e-6};

/// (3), second order (docs/pld.md#second-order-lower-bound): Ψ, the bound on
/// E[(|D| − a)₊ | X], is tabulated at levels a_m: kPsiFineLevels equally
/// spaced up to kPsiFineEnd·√V, then growing by kPsiGrowth to the end;
/// between levels its value at the left one is used (Ψ is nonincreasing, so
/// this only raises the penalty) ...
constexpr int kPsiFineLevels = 64;
constexpr double kPsiFineEnd = 8;
constexpr double kPsiGrowth = 1.25;
/// ... and each level's Ψ is an upper Riemann sum of G over this many steps.
constexpr int kPsiSubsteps = 16;
/// The table ends where the Bernstein tail is below e^{−kPsiExponentEnd}; the
/// rest of ∫G is bounded in closed form (an exponential tail).
constexpr double kPsiExponentEnd = 700;
/// Candidate widenings ρ = k·√V of Chebyshev's anticoncentration (all sound;
/// the smallest penalty is kept).
constexpr double kAnticoncentration[] = {1.5, 2, 3};
/// The penalty is a sum of ~2,000 non-negative terms computed in floating
/// point: it is rounded up by this share, far above their round-off.
constexpr double kPenaltyRoundUp = 1e-9;
/// ε lower bound: at most this many candidate ε are checked, each a little
/// lower than the last (a search for the largest ε whose lower δ exceeds δ).
constexpr int kCurvatureSearchSteps = 8;
/// ... each step asks the grid for this much more δ than the penalty at the
/// last candidate, so that the next candidate usually passes.
constexpr double kCurvatureSearchMargin = 1.02;
constexpr double kCurvatureSearchGrowth = 2;

/// tpr_lower(): the second-order bound is computed at the points within this
/// many of the minimum (64 recover what the first-order bound gave on the
/// finer grids it needed: q = 0.01, σ = 1, T = 10³, within 0.1%), or within the
/// second many in the spectral form, whose reads cost a sine per coefficient
/// (64 there took `risk` at q = 1e-4, σ = 0.7, T = 10⁶ from 0.24 s to 0.57 s),
/// for at most this many rounds of finding it.
constexpr std::size_t kTradeoffSecondOrderWindow = 64;
constexpr std::size_t kTradeoffSecondOrderWindowSpectral = 8;
constexpr int kTradeoffSecondOrderRounds = 4;

/// ε grid of the trade-off curves: at most this many points between the
/// lowest and highest loss of the window (every grid is sound; the spacing
/// costs a factor e^{spacing} on the x term of the lower bound only where the
/// optimum falls between points).
constexpr std::size_t kTradeoffPoints = 8192;

double lowest_loss(const ComposedLoss& c) {
  return static_cast<double>(c.first_index) * c.interval;
}
double highest_loss(const ComposedLoss& c) {
  return static_cast<double>(c.first_index + static_cast<std::int64_t>(c.grid_points()) - 1) *
         c.interval;
}

/// Points lo = ε_0 < … < ε_{n−1} = hi, spaced at least Δ apart.
std::vector<double> epsilon_grid(double lo, double hi, double interval) {
  if (!(hi > lo)) return {lo};
  const double span = (hi - lo) / interval;
  const std::size_t n =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(span)) + 1, 2, kTradeoffPoints);
  std::vector<double> eps(n);
  for (std::size_t j = 0; j < n; ++j)
    eps[j] = lo + (hi - lo) * static_cast<double>(j) / static_cast<double>(n - 1);
  eps.back() = hi;
  return eps;
}

double summation_factor(std::size_t n) { return kTailSumUlps * static_cast<double>(n) * kU; }

}  // namespace

ComposedLoss::ComposedLoss(double step, std::int64_t first, std::vector<double> values)
    : interval(step), first_index(first), mass(std::move(values)) {
  const std::size_t n = mass.size();
  tail_p_.assign(n + 1, 0.0);
  tail_q_.assign(n + 1, 0.0);
  const double decay = std::exp(-interval);
  for (std::size_t i = n; i-- > 0;) {
    tail_p_[i] = tail_p_[i + 1] + mass[i];
    tail_q_[i] = mass[i] + decay * tail_q_[i + 1];
  }
}

std::size_t ComposedLoss::first_above(double x) const {
  const double pos = x / interval - static_cast<double>(first_index);
  if (pos < 0) return 0;
  if (pos >= static_cast<double>(mass.size())) return mass.size();
  return std::min(mass.size(), static_cast<std::size_t>(std::floor(pos)) + 1);
}

double ComposedLoss::grid_delta(double epsilon) const {
  if (period_ > 0) return spectral_delta(epsilon);
  if (mass.empty()) return 0;
  // Terms with l_i > ε.
  const std::size_t i = first_above(epsilon);
  if (i >= mass.size()) return 0;
  const double l_i = static_cast<double>(first_index + static_cast<std::int64_t>(i)) * interval;
  return std::max(0.0, tail_p_[i] - std::exp(epsilon - l_i) * tail_q_[i]);
}

double ComposedLoss::grid_epsilon(double d, bool upper_side) const {
  if (!(d > 0)) return kInf;
  if (period_ > 0) {
    // Bisection on the continuous, nonincreasing profile.
    double hi = static_cast<double>(first_index + static_cast<std::int64_t>(period_)) * interval;
    double lo = std::min(static_cast<double>(first_index) * interval, 0.0) - 1;
    if (spectral_delta(lo) <= d) return upper_side ? lo : -kInf;
    for (int it = 0;
         it < kBisectionMaxSteps && hi - lo > kBisectionRelWidth * std::max(1.0, std::abs(hi));
         ++it) {
      const double mid = lo + (hi - lo) / 2;
      (spectral_delta(mid) <= d ? hi : lo) = mid;
    }
    return upper_side ? hi : lo;
  }
  const std::size_t n = mass.size();
  if (n == 0) return -kInf;
  // g(i) = δ at ε = l_i: terms j > i. Nonincreasing in i; g(n−1) = 0.
  const double decay = std::exp(-interval);
  auto g = [&](std::size_t i) { return tail_p_[i + 1] - decay * tail_q_[i + 1]; };
  std::size_t lo = 0, hi = n - 1;  // smallest i with g(i) ≤ d
  if (g(0) <= d) {
    hi = 0;
  } else {
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (g(mid) <= d)
        hi = mid;
      else
        lo = mid;
    }
  }
  // On (l_{hi−1}, l_hi]: δ(ε) = tail_p[hi] − e^{ε − l_hi} tail_q[hi] (terms j ≥ hi).
  const double l = static_cast<double>(first_index + static_cast<std::int64_t>(hi)) * interval;
  const double num = tail_p_[hi] - d;
  if (!(num > 0) || !(tail_q_[hi] > 0)) return hi == 0 ? -kInf : l;
  return std::min(l, l + std::log(num / tail_q_[hi]));
}

double ComposedLoss::deviation(double eta) const {
  // (3): t = T·β + s, s solving Bernstein's exp(−s²/(2(V + bs/3))) = η, b = stride·Δ
  // the widest bucket (docs/pld.md#coarse-tails).
  const double big_l = std::log(1 / eta);
  const double m = big_l * stride * interval / 3;
  return bias + m + std::sqrt(m * m + 2 * big_l * variance);
}

double ComposedLoss::mass_error() const { return summation_factor(mass.size()) + relative_error; }

double ComposedLoss::grid_tail(double x) const {
  if (period_ > 0) return std::max(0.0, spectral_delta(x, false));
  if (mass.empty()) return 0;
  return tail_p_[first_above(x)];  // tail_p_[size] = 0
}

// (3), second order (docs/pld.md#second-order-lower-bound). Given the true
// losses X (all releases), D = S_Y − S is a sum of independent terms with
// means in [0, β] and |D_i − m_i| ≤ Δ, Var ≤ Δ²/4: Var(D | X) ≤ V = TΔ²/4,
// |E[D | X]| ≤ β_T, and P(|D| > z | X) ≤ G(z) = min(1, 2·exp(−s²/(2(V + Δs/3)))),
// s = z − β_T (Bernstein). With f = (1 − e^{ε−s})₊ = h − c, h = (s − ε)₊ and c
// convex and nondecreasing:
//   E f(S_Y) ≤ E f(S) + β_T·P(S > ε) + E Ψ(|S − ε|),
//   Ψ(a) = min(∫_a^∞ G, √(V + β_T²), (V + β_T²)/(4a)) ≥ E[(|D| − a)₊ | X],
// and Chebyshev, P(|D| ≤ ρ + β_T | X) ≥ 1 − V/ρ², gives
// P(|S − ε| < a) ≤ P(|S_Y − ε| < a + ρ + β_T)/(1 − V/ρ²), a sum over the
// composed grid. Returns the total, rounded up.
double ComposedLoss::curvature_penalty(double epsilon) const {
  // With coarse tails (docs/pld.md#coarse-tails), on the event that at most K
  // releases fall in a coarse bucket: V = (T + K(s² − 1))Δ²/4, terms within
  // b = s·Δ, and the bias with K of them at β(sΔ); the event's complement,
  // coarse_excess, is added to the penalty.
  const double var = (static_cast<double>(releases) + coarse_releases * (stride * stride - 1)) *
                     interval * interval / 4;
  const double range = stride * interval;
  const double beta = bias;
  if (!(var > 0)) return bias > 0 ? kInf : 0.0;
  // G(s) for s = z − β_T ≥ 0, and where its exponent reaches kPsiExponentEnd.
  auto g_tail = [&](double s) {
    if (s <= 0) return 1.0;
    return std::min(1.0, 2 * std::exp(-s * s / (2 * (var + range * s / 3))));
  };
  const double b3 = 2 * kPsiExponentEnd * range / 3;
  const double s_end = (b3 + std::sqrt(b3 * b3 + 8 * kPsiExponentEnd * var)) / 2;
  const double root = std::sqrt(var);
  // Levels a_0 = 0 < a_1 < … < a_M = β_T + s_end, and Ψ(a_m) by upper Riemann
  // sums of the nonincreasing G from the end; past a_M: ∫_{s_end}^∞ 2e^{−κs} ds,
  // κ = 1/(2(V/s_end + Δ/3)) (the exponent s²/(2(V + Δs/3)) = s/(2(V/s + Δ/3))
  // is ≥ κs for s ≥ s_end).
  std::vector<double> level{0.0};
  const double fine = kPsiFineEnd * root / kPsiFineLevels;
  while (level.back() < beta + s_end) {
    const double a = level.back();
    level.push_back(std::min(beta + s_end, a < kPsiFineEnd * root ? a + fine : a * kPsiGrowth));
  }
  const std::size_t levels = level.size();
  std::vector<double> psi(levels + 1, 0.0);  // psi[levels] = 0: past the last level
  const double kappa = 1 / (2 * (var / s_end + range / 3));
  psi[levels - 1] = 2 * std::exp(-kappa * s_end) / kappa;
  for (std::size_t m = levels - 1; m-- > 0;) {
    const double h = (level[m + 1] - level[m]) / kPsiSubsteps;
    double piece = 0;
    for (int i = 0; i < kPsiSubsteps; ++i) piece += h * g_tail(level[m] + i * h - beta);
    psi[m] = psi[m + 1] + piece;
  }
  // The moment bounds: E[(|D| − a)₊] ≤ E|D| ≤ √E[D²] and ≤ E[D²]/(4a).
  const double second_moment = var + beta * beta;
  for (std::size_t m = 0; m < levels; ++m) {
    psi[m] = std::min(psi[m], std::sqrt(second_moment));
    if (level[m] > 0) psi[m] = std::min(psi[m], second_moment / (4 * level[m]));
  }
  const double sum_error = mass_error() + roundoff + 2 * (alias_above + alias_below);
  auto within = [&](double radius) {  // P(|S_Y − ε| < radius), rounded up
    return grid_tail(epsilon - radius) - grid_tail(epsilon + radius) + sum_error;
  };
  double best = kInf;
  for (double k : kAnticoncentration) {
    const double widen = beta + k * root, factor = 1 / (1 - 1 / (k * k));
    double total = beta * std::min(1.0, factor * (grid_tail(epsilon - widen) + sum_error));
    // Σ_m (Ψ(a_m) − Ψ(a_{m+1}))·P(|S − ε| < a_{m+1}), the last level's with
    // probability at most 1.
    for (std::size_t m = 0; m < levels; ++m)
      total += (psi[m] - psi[m + 1]) *
               (m + 1 < levels ? std::min(1.0, factor * within(level[m + 1] + widen)) : 1.0);
    best = std::min(best, total);
  }
  return best * (1 + kPenaltyRoundUp) + coarse_excess;
}

double ComposedLoss::delta_upper(double epsilon) const {
  if (releases == 0) return 0;
  const double d = grid_delta(epsilon) * (1 + mass_error());
  return std::min(1.0, d + infinite_mass + alias_above + roundoff);
}

double ComposedLoss::delta_lower(double epsilon, bool second_order) const {
  if (releases == 0) return 0;
  const double base = grid_delta(epsilon);
  double best = 0;
  for (double f : kEtaFractions) {
    const double eta = f * std::max(base, detail::kTinyProbability);
    const double d = certain_infinite_mass +
                     grid_delta(epsilon + deviation(eta)) * (1 - mass_error()) - eta - alias_below -
                     roundoff - coarse_excess;
    best = std::max(best, d);
  }
  if (!second_order) return std::min(best, 1.0);
  // (3), second order: δ_true(ε) ≥ δ_Y(ε) − penalty.
  const double d2 = certain_infinite_mass + base * (1 - mass_error()) - alias_below - roundoff -
                    curvature_penalty(epsilon);
  return std::min(std::max(best, d2), 1.0);
}

double ComposedLoss::epsilon_upper(double delta) const {
  if (releases == 0) return 0;
  const double d = delta / (1 + mass_error()) - infinite_mass - alias_above - roundoff;
  return std::max(0.0, grid_epsilon(d, true));
}

double ComposedLoss::epsilon_lower(double delta) const {
  if (releases == 0) return 0;
  double best = 0;
  for (double f : kEtaFractions) {
    const double eta = f * delta;
    // δ_true(ε) ≥ P(X = ∞) + (the finite part's lower bound): subtract it.
    const double d =
        (delta - certain_infinite_mass + eta + alias_below + roundoff + coarse_excess) /
        (1 - mass_error());
    best = std::max(best, grid_epsilon(d, false) - deviation(eta));
  }
  // (3), second order: the largest ε found whose lower δ (δ_Y − penalty)
  // exceeds δ; then δ_true(ε) > δ, so ε_true(δ) ≥ ε.
  const double sf = mass_error();
  const double base = (delta - certain_infinite_mass + alias_below + roundoff) / (1 - sf);
  double extra = 0;
  for (int step = 0; step < kCurvatureSearchSteps; ++step) {
    const double eps = grid_epsilon(base + extra / (1 - sf), false);
    if (!std::isfinite(eps) || eps <= best) break;
    const double penalty = curvature_penalty(eps);
    if (!std::isfinite(penalty)) break;
    const double lower =
        certain_infinite_mass + grid_delta(eps) * (1 - sf) - alias_below - roundoff - penalty;
    if (lower > delta) return eps;
    extra = std::max(kCurvatureSearchGrowth * extra, kCurvatureSearchMargin * penalty);
  }
  return best;
}

namespace detail {

std::vector<double> tpr_upper(std::span<const ComposedLoss> directions,
                              std::span<const double> fprs) {
  std::vector<double> out(fprs.size(), 1.0);
  if (directions.empty()) return out;
  double hi = 0, interval = directions.front().interval;
  for (const ComposedLoss& c : directions) hi = std::max(hi, highest_loss(c));
  for (double eps : epsilon_grid(0, hi, interval)) {
    double d = 0;
    for (const ComposedLoss& c : directions) d = std::max(d, c.delta_upper(eps));
    for (std::size_t i = 0; i < fprs.size(); ++i)
      out[i] = std::min(out[i], tpr_bound_epsilon_delta(eps, d, fprs[i]));
  }
  return out;
}

std::vector<double> tpr_lower(const ComposedLoss& c, std::span<const double> fprs) {
  const std::vector<double> eps = epsilon_grid(lowest_loss(c), highest_loss(c), c.interval);
  std::vector<double> d(eps.size());
  // The first-order bound at every point (thousands of points; each
  // second-order bound costs thousands of reads of the grid), the
  // second-order one only around the minimum found (every d[j] is a lower
  // bound either way).
  for (std::size_t j = 0; j < eps.size(); ++j) d[j] = c.delta_lower(eps[j], false);
  std::vector<bool> second(eps.size(), false);
  std::vector<double> out(fprs.size());
  for (std::size_t i = 0; i < fprs.size(); ++i) {
    const double x = fprs[i];
    // ε ≤ ε_0: δ(ε) + e^ε x ≥ δ(ε_0); ε ≥ ε_last: ≥ e^{ε_last} x; between
    // ε_j and ε_{j+1}: ≥ δ(ε_{j+1}) + e^{ε_j} x (δ nonincreasing, e^ε x increasing).
    double best = 0;
    for (int round = 0; round < kTradeoffSecondOrderRounds; ++round) {
      best = std::min(d.front(), std::exp(eps.back()) * x);
      std::size_t at = 0;
      for (std::size_t j = 0; j + 1 < eps.size(); ++j) {
        const double v = d[j + 1] + std::exp(eps[j]) * x;
        if (v < best) {
          best = v;
          at = j + 1;
        }
      }
      if (round + 1 == kTradeoffSecondOrderRounds) break;  // no round left to use more
      bool changed = false;
      const std::size_t window =
          c.is_spectral() ? kTradeoffSecondOrderWindowSpectral : kTradeoffSecondOrderWindow;
      const std::size_t from = at > window ? at - window : 0;
      const std::size_t to = std::min(eps.size(), at + window + 1);
      for (std::size_t k = from; k < to; ++k) {
        if (second[k]) continue;
        second[k] = true;
        d[k] = std::max(d[k], c.delta_lower(eps[k], true));
        changed = true;
      }
      if (!changed) break;
    }
    // The test that ignores the output and rejects with probability x has TPR x.
    out[i] = std::clamp(best, x, 1.0);
  }
  return out;
}

}  // namespace detail

}  // namespace dpb::pld
