#include "accounting/gdp/gdp.hpp"

#include <algorithm>
#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>

#include "accounting/errors.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/normal.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

/// The largest finite double: the upper end of a bracket that would overflow.
constexpr double kLargest = std::numeric_limits<double>::max();

void check_mu(double mu) {
  if (!(mu >= 0)) throw InvalidParameter("mu", "must be a number >= 0");
}
void check_epsilon(double epsilon) {
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
}
void check_gdp_delta(double delta) {
  if (!(delta >= 0 && delta <= 1)) throw InvalidParameter("delta", "must be in [0, 1]");
}
void check_q(double q) {
  if (!(q >= 0 && q <= 1)) throw InvalidParameter("sampling_probability", "must be in [0, 1]");
}
void check_gdp_sigma(double sigma) {
  if (!(sigma > 0)) throw InvalidParameter("noise_multiplier", "must be a number > 0");
}
void check_steps(double steps) {
  if (!(steps >= 0) || !std::isfinite(steps))
    throw InvalidParameter("steps", "must be a finite number >= 0");
}

}  // namespace

namespace {

// Rounding-error analysis of log δ(ε) below (u = 2⁻⁵³, the unit roundoff).
// Each computed quantity carries a bound on its absolute error; the result is
// the computed log δ plus the bound of its error, so that δ(ε) as returned is
// at least the exact value for the double inputs (docs/gdp.md#gdp-profile).

/// log Φ(x) (detail::log_norm_cdf) for an exact x: Boost's erfc is accurate to
/// a few ε = 2u in double precision, then one multiplication and a log or
/// log1p (≤ 1 ulp each), or in the far tail the Mills-ratio series and three
/// logs; 8 ulps of |log Φ(x)| + 1 cover either, with room.
constexpr double kLogPhiUlps = 8;
/// log(1 − eᵗ) (detail::log1mexp) for an exact t: an exp or expm1 and a log
/// or log1p, ≤ 1 ulp each; 4 ulps of |log(1 − eᵗ)| + 1.
constexpr double kLog1mexpUlps = 4;
/// d log Φ(x)/dx = φ(x)/Φ(x) ≤ |x| + kMillsSlack for every x: for x ≤ −1 by
/// the Mills-ratio inequality Φ(x) ≥ φ(x)·|x|/(x² + 1) (Gordon 1941), i.e.
/// φ/Φ ≤ |x| + 1/|x|; on [−1, 0] φ/Φ ≤ φ(0)/Φ(−1) < 2.52; for x ≥ 0, ≤ φ(0)/Φ(0) < 0.8.
constexpr double kMillsSlack = 2.6;
/// The 20-point Gauss–Legendre mass ∫_b^a φ on an interval of width h = μ < ½
/// within |z| ≤ 31 (the branch's a > −30): its truncation error is
/// h⁴¹(20!)⁴/(41·(40!)³)·max|φ⁽⁴⁰⁾| with (20!)⁴/(41·(40!)³) < 1.6e-72 and
/// |φ⁽⁴⁰⁾(z)| = |He₄₀(z)|·φ(z) ≤ 2·31⁴⁰·φ(z); the mass is ≥ h·min φ and
/// max φ/min φ ≤ e^{h·31} < e^{15.5} on the interval, so the truncation is
/// below 0.5⁴⁰·1.6e-72·9.2e59·5.4e6 < 1e-17 of the mass: 1e-16 (kQuadratureTruncation).
/// Rounding: 20 positive terms w·φ(z) summed (≤ 20u) and each weight
/// rounded (≤ u): 32 ulps of the mass, plus each node's φ(z), off by ≤ 3z²u
/// relative (z rounded by ≤ 2u·|z|, then z²/2 and exp), added where used.
constexpr double kQuadratureUlps = 32;
constexpr double kQuadratureTruncation = 1e-16;
/// Φ(x) (detail::norm_cdf) for an exact x: erfc (a few ε) and a halving.
constexpr double kPhiUlps = 8;
/// exp of an upper bound on log δ is stepped past exp's rounding (≤ 1 ulp).
constexpr int kGdpExpUlps = 2;
/// The first-order bounds above are doubled to cover the second-order terms
/// (products of two rounding errors) the analysis drops.
constexpr double kSecondOrder = 2;

/// Absolute error of the computed abscissa ∓ε/μ ± μ/2: the quotient r = ε/μ
/// and the sum each round once (≤ u of their magnitude).
double abscissa_error(double r, double mu) { return 2 * kU * (r + mu / 2); }

/// Absolute error bound of log Φ(x) computed at a rounded x (error ≤ dx).
double log_phi_error(double x, double log_phi, double dx) {
  return kLogPhiUlps * kU * (std::abs(log_phi) + 1) + (std::abs(x) + kMillsSlack) * dx;
}

}  // namespace

