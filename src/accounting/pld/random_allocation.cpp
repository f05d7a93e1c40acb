#include "accounting/pld/random_allocation.hpp"

// Method (the pair and the domination argument are in the header).
//
// (a) Grid. Each X is rounded to the nearest point of x_i = i·h: X̃ = X + D
//     with |D| ≤ h/2. The D_i of the t summands are independent, with means
//     β (computed exactly from the bucket masses and the log-normal's partial
//     first moment), so by Hoeffding's inequality (Hoeffding 1963, Thm 2)
//     |S̃ − S| ≤ dev = |Σβ| + h·√(t·log(1/η)/2) except with probability
//     2η; and surely |S̃ − S| ≤ t·h/2 (the smaller for small t; the
//     η below is then spent for nothing, harmlessly). On that event S lies in [S̃ − dev, S̃ + dev]:
//     the upper lists take the end that gives the larger loss (remove: S̃ + dev; add: S̃ − dev), the
//     lower lists the other. The bad event's mass η is, like (c) and (d), taken from the wrong end
//     of each list (see below). One law per X serves both lists, and the error is ~h/√t in the loss
//     instead of h.
// (b) Truncation. Each X is cut at C with P(X⁺ > C) ≤ kTailMass/t (X⁺ has
//     the heavier tail), so the event "some X > C" has P-mass ≤ kTailMass
//     (union bound). The laws are restricted to X ≤ C (defective); their
//     convolution is the law of S̃ restricted to that event, exactly.
//     Upper lists put the cut mass at +∞; lower lists drop it.
// (c) Convolution: one forward real FFT per law on M points, the pointwise
//     power (log-polar), one inverse FFT per direction. The transform is
//     circular: mass of S̃ at or above M·h wraps to the low end. A Chernoff
//     bound on the discrete laws, P(S̃ ≥ M·h) ≤ e^{−λMh}·Π E[e^{λX̃}] (any
//     λ > 0; the best of a log-spaced set), bounds that mass (ω_alias).
//     Wrapped mass lands at a smaller S: a smaller loss in the remove
//     direction, a larger one in the add direction.
// (d) Round-off, as stage (5) of internal.hpp (Higham 2002, §24.1): a
//     forward coefficient is within ρ = γ_M·‖x‖₁ of the exact one (γ_M =
//     8⌈log₂M⌉u); Â^n·B̂ is then within n·ρ·r_a^{n−1}·r_b + ρ_b·r_a^n of A^n·B
//     (r = |Â| + ρ, telescoping), the log-polar power adds a relative
//     8u(760 + πn); by Parseval the inverse's L1 error is at most ‖ΔZ‖₂ plus
//     γ_M·√M·‖y‖₂. That total R, times a safety factor, bounds how far the
//     computed law is from the exact discrete one. Negative outputs are
//     clamped to 0 (towards the non-negative truth).
// (e) Atoms. Each S̃ = j·h gives the loss of the chosen end of its interval,
//     log(S/t) (remove) or log(t/S) (add), rounded up (upper lists) or down
//     (lower lists) to a loss grid of a quarter of the resolution and merged; an end
//     S ≤ 0 is loss −∞ (dropped) or +∞. Mass that may be misplaced (the
//     bad event of (a), ω_alias where it lands on the wrong side, R) is moved
//     from the lowest losses to +∞ in an upper list, and dropped from the
//     highest losses in a lower list: if a computed law ν is within m of the
//     truth in this sense (ν(≤x) ≤ true(≤x) + m), then ν with m moved so is
//     dominated (max(0, ν(≤x) − m) ≤ true(≤x)), and likewise above x. A lower
//     list whose Q-mass Σ p·e^{−l} exceeds 1 (its losses were lowered) drops
//     P-mass from its lowest losses until it does not (dropping mass only
//     lowers δ).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <future>
#include <limits>
#include <numbers>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/fft.hpp"
#include "accounting/numerics/normal.hpp"

