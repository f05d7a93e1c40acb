// Stages (4) and (5) of the PLD method (internal.hpp): composition by FFT
// (one forward transform per distinct release, Π_c X_c^{T_c} pointwise in
// log-polar form, one inverse transform) and the round-off bound of the result
// (Higham 2002, §24.1 and Thm 24.2). The window comes from
// tail_window.cpp; with few coefficients left the result stays in the
// spectral form of spectrum.cpp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <numbers>

#include "accounting/errors.hpp"
#include "accounting/numerics/fft.hpp"
#include "accounting/pld/internal.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::pld {
namespace detail {
namespace {

/// (5): relative error added by one butterfly stage, in units of u.
constexpr double kFftStageUlps = 8;
/// (4): coefficients whose bound (r + ρ)^T is below e^{kNegligible} are set to 0.
constexpr double kNegligible = -50;
/// (4): the quick test for negligible coefficients drops one only when its
/// bound is below e^{kNegligible} by this relative margin, far more than the
/// round-off of |v|², exp and log.
constexpr double kDropMargin = 1e-9;
/// Below e^{−740} a modulus is (nearly) subnormal: such Z_k are left at 0
/// (their error is already inside the perturbation bound).
constexpr double kLogUnderflow = -740;
/// (5): the log-polar power adds a relative error ≤ kPowerUlps·u·((2 + C)·L_k
/// + Σ_c T_c·|θ_c|(1 + |θ_c|) + 2π·C + kPowerFinalUlps), C releases, L_k =
/// Σ_c T_c·|log|X_ck||, θ_c = arg X_ck (docs/pld.md#round-off): each log|X| is
/// within 9u of |log|X|| plus 6u·θ², each phase T·θ within 3.4u of itself,
/// each of the C sums within u of the partial sum, and exp and polar add a
/// few u.
constexpr double kPowerUlps = 8;
constexpr double kPowerFinalUlps = 8;
/// (4): the direct sums of the candidates are chosen over full transforms
/// unless they cost more than this many times N·log₂N (a speed choice: one
/// multiply-add of the sums takes ~0.7 ns, one unit of N·log₂N of FFTW's
/// transform ~1.6 ns, measured for issue 45).
constexpr double kTransformCostRatio = 2;
/// (5): survivors of full transforms are computed again by direct sums when
/// their round-off bound exceeds the caller's target and the sums cost at most
/// this many multiply-adds (a fraction of a second).
constexpr std::size_t kRecomputeBudget = 100'000'000;
/// ... and only where the transforms' error T·γ_N, relative, is at least this
/// (a few thousand compositions): below it their round-off is negligible.
constexpr double kRecomputeFrom = 1e-10;
/// (5): the total mass m̂ of a release (compensated sum) is within this many u
/// of the exact sum of its masses, and v/m̂ within kQuotientUlps·u of |v/m̂|.
constexpr double kScaleUlps = 4;
constexpr double kQuotientUlps = 5;
/// (5): log|v| from log1p(|v|² − 1), |v|² − 1 = (a − 1)(a + 1) + b², when |v|² is at
/// least this (then its error is a few u of |log|v|| + arg², not u absolute).
constexpr double kLog1pFrom = 0.5;
/// (5): the error of the last step (the final sums), in units of u.
constexpr double kFinalSumUlps = 4;
/// The composed mass at +∞ is rounded down by this many u per release.
constexpr double kCertainMassUlps = 4;
/// Keep the spectral form (no inverse transform, no array of the window) when
/// at most 1/kSpectralFraction of the coefficients survive and at most
/// kSpectralMaxCoefficients: a speed choice. Every read of the spectral form
/// costs a sine and a division per coefficient (~15 ns), and an ε query's
/// lower bounds read it ~4,000 times (the second-order search), ~60 µs per
/// coefficient; the array costs an inverse transform and its tail sums, ~25 ns
/// per point. The spectral form pays from ~2,000 points per coefficient (at
/// 1/32, issue 45 measured reads taking 60% of a run at q = 1e-4, T = 1e3).
constexpr std::size_t kSpectralFraction = 2048;
constexpr std::size_t kSpectralMaxCoefficients = 512;

}  // namespace

/// γ for the FFT of size n (see (5)).
double fft_gamma(std::size_t n) {
  return kFftStageUlps * std::ceil(std::log2(static_cast<double>(std::max<std::size_t>(n, 2)))) *
         kU;
}

namespace {

/// The size of the transforms for the window [k_a, k_b]: FFTW's fast size,
/// or with `shared` (a series of queries) the next power of two.
std::size_t transform_size(std::int64_t k_a, std::int64_t k_b, std::size_t max_grid, bool shared) {
  const auto span = static_cast<std::size_t>(k_b - k_a + 1);
  std::size_t n = fft::good_size(span);
  if (shared) {
    // Any period ≥ the window is sound (a longer one folds less). Powers of
    // two give a series a handful of periods in all, each with its
    // remembered transforms. Only within the grid limit: past it a query made
    // alone keeps the fast size, and so does a series (a longer period could
    // leave too many coefficients for direct sums and no full transform).
    const std::size_t wide = std::bit_ceil(span);
    if (wide <= max_grid && wide <= kMaxSpectralWindow) n = wide;
  }
  return n;
}

/// A coefficient Z_k = Π_c X_ck^{T_c} not (yet) dropped, in log-polar form,
/// with the log of its bound Π_c (r_ck + ρ_c)^{T_c} and Σ_c T_c ρ_c/(r_ck + ρ_c).
struct Survivor {
  std::size_t k, idx;  // frequency, position in the candidate list
  double log_r, theta, log_r_pert, pert_sum;
  double phase_weight;  // Σ_c T_c·|θ_c|(1 + |θ_c|), for the power's round-off
  double log_weight;    // Σ_c T_c·|log|X_ck||, likewise
};

/// log|v|, at most 0 (the true modulus is at most 1), given x = |v|² − 1
/// computed without cancellation: log1p(x)/2 where |v|² ≥ kLog1pFrom (near
/// |v| = 1), else log|v|; the error bound of kPowerUlps assumes this split.
double log_modulus(std::complex<double> v, double x) {
  if (x >= 0) return 0.0;
  if (x + 1 >= kLog1pFrom) return 0.5 * std::log1p(x);
  const double r = std::abs(v);
  return r > 0 ? std::min(std::log(r), 0.0) : -kInf;
}

// (5) Componentwise: |X̂_ck − X_ck| ≤ ρ_c = γ_N·‖x_c‖₁ (each of the log₂N
// butterfly stages adds a relative error ≤ 8u to partial sums whose moduli
// add up to at most ‖x‖₁). The perturbation of Z_k = Π_c X_ck^{T_c} is then
// ≤ Σ_c T_c ρ_c (r_ck + ρ_c)^{T_c − 1} Π_{c'≠c} (r_c'k + ρ_c')^{T_c'} (r =
// computed modulus, clamped to the unit disc, which holds the true value).
// Coefficients whose bound (r + ρ)^T is below e^{−50} are set to 0; each
// such error is < e^{−50}, at most √N·e^{−50} in ‖·‖₂ all together.
//
/// (4) The coefficients of Π_c X_c^{T_c} of size `n` that survive every
/// release, with the round-off terms of (5); Σ_c T_c ρ_c is added to `rho_total`.
/// With few candidates each release's coefficients come from direct sums
/// about its centre (Release::dft_at) as X_k = m(1 + v_k), m its total mass:
/// the composed array's position 0 is then the loss index Σ_c T_c·(first_c +
/// centre_c) instead of Σ_c T_c·first_c (`origin`), and m^T, common to every
/// coefficient, is a relative error of the masses (`scale_error`), not an
/// error per coefficient (docs/pld.md#round-off).
std::vector<Survivor> surviving_coefficients(const Prepared& prep, std::size_t n, double gamma,
                                             std::size_t max_grid, bool shared, double& rho_total,
                                             std::int64_t& origin, double& scale_error,
                                             const std::vector<std::size_t>* given = nullptr) {
  const std::size_t h = n / 2 + 1;
  std::vector<Survivor> alive;
  // Many compositions leave few coefficients: compute only those (directly);
  // otherwise one full forward transform per release.
  auto cand = given ? std::optional(*given) : candidates(prep, n, kNegligible);
  if (cand && !given && n <= max_grid) {
    // The full transforms where they are cheaper than the direct sums.
    std::size_t terms = 0;
    for (const auto& r : prep.releases) terms = std::max(terms, r->terms);
    const double sums = static_cast<double>(cand->size()) * static_cast<double>(terms);
    if (sums > kTransformCostRatio * static_cast<double>(n) * std::log2(static_cast<double>(n)))
      cand.reset();
  }
  if (!cand && n > max_grid) throw GridTooLarge("pld: composed grid exceeds the limit");
  origin = prep.first;
  scale_error = 0;
  for (std::size_t c = 0; c < prep.releases.size(); ++c) {
    const Release& release = *prep.releases[c];
    const auto& x = release.loss;
    const double t = prep.counts[c];
    // The full transforms' error; the direct sums' is per frequency.
    const double rho = gamma * release.total_mass;
    std::shared_ptr<const std::vector<std::complex<double>>> held;
    if (cand)
      held = std::make_shared<const std::vector<std::complex<double>>>(release.dft_at(n, *cand));
    else if (shared)
      held = release.transform(n);
    else
      held = std::make_shared<const std::vector<std::complex<double>>>(fft::forward(x.mass, n));
    const std::vector<std::complex<double>>& spectrum = *held;
    const double mass = release.total_mass;
    const double log_mass = mass > 0 ? std::log(mass) : -kInf;
    if (cand) {
      origin += static_cast<std::int64_t>(t) * release.centre;
      // m̂ is within kScaleUlps·u of Σ x_j: (m̂/m)^T is one factor on every
      // composed mass.
      scale_error += t * kScaleUlps * kU;
    }
    rho_total += t * (cand ? (mass > 0 ? release.direct_error(n / 2, n) / mass : 0.0) : rho);
    // A coefficient with T·log(min(r + ρ, 1)) < kNegligible is dropped whatever
    // the other releases give (their terms are ≤ 0). Most of a full transform
    // is, and |v|² below this says so without the logarithms; the rest take
    // the full update below (the same survivors, the same values).
    const double keep = std::exp(kNegligible / t) * (1 - kDropMargin) - rho;
    const double drop_below = keep > 0 ? keep * keep : 0.0;
    auto update = [&](Survivor& s) {
      const std::complex<double> v = spectrum[cand ? s.idx : s.k];
      double log_r, arg, r, err;
      if (cand) {
        // 1 + v/m: its modulus and argument without forming 1 + v/m.
        if (!(mass > 0)) return false;
        const std::complex<double> w = v / mass;
        log_r = log_modulus(1.0 + w, w.real() * (2 + w.real()) + w.imag() * w.imag());
        arg = std::atan2(w.imag(), 1 + w.real());
        r = std::min(std::exp(log_r), 1.0);
        err = release.direct_error(s.k, n) / mass * (1 + kScaleUlps * kU) +
              kQuotientUlps * kU * std::abs(w);
        log_r += log_mass;  // the scale m, the same for every coefficient
      } else {
        if (std::norm(v) < drop_below) return false;
        log_r = log_modulus(v, (v.real() - 1) * (v.real() + 1) + v.imag() * v.imag());
        arg = std::arg(v);
        r = std::min(std::abs(v), 1.0);
        err = rho;
      }
      const double rp = std::min(r + err, 1.0);
      s.log_r += t * log_r;
      s.phase_weight += t * std::abs(arg) * (1 + std::abs(arg));
      // A coefficient computed as 0 is left at 0: no power, no power error.
      if (std::isfinite(log_r)) s.log_weight += t * std::abs(log_r);
      s.theta = std::remainder(s.theta + std::remainder(t * arg, 2 * std::numbers::pi),
                               2 * std::numbers::pi);
      s.log_r_pert += t * (std::log(rp) + (cand ? log_mass : 0.0));
      s.pert_sum += t * err / rp;
      return s.log_r_pert >= kNegligible;
    };
    if (c == 0) {
      const std::size_t count = cand ? cand->size() : h;
      alive.reserve(count);  // one allocation: growing it would copy and touch it again
      for (std::size_t i = 0; i < count; ++i) {
        Survivor s{cand ? (*cand)[i] : i, i, 0, 0, 0, 0, 0, 0};
        if (update(s)) alive.push_back(s);
      }
    } else {
      std::erase_if(alive, [&](Survivor& s) { return !update(s); });
    }
  }
  return alive;
}

/// What the composed array does not hold: the mass the circular convolution
/// folds in from outside the window, the mass at +∞, and the variance and
/// bias of the coupling of (3).
void set_outside_window(const Prepared& prep, double interval, std::int64_t k_a, std::size_t n,
                        double window_tail, ComposedLoss& out) {
  const auto nn = static_cast<std::int64_t>(n);
  const std::int64_t k_top = k_a + nn - 1;
  out.alias_above = k_top >= prep.last
                        ? 0.0
                        : std::exp(prep.log_tail_above(static_cast<double>(k_top + 1) * interval));
  out.alias_below = k_a <= prep.first
                        ? 0.0
                        : std::exp(prep.log_tail_below(static_cast<double>(k_a - 1) * interval));
  double log_finite = 0, log_certain = 0, var = 0, lambda = 0, stride = 1;
  for (std::size_t c = 0; c < prep.releases.size(); ++c) {
    log_finite += prep.counts[c] * std::log1p(-std::min(prep.loss(c).dropped_mass, 1.0));
    log_certain += prep.counts[c] * std::log1p(-std::min(prep.loss(c).infinite_mass, 1.0));
    var += prep.counts[c] * prep.loss(c).split_variance;
    if (prep.loss(c).stride > 1) {
      lambda += prep.counts[c] * prep.loss(c).coarse_probability;
      stride = std::max(stride, static_cast<double>(prep.loss(c).stride));
    }
  }
  out.infinite_mass = -std::expm1(log_finite);
  // The composed loss is +∞ as soon as one release's is: 1 − Π(1 − m_c)^{T_c},
  // rounded down (a few u per operation) since the lower bounds count it.
  out.certain_infinite_mass = std::max(
      0.0, -std::expm1(log_certain) * (1 - kCertainMassUlps * kU * (prep.total_count + 4)));
  out.variance = var * interval * interval;
  // (3): β(w) = (w/2 + w²/12)²/2 bounds the conditional mean of Y − X of a release
  // whose loss falls in a bucket of width w: Δ, or stride·Δ for at most K
  // releases except with probability coarse_excess (docs/pld.md#coarse-tails).
  auto beta = [](double w) { return 0.5 * std::pow(w / 2 + w * w / 12, 2); };
  out.releases = static_cast<std::size_t>(prep.total_count);
  out.stride = stride;
  if (stride > 1) {
    const auto [k, excess] = coarse_count_bound(lambda, prep.total_count, window_tail);
    out.coarse_releases = k;
    out.coarse_excess = excess;
  }
  out.bias = prep.total_count * beta(interval) + out.coarse_releases * beta(stride * interval);
}

}  // namespace

std::pair<double, double> coarse_count_bound(double lambda, double releases, double target) {
  if (!(lambda > 0)) return {0.0, 0.0};
  // log P(N ≥ j) ≤ f(j) = j·log λ − log j!, j = K + 1. f rises while j < λ and
  // falls after: the least j with f(j) ≤ log target is 1, or lies past λ,
  // where a doubling and a bisection find it.
  const double log_lambda = std::log(lambda), log_target = std::log(target);
  auto f = [&](double j) { return j * log_lambda - std::lgamma(j + 1); };
  if (f(1) <= log_target) return {0.0, lambda};
  double lo = std::max(1.0, std::floor(lambda));  // f(lo) > log target
  double hi = lo + 1;
  while (f(hi) > log_target) {
    if (hi > releases) return {releases, 0.0};  // N ≤ the number of releases
    lo = hi;
    hi = lo + 2 * (hi - std::max(1.0, std::floor(lambda))) + 1;
  }
  while (hi - lo > 1) {  // f(lo) > log target ≥ f(hi)
    const double mid = std::floor(lo + (hi - lo) / 2);
    (f(mid) > log_target ? lo : hi) = mid;
  }
  if (hi - 1 >= releases) return {releases, 0.0};
  return {hi - 1, std::exp(f(hi))};
}

ComposedLoss compose_impl(std::span<const Component> components, Direction d, double interval,
                          double tail_mass, double window_tail, std::size_t max_grid, bool shared,
                          double roundoff_target, Coarsening coarsening) {
  const Prepared prep = prepare(components, d, interval, tail_mass, max_grid, coarsening);
  const auto [k_a, k_b] = window(prep, interval, window_tail);
  // The window may exceed max_grid when only a few Fourier coefficients are
  // needed (spectral form, no array of the window), never kMaxSpectralWindow.
  if (static_cast<double>(k_b - k_a) + 1 > static_cast<double>(kMaxSpectralWindow))
    throw GridTooLarge("pld: composed grid exceeds the limit");
  const std::size_t n = transform_size(k_a, k_b, max_grid, shared);

  // (4) Π_c X_c^{T_c} in log-polar form; (5) round-off terms.
  const std::size_t h = n / 2 + 1;
  const double gamma = fft_gamma(n);
  double rho_total = 0, scale_error = 0;
  std::int64_t origin = prep.first;
  std::vector<Survivor> alive =
      surviving_coefficients(prep, n, gamma, max_grid, shared, rho_total, origin, scale_error);
  // From full transforms (no direct sums) the round-off grows like T·γ_N: when
  // it exceeds `roundoff_target` and few coefficients survive, they are
  // computed again by centred direct sums (the others are negligible whatever
  // their error).
  const double releases = static_cast<double>(prep.releases.size());
  auto perturbation = [&](const Survivor& s) {
    // |Ẑ_k − Z_k|: the transforms' error carried through the power, plus the
    // power's own (relative to the bound (r + ρ)^T on |Z_k|).
    const double power_rel = kPowerUlps * kU *
                             ((2 + releases) * s.log_weight + s.phase_weight +
                              2 * std::numbers::pi * releases + kPowerFinalUlps);
    // Coefficients below e^{kLogUnderflow} are set to 0 (no power computed).
    return std::exp(s.log_r_pert) * s.pert_sum +
           (s.log_r < kLogUnderflow ? 0.0 : std::exp(s.log_r) * power_rel);
  };
  if (scale_error == 0 && prep.total_count * gamma >= kRecomputeFrom) {
    std::size_t widest = 0;
    for (const auto& r : prep.releases) widest = std::max(widest, r->terms);
    double norm2 = 0;
    for (const Survivor& s : alive)
      norm2 += hermitian_weight(s.k, n) * std::pow(perturbation(s), 2);
    if (std::sqrt(norm2) > roundoff_target && alive.size() * widest <= kRecomputeBudget) {
      std::vector<std::size_t> ks;
      for (const Survivor& s : alive) ks.push_back(s.k);
      rho_total = 0;
      alive = surviving_coefficients(prep, n, gamma, max_grid, shared, rho_total, origin,
                                     scale_error, &ks);
    }
  }
  double z_norm2 = 0, dz_norm2 = 0;
  std::vector<std::complex<double>> z_alive(alive.size());
  for (std::size_t i = 0; i < alive.size(); ++i) {
    const Survivor& s = alive[i];
    const double dz = perturbation(s);
    dz_norm2 += hermitian_weight(s.k, n) * dz * dz;
    if (s.log_r < kLogUnderflow) continue;
    z_alive[i] = std::polar(std::exp(s.log_r), s.theta);
    z_norm2 += hermitian_weight(s.k, n) * std::norm(z_alive[i]);
  }
  const double z_norm = std::sqrt(z_norm2);
  const double dz_norm = std::sqrt(dz_norm2) + std::sqrt(static_cast<double>(n)) *
                                                   std::exp(kNegligible) * (1 + rho_total);
  // Σ_j |ŷ_j − y_j| ≤ ‖Ẑ − Z‖₂ (Parseval), plus the error of the last step.
  double roundoff = dz_norm + kFinalSumUlps * kU;

  const auto nn = static_cast<std::int64_t>(n);
  // Circular position p holds loss index ≡ origin + p (mod n); the window
  // starts at k_a, so y_j (loss (k_a + j)Δ) is circular position j + shift.
  const std::int64_t shift = (((k_a - origin) % nn) + nn) % nn;
  ComposedLoss out;
  if ((alive.size() * kSpectralFraction <= n && alive.size() <= kSpectralMaxCoefficients) ||
      n > max_grid) {
    // Few coefficients left (many compositions): keep the spectrum and read δ
    // from it directly — no inverse transform.
    std::vector<std::size_t> ks(alive.size());
    for (std::size_t i = 0; i < alive.size(); ++i) ks[i] = alive[i].k;
    out = spectral_form(interval, k_a, n, shift, ks, z_alive, roundoff);
  } else {
    std::vector<std::complex<double>> z(h);
    for (std::size_t i = 0; i < alive.size(); ++i) z[alive[i].k] = z_alive[i];
    roundoff += gamma * z_norm;  // the inverse transform (normwise, Higham Thm 24.2)
    const std::vector<double> circular = fft::inverse(std::move(z), n);
    std::vector<double> mass(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double v = circular[(static_cast<std::int64_t>(i) + shift) % nn];
      mass[i] = v > 0 ? v : 0.0;  // the truth is ≥ 0: clamping only lowers the error
    }
    out = ComposedLoss(interval, k_a, std::move(mass));
  }

  out.roundoff = roundoff;
  out.relative_error = std::expm1(scale_error);
  set_outside_window(prep, interval, k_a, n, window_tail, out);
  return out;
}

}  // namespace detail

ComposedLoss compose(std::span<const Component> components, Direction d, double interval,
                     double tail_mass, double window_tail, Coarsening coarsening) {
  if (!(interval > 0)) throw InvalidParameter("pld_interval", "must be positive");
  if (components.empty()) {
    ComposedLoss id(interval, 0, {1.0});
    return id;
  }
  return detail::compose_impl(components, d, interval, tail_mass, window_tail, kDirectMaxGrid,
                              false, 0, coarsening);
}

}  // namespace dpb::pld