// δ(ε) = Φ(a) − e^ε Φ(b), a = −ε/μ + μ/2, b = −ε/μ − μ/2 (b < a). Written as
//   δ = Φ(a) · (1 − exp(t)),  t = ε + log Φ(b) − log Φ(a) ≤ 0,
// so log δ = log Φ(a) + log(1 − eᵗ) with a stable log Φ and log1mexp: no
// overflow of e^ε, no catastrophic subtraction of two tiny numbers. The value
// returned is the computed log δ plus a bound on its rounding error (above).
double gdp_log_delta(double mu, double epsilon) {
  check_mu(mu);
  check_epsilon(epsilon);
  if (mu == 0 || epsilon == kInf) return -kInf;
  if (mu == kInf) return 0;  // δ = 1
  const double u = kU;
  const double r = epsilon / mu;
  const double a = -r + mu / 2;
  const double b = -r - mu / 2;
  const double dx = abscissa_error(r, mu);
  const double la = detail::log_norm_cdf(a);
  if (la == -kInf) return -kInf;
  const double lb = detail::log_norm_cdf(b);
  const double la_err = kSecondOrder * log_phi_error(a, la, dx);
  const double lb_err = kSecondOrder * log_phi_error(b, lb, dx);
  const double t = epsilon + lb - la;
  if (std::isnan(t)) return -kInf;
  // log(1 − eᵗ) decreases in t: evaluated at t minus t's error bound. A
  // bound that reaches t ≥ 0 (impossible for the exact t < 0) claims only δ ≤ Φ(a).
  const double t_low = t - la_err - lb_err - 2 * u * (epsilon + std::abs(lb) + std::abs(la));
  double l = 0;  // log(1 − eᵗ) ≤ 0 always
  if (t_low < 0) {
    l = detail::log1mexp(t_low);
    l += kLog1mexpUlps * u * (std::abs(l) + 1);
  }
  double ld = std::min(la + la_err + l, 0.0);
  ld += u * std::abs(ld);  // the sum rounds once
  if (mu < 0.5 && t > -0.5 && a > -30) {
    // Small μ: t is a small difference of rounded logs (relative error
    // ~1e-16·|log Φ(a)|/|t| in δ). Also bound δ = [Φ(a) − Φ(b)] − (e^ε − 1)·Φ(b)
    // with Φ(a) − Φ(b) = ∫_b^a φ by 20-point Gauss–Legendre (interval width
    // μ < ½), exact at ε = 0 and mildly cancelling otherwise, and keep the
    // smaller of the two upper bounds.
    const double mass = boost::math::quadrature::gauss<double, 20>::integrate(
        [](double z) { return 0.39894228040143267794 * std::exp(-0.5 * z * z); }, b, a);
    const double phi_b = detail::norm_cdf(b);
    const double drift = std::expm1(epsilon) * phi_b;
    const double d = mass - drift;
    // Errors: the mass's rounding and truncation (z² ≤ b²), its ends moved by dx each (φ ≤ 0.4);
    // the drift's expm1, product and Φ(b) (Φ(b) moved by φ(b)·dx ≤ (|b| + 2.6)·Φ(b)·dx); the
    // subtraction.
    const double d_err =
        kSecondOrder *
        (((kQuadratureUlps + 3 * b * b) * u + kQuadratureTruncation) * mass + 0.4 * 2 * dx +
         ((2 + kPhiUlps) * u + (std::abs(b) + kMillsSlack) * dx) * drift + u * d);
    if (d > 0 && d_err < d) {
      const double lq = std::log(d + d_err);
      ld = std::min(ld, lq + 2 * u * std::abs(lq));  // the sum and the log round once each
    }
  }
  return ld;
}

double gdp_delta(double mu, double epsilon) {
  const double ld = gdp_log_delta(mu, epsilon);
  if (ld == -kInf) return 0;  // exactly: μ = 0 or ε = ∞
  const double d = std::exp(ld);
  if (d == 0) return std::numeric_limits<double>::denorm_min();  // underflow: still a bound
  return std::min(1.0, outward::up(d, kGdpExpUlps));
}

double gdp_epsilon(double mu, double delta) {
  check_mu(mu);
  check_gdp_delta(delta);
  if (mu == 0 || delta >= 1) return 0;
  if (mu == kInf) return kInf;
  if (delta == 0) return kInf;
  // log δ rounds by ≤ 1 ulp (≤ 2u relative): a target lower by that is below
  // the exact log δ; lower by kGdpExpUlps ulps of δ more (≤ 4u each) so that
  // gdp_delta() at the returned ε, exp stepped up, is still ≤ δ.
  double log_target = std::log(delta);
  log_target -= 2 * kU * std::abs(log_target) + 4 * kGdpExpUlps * kU;
  if (gdp_log_delta(mu, 0) <= log_target) return 0;
  // δ(ε) ≤ Φ(−ε/μ + μ/2) ≤ δ once ε ≥ μ²/2 − μ·Φ⁻¹(δ): an upper end of the bracket.
  // For μ past ~1e154 that end overflows: the bracket then ends at the
  // largest double, and a root beyond it (the exact ε exceeds every double)
  // is reported as ∞, the only upper bound a double holds.
  double hi = mu * mu / 2 - mu * detail::norm_quantile(delta);
  hi = std::clamp(hi * (1 + 1e-12), 1e-300, kLargest);
  // Clamp log δ so that the solver never sees −inf (log of a double is ≥ −745).
  auto f = [&](double e) { return std::max(gdp_log_delta(mu, e), -3000.0) - log_target; };
  for (int i = 0; f(hi) > 0 && hi < kLargest && i < 2000; ++i)  // safety net for rounding
    hi = std::min(hi * 2, kLargest);
  if (f(hi) > 0) return kInf;
  std::uintmax_t iters = 300;
  const auto [lo_end, hi_end] = boost::math::tools::toms748_solve(
      f, 0.0, hi, boost::math::tools::eps_tolerance<double>(52), iters);
  (void)lo_end;
  // f(hi_end) ≤ 0: gdp_log_delta is an upper bound on the exact log δ and
  // log_target a lower bound on log δ, so the exact δ(hi_end) ≤ δ and hi_end
  // is at least the exact root.
  return hi_end;
}