namespace dpb {
namespace {

/// P-mass per epoch given up to each of (b) truncation and (c) wrap-around:
/// with E epochs the bounds move δ by at most ~2E·1e-12, far below any δ
/// asked for in practice (1e-5 … 1e-10) and below the grid's own error.
constexpr double kTailMass = 1e-12;
/// Largest transform (2^22 points: 32 MiB per real array, ~50 ms a transform
/// here); past it the grid step grows instead.
constexpr std::size_t kMaxPoints = std::size_t{1} << 22;
/// Largest loss error per epoch given, min(h·√(log(1/η)/(2t)), h/2) (a): a
/// coarser grid would print a bound far from the truth. Past it (σ small: the
/// likelihood ratio's tail needs a window of e^{O(1/σ²)}) the call refuses.
constexpr double kMaxLossError = 0.02;
/// Atoms are merged on a loss grid of loss_resolution / kLossGridPerStep: fine enough to add
/// a quarter of the grid's own error, coarse enough to keep ~1e5 atoms.
constexpr double kLossGridPerStep = 4;
/// Chernoff parameters λ·h tried, log-spaced over [1e-8, 1] (ten per decade).
constexpr int kLambdaTrials = 81;
/// Round-off constants of internal.hpp stage (5): ulps per FFT stage and
/// of the log-polar power.
constexpr double kFftStageUlps = 8;
constexpr double kPowerUlps = 8;
constexpr double kPowerLogRange = 760;
/// Factor on the round-off bound R: the bound is itself a floating-point sum.
constexpr double kRoundoffSafety = 2;
/// Absolute error allowed per summand in the computed mean shift β of (a):
/// β is a difference of two sums of ~n terms near E[X] ≈ 1, each within a
/// few hundred ulps.
constexpr double kMeanShiftGuard = 1e-12;
/// Windows tried before giving up (each 1.5 times the last).
constexpr int kWindowTries = 8;

/// P(X > c) for log X ~ N(m, s²).
double mass_above(double m, double s, double c) { return detail::norm_cdf(-(std::log(c) - m) / s); }

/// The law of X̃ = h·round(X/h), log X ~ N(m, s²), restricted to X ≤
/// (n + ½)·h, on the points i·h, i = 0 … n, and the mean of X̃ − X under it.
struct GridLaw {
  std::vector<double> mass;
  double mean_shift = 0;  ///< β = E[X̃ − X | X ≤ C], (a)
};

/// Bucket masses are differences of normal CDFs taken on the side where both
/// are small (the upper tail above the median), so the far tail keeps its
/// relative accuracy; each from the C library's erfc (within a few ulps;
/// Boost's would promote to long double, ten times slower over millions of
/// buckets).
GridLaw nearest_grid_law(double m, double s, double h, std::size_t n) {
  constexpr double kInvSqrt2 = 0.70710678118654752440;
  GridLaw law;
  law.mass.assign(n + 1, 0.0);
  // Φ(z) at the left edge while z ≤ 0, then 1 − Φ(z): one erfc per edge.
  double lower_prev = 0, upper_prev = 1;
  double total = 0, grid_mean = 0;
  for (std::size_t i = 0; i <= n; ++i) {
    const double z = (std::log((static_cast<double>(i) + 0.5) * h) - m) / s;
    double w = 0;
    if (z > 0) {
      const double upper = 0.5 * std::erfc(z * kInvSqrt2);
      w = std::max(0.0, upper_prev - upper);
      upper_prev = upper;
    } else {
      const double lower = 0.5 * std::erfc(-z * kInvSqrt2);
      w = std::max(0.0, lower - lower_prev);
      lower_prev = lower;
      upper_prev = 1 - lower;
    }
    law.mass[i] = w;
    total += w;
    grid_mean += w * static_cast<double>(i) * h;
  }
  // E[X; X ≤ c] = e^{m + s²/2}·Φ((log c − m − s²)/s) (the log-normal's partial
  // first moment).
  const double c = (static_cast<double>(n) + 0.5) * h;
  const double first_moment =
      std::exp(m + s * s / 2) * detail::norm_cdf((std::log(c) - m - s * s) / s);
  law.mean_shift = (grid_mean - first_moment) / total;
  return law;
}

/// A law summed in blocks of kMgfBlock points, each block's mass at its last
/// point: Σ_i p_i e^{λih} ≤ Σ_blocks mass·e^{λ·h·last}, a cheap upper bound
/// on the moment generating function used to find a good λ.
struct Blocks {
  std::vector<double> log_mass;  ///< −inf for an empty block
  std::vector<double> last;      ///< index of the block's last point
};
/// Points per block: 64 keeps ~6e4 blocks for 4e6 points.
constexpr std::size_t kMgfBlock = 64;
/// Terms per chunk of the exact sum, and the relative error of a chunk's
/// multiplied-along factors (256 roundings of ≤ 1 ulp, with room).
constexpr std::size_t kMgfChunk = 256;
constexpr double kMgfRounding = 1e-12;
/// Largest exponent whose exp stays finite with room (e^709 is the last).
constexpr double kMaxExponent = 700;

Blocks blocks_of(const std::vector<double>& p) {
  Blocks b;
  for (std::size_t i = 0; i < p.size(); i += kMgfBlock) {
    double m = 0;
    const std::size_t end = std::min(p.size(), i + kMgfBlock);
    for (std::size_t j = i; j < end; ++j) m += p[j];
    b.log_mass.push_back(m > 0 ? std::log(m) : -kInf);
    b.last.push_back(static_cast<double>(end - 1));
  }
  return b;
}

/// log Σ_k w_k e^{λh·x_k} by log-sum-exp over (log w_k, x_k).
double log_sum_exp(const std::vector<double>& log_w, const std::vector<double>& x, double lh) {
  double top = -kInf;
  for (std::size_t k = 0; k < log_w.size(); ++k) top = std::max(top, log_w[k] + lh * x[k]);
  if (top == -kInf) return -kInf;
  double sum = 0;
  for (std::size_t k = 0; k < log_w.size(); ++k)
    if (log_w[k] > -kInf) sum += std::exp(log_w[k] + lh * x[k] - top);
  return top + std::log(sum);
}

/// log Σ_i p_i e^{λih}, exactly (log-sum-exp from the largest term).
double log_mgf_exact(const std::vector<double>& p, double lh) {
  double top = -kInf;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0) top = std::max(top, std::log(p[i]) + lh * static_cast<double>(i));
  if (top == -kInf) return -kInf;
  // Σ p_i e^{λih − top} (every term ≤ 1), in chunks whose factor e^{λih − top}
  // is restarted exactly and multiplied along (≤ kMgfChunk roundings, covered
  // by kMgfRounding); where the factor could overflow (a tiny p_i far out),
  // term by term in log space.
  double sum = 0;
  const double step = std::exp(lh);
  for (std::size_t c = 0; c < p.size(); c += kMgfChunk) {
    const std::size_t end = std::min(p.size(), c + kMgfChunk);
    const double base = lh * static_cast<double>(c) - top;
    if (base + lh * kMgfChunk < kMaxExponent) {
      double factor = std::exp(base);
      for (std::size_t i = c; i < end; ++i, factor *= step) sum += p[i] * factor;
    } else {
      for (std::size_t i = c; i < end; ++i)
        if (p[i] > 0) sum += std::exp(std::log(p[i]) + lh * static_cast<double>(i) - top);
    }
  }
  return top + std::log(sum * (1 + kMgfRounding));
}

/// Chernoff bound (c) on the mass of S̃ ≥ M·h, S̃ the sum of `count` draws of
/// `a` and, if `b`, one of b: λ is chosen on the block bound over a
/// log-spaced set (any λ > 0 gives a valid bound), then the bound is
/// evaluated exactly at it.
double wrapped_mass(const std::vector<double>& a, std::int64_t count, const std::vector<double>* b,
                    std::size_t points) {
  const Blocks ba = blocks_of(a);
  const Blocks bb = b ? blocks_of(*b) : Blocks{};
  const double n = static_cast<double>(count), m = static_cast<double>(points);
  double best = 0, best_lh = 0;
  for (int k = 0; k < kLambdaTrials; ++k) {
    const double lh = std::pow(10.0, -8.0 + 8.0 * k / (kLambdaTrials - 1));
    const double v = -lh * m + n * log_sum_exp(ba.log_mass, ba.last, lh) +
                     (b ? log_sum_exp(bb.log_mass, bb.last, lh) : 0.0);
    if (v < best) best = v, best_lh = lh;
  }
  if (best_lh == 0) return 1;
  const double exact =
      -best_lh * m + n * log_mgf_exact(a, best_lh) + (b ? log_mgf_exact(*b, best_lh) : 0.0);
  return std::min(1.0, std::exp(exact));
}

double norm1(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += std::abs(v);
  return s;
}

/// The spectrum of a law on M points and its coefficient error bound ρ.
struct Spectrum {
  std::vector<std::complex<double>> coef;
  double rho = 0;
};

Spectrum spectrum_of(const std::vector<double>& p, std::size_t points, double gamma) {
  return {fft::forward(p, points), gamma * norm1(p)};
}

/// A^n, coefficient by coefficient (log-polar), for the spectrum of a law.
std::vector<std::complex<double>> power_of(const Spectrum& a, std::int64_t count) {
  const double n = static_cast<double>(count);
  std::vector<std::complex<double>> z(a.coef.size());
  for (std::size_t k = 0; k < z.size(); ++k) {
    const double r = std::abs(a.coef[k]);
    if (r > 0) z[k] = std::polar(std::exp(n * std::log(r)), n * std::arg(a.coef[k]));
  }
  return z;
}

/// The law of `count` draws of `a` plus one of `b`, circularly on M points,
/// clamped at 0, and R, the bound (d) on its L1 error; `power` is A^count.
std::pair<std::vector<double>, double> convolve(const Spectrum& a, std::int64_t count,
                                                const std::vector<std::complex<double>>& power,
                                                const Spectrum& b, std::size_t points,
                                                double gamma) {
  const double n = static_cast<double>(count);
  const double power_rel = kPowerUlps * kU * (kPowerLogRange + std::numbers::pi * n);
  std::vector<std::complex<double>> z(a.coef.size());
  double err2 = 0;  // Σ over the full spectrum of the coefficient error bounds, squared
  for (std::size_t k = 0; k < z.size(); ++k) {
    z[k] = power[k] * b.coef[k];
    const double ra = std::abs(a.coef[k]) + a.rho, rb = std::abs(b.coef[k]) + b.rho;
    const double ra_n1 = std::exp((n - 1) * std::log(ra));
    const double e = n * a.rho * ra_n1 * rb + b.rho * ra_n1 * ra + power_rel * ra_n1 * ra * rb;
    // Coefficients 1 … ⌈M/2⌉−1 stand for their conjugate mirror too.
    const bool mirrored = k > 0 && 2 * k != points;
    err2 += (mirrored ? 2 : 1) * e * e;
  }
  std::vector<double> y = fft::inverse(std::move(z), points);
  double y2 = 0;
  for (double& v : y) {
    y2 += v * v;
    v = std::max(v, 0.0);
  }
  const double dz = std::sqrt(err2);
  const double roundoff = kRoundoffSafety * (dz + gamma * std::sqrt(static_cast<double>(points)) *
                                                      (std::sqrt(y2) + dz + gamma));
  return {std::move(y), roundoff};
}

/// Removes `amount` of mass from the atoms, from the front (`from_front`) or
/// the back; returns what could not be removed (all atoms emptied).
double remove_mass(std::vector<pld::Atom>& atoms, double amount, bool from_front) {
  auto take = [&](pld::Atom& a) {
    const double t = std::min(a.mass, amount);
    a.mass -= t;
    amount -= t;
  };
  if (from_front)
    for (auto it = atoms.begin(); it != atoms.end() && amount > 0; ++it) take(*it);
  else
    for (auto it = atoms.rbegin(); it != atoms.rend() && amount > 0; ++it) take(*it);
  return amount;
}

/// The atoms (ascending loss) of one direction and list from the law y of
/// S̃ on j·h, each at the end S̃ + shift of its interval (a): loss log(S/t)
/// (`remove`) or log(t/S), rounded up (`upper`) or down to the loss grid.
/// An end S ≤ 0 is loss −∞ in the remove direction (dropped) and +∞ in the
/// add direction (added to `infinite` for an upper list, else dropped).
std::vector<pld::Atom> atoms_of(const std::vector<double>& y, double h, double t, double shift,
                                double g, bool remove, bool upper, double& infinite) {
  std::vector<pld::Atom> atoms;
  // Ascending loss: j ascending for remove, descending for add.
  const std::size_t n = y.size();
  for (std::size_t step = 0; step < n; ++step) {
    const std::size_t j = remove ? step : n - 1 - step;
    const double mass = y[j];
    if (!(mass > 0)) continue;
    const double s = static_cast<double>(j) * h + shift;
    if (!(s > 0)) {
      if (!remove && upper) infinite += mass;
      continue;
    }
    const double loss = remove ? std::log(s / t) : std::log(t / s);
    const double l = (upper ? std::ceil(loss / g) : std::floor(loss / g)) * g;
    if (!atoms.empty() && atoms.back().loss == l)
      atoms.back().mass += mass;
    else
      atoms.push_back({l, mass});
  }
  return atoms;
}

/// Drops P-mass from the lowest losses until Σ p·e^{−l} ≤ 1 (a lower list).
void keep_q_mass_below_one(std::vector<pld::Atom>& atoms) {
  double q = 0;
  for (const auto& a : atoms) q += a.mass * std::exp(-a.loss);
  for (auto& a : atoms) {
    if (q <= 1 - 1e-12) break;
    const double per = std::exp(-a.loss);
    const double drop = std::min(a.mass, (q - (1 - 1e-12)) / per);
    a.mass -= drop;
    q -= drop * per;
  }
}

void prune(std::vector<pld::Atom>& atoms) {
  std::erase_if(atoms, [](const pld::Atom& a) { return !(a.mass > 0); });
}

}  // namespace

RandomAllocationPlds random_allocation_plds(std::int64_t steps, double sigma,
                                            double loss_resolution) {
  if (steps < 1) throw InvalidParameter("num_steps", "must be an integer >= 1");
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw InvalidParameter("noise_multiplier", "must be a finite number > 0");
  if (!(loss_resolution > 0)) throw InvalidParameter("loss_resolution", "must be > 0");
  if (steps == 1) {
    // One step: the record is in it surely; the Gaussian mechanism itself.
    const pld::Mechanism g(pld::Mechanism::Kind::gaussian, sigma);
    return {g, g};
  }
  const double t = static_cast<double>(steps);
  const double s = 1 / sigma, m_minus = -0.5 / (sigma * sigma), m_plus = 0.5 / (sigma * sigma);
  // (b): C with P(X⁺ > C) ≤ kTailMass/t; X⁻ = X⁺·e^{−1/σ²} has the lighter tail.
  const double z = -detail::norm_quantile(kTailMass / t);
  const double cut = std::exp(m_plus + s * z);
  // The window: the mean t − 1 + e^{1/σ²}, a single large X up to C, and
  // twenty standard deviations of the sum; widened while the wrapped mass is
  // over kTailMass.
  const double var = std::expm1(1 / (sigma * sigma));
  double window = t + std::exp(1 / (sigma * sigma)) + cut + 20 * std::sqrt(t * var);
  for (int attempt = 0; attempt < kWindowTries; ++attempt, window *= 1.5) {
    // (a): the spread h·√(t·log(1/η)/2) of S̃ − S is t·loss_resolution, a
    // loss error of about loss_resolution (S ≈ t).
    const double h =
        std::max(loss_resolution * std::sqrt(t) / std::sqrt(std::log(1 / kTailMass) / 2),
                 window / static_cast<double>(kMaxPoints - 1));
    const double g = loss_resolution / kLossGridPerStep;
    if (std::min(h * std::sqrt(std::log(1 / kTailMass) / (2 * t)), h / 2) > kMaxLossError)
      throw InvalidParameter(
          "pld",
          "balls-in-bins with noise multiplier " + shown_number(sigma) +
              " needs a grid finer than this accountant holds (the likelihood ratio's tail is "
              "too heavy): use a larger noise multiplier, or rdp/gdp/composition (no "
              "amplification)");
    const auto n = static_cast<std::size_t>(std::ceil(cut / h));
    const std::size_t points = fft::good_size(static_cast<std::size_t>(std::ceil(window / h)) + 1);
    if (points <= n + 1) continue;
    const double c = (static_cast<double>(n) + 0.5) * h;
    // The two laws, spectra and directions are independent: each pair is
    // computed on two threads (this machine has two cores).
    auto b_law = std::async(std::launch::async, nearest_grid_law, m_plus, s, h, n);
    const GridLaw a = nearest_grid_law(m_minus, s, h, n);
    const GridLaw b = b_law.get();
    const double alias_remove = wrapped_mass(a.mass, steps - 1, &b.mass, points);
    const double alias_add = wrapped_mass(a.mass, steps, nullptr, points);
    if (alias_remove > kTailMass || alias_add > kTailMass) continue;
    const double cut_remove = (t - 1) * mass_above(m_minus, s, c) + mass_above(m_plus, s, c);
    const double cut_add = t * mass_above(m_minus, s, c);
    // (a): |S̃ − S| ≤ dev except with probability 2η, η = kTailMass; the
    // means are computed to a few ulps of E[X] ≈ 1 per summand, covered by
    // kMeanShiftGuard.
    // Surely |S̃ − S| ≤ t·h/2 (each |D_i| ≤ h/2), the smaller for small t.
    const double spread = h * std::sqrt(t * std::log(1 / kTailMass) / 2);
    const double surely = t * h / 2;
    const double dev_remove = std::min(
        surely, std::abs((t - 1) * a.mean_shift + b.mean_shift) + t * kMeanShiftGuard + spread);
    const double dev_add =
        std::min(surely, std::abs(t * a.mean_shift) + t * kMeanShiftGuard + spread);

    const double gamma = kFftStageUlps * std::ceil(std::log2(static_cast<double>(points))) * kU;
    auto sb_future =
        std::async(std::launch::async, [&] { return spectrum_of(b.mass, points, gamma); });
    const Spectrum sa = spectrum_of(a.mass, points, gamma);
    const Spectrum sb = sb_future.get();
    // t − 1 draws of X⁻ are common to both directions: the remove direction
    // adds one X⁺, the add direction one more X⁻.
    const auto pow_a = power_of(sa, steps - 1);
    auto add_future = std::async(std::launch::async,
                                 [&] { return convolve(sa, steps - 1, pow_a, sa, points, gamma); });
    // Plain variables, not structured bindings: the lambdas below capture
    // them (clang 14 cannot capture a structured binding).
    const auto removed = convolve(sa, steps - 1, pow_a, sb, points, gamma);
    const auto added = add_future.get();
    const std::vector<double>& y_remove = removed.first;
    const std::vector<double>& y_add = added.first;
    const double r_remove = removed.second, r_add = added.second;

    RandomAllocationPlds out;
    out.upper.kind = out.lower.kind = pld::Mechanism::Kind::atoms;
    // Upper lists: misplaced mass from the lowest losses to +∞. Remove: the
    // wrapped mass sits at low losses (misplaced); add: it sits at high losses.
    auto upper = [&](const std::vector<double>& y, double shift, bool remove, double misplaced,
                     double cut_mass) {
      double inf = 0;
      auto atoms = atoms_of(y, h, t, shift, g, remove, true, inf);
      inf += misplaced - remove_mass(atoms, misplaced, true) + cut_mass;
      prune(atoms);
      if (inf > 0) atoms.push_back({kInf, std::min(inf, 1.0)});
      return atoms;
    };
    // Lower lists: misplaced mass dropped from the highest losses.
    auto lower = [&](const std::vector<double>& y, double shift, bool remove, double misplaced) {
      double unused = 0;
      auto atoms = atoms_of(y, h, t, shift, g, remove, false, unused);
      remove_mass(atoms, misplaced, false);
      keep_q_mass_below_one(atoms);
      prune(atoms);
      return atoms;
    };
    auto add_lists = std::async(std::launch::async, [&] {
      return std::pair{upper(y_add, -dev_add, false, kTailMass + r_add, cut_add),
                       lower(y_add, dev_add, false, kTailMass + alias_add + r_add)};
    });
    out.upper.atoms =
        upper(y_remove, dev_remove, true, kTailMass + alias_remove + r_remove, cut_remove);
    out.lower.atoms = lower(y_remove, -dev_remove, true, kTailMass + r_remove);
    std::tie(out.upper.add_atoms, out.lower.add_atoms) = add_lists.get();
    return out;
  }
  throw InvalidParameter("pld", "balls-in-bins over " + std::to_string(steps) +
                                    " steps needs a wider window than this accountant holds");
}

}  // namespace dpb