double gdp_compose(std::span<const double> mus) {
  // √(Σ μᵢ²) with scaling by the largest μ to avoid overflow/underflow.
  double m = 0;
  for (double mu : mus) {
    check_mu(mu);
    m = std::max(m, mu);
  }
  if (m == 0 || m == kInf) return m;
  double s = 0;
  for (double mu : mus) s += (mu / m) * (mu / m);
  return m * std::sqrt(s);
}

double gdp_self_compose(double mu, std::int64_t k) {
  check_mu(mu);
  if (k < 0) throw InvalidParameter("count", "must be an integer >= 0");
  return k == 0 ? 0 : std::sqrt(static_cast<double>(k)) * mu;
}

double gdp_group(double mu, std::int64_t k) {
  check_mu(mu);
  if (k < 1) throw InvalidParameter("group_size", "must be an integer >= 1");
  return static_cast<double>(k) * mu;
}

double gdp_gaussian_mu(double sigma, double sensitivity) {
  check_gdp_sigma(sigma);
  if (!(sensitivity > 0)) throw InvalidParameter("sensitivity", "must be a number > 0");
  return outward::quotient_up(sensitivity, sigma);  // δ(ε) grows with μ: rounded up
}

double gdp_clt_mu_poisson(double q, double sigma, double steps) {
  check_q(q);
  check_gdp_sigma(sigma);
  check_steps(steps);
  if (q == 0 || steps == 0) return 0;
  return q * std::sqrt(steps * std::expm1(1 / (sigma * sigma)));
}

double gdp_clt_mu_uniform(double q, double sigma, double steps) {
  check_q(q);
  check_gdp_sigma(sigma);
  check_steps(steps);
  if (q == 0 || steps == 0) return 0;
  // e^{s²}Φ(1.5s) + 3Φ(−0.5s) − 2 with s = 1/σ, rewritten to avoid cancelling
  // O(1) terms for large σ (Φ(x) − ½ = ½·erf(x/√2)):
  //   = expm1(s²)·Φ(1.5s) + ½·erf(1.5s/√2) − (3/2)·erf(0.5s/√2).
  const double s = 1 / sigma;
  const double k = 0.70710678118654752440;
  const double inner = std::expm1(s * s) * detail::norm_cdf(1.5 * s) +
                       0.5 * boost::math::erf(1.5 * s * k) - 1.5 * boost::math::erf(0.5 * s * k);
  return std::sqrt(2.0) * q * std::sqrt(steps * std::max(inner, 0.0));
}

double gdp_tradeoff(double mu, double x) {
  check_mu(mu);
  if (!(x >= 0 && x <= 1)) throw InvalidParameter("x", "must be in [0, 1]");
  // Φ⁻¹(1 − x) = −Φ⁻¹(x), evaluated from the side that keeps precision.
  const double z = x < 0.5 ? -detail::norm_quantile(x) : detail::norm_quantile(1 - x);
  if (mu == kInf) return x == 0 ? 1 : 0;
  return detail::norm_cdf(z - mu);
}

double eps_delta_tradeoff(double epsilon, double delta, double x) {
  check_epsilon(epsilon);
  check_gdp_delta(delta);
  if (!(x >= 0 && x <= 1)) throw InvalidParameter("x", "must be in [0, 1]");
  // a = 1 - delta - e^eps x with e^eps x as exp(eps + log x): e^eps overflows
  // past eps ~ 709.78 where e^eps x need not, and at x = 0 the term is 0, not
  // inf * 0; so f(0) = 1 - delta exactly for every eps. When
  // e^eps x >= 1 - delta the term is <= 0 and the max ignores it.
  const double rest = 1 - delta;
  double a = rest;
  if (x > 0) {
    const double log_term = epsilon + std::log(x);  // inf when eps is
    a = log_term >= std::log(rest) ? 0.0 : rest - std::exp(log_term);
  }
  const double b = std::exp(-epsilon) * (rest - x);
  return std::max({0.0, a, b});
}

}  // namespace dpb
