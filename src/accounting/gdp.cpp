#include "accounting/gdp.hpp"

#include <algorithm>
#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>

#include "accounting/errors.hpp"
#include "accounting/normal.hpp"

namespace dpb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_mu(double mu) {
  if (!(mu >= 0)) throw InvalidParameter("mu", "must be a number >= 0");
}
void check_epsilon(double epsilon) {
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
}
void check_delta(double delta) {
  if (!(delta >= 0 && delta <= 1)) throw InvalidParameter("delta", "must be in [0, 1]");
}
void check_q(double q) {
  if (!(q >= 0 && q <= 1)) throw InvalidParameter("sampling_probability", "must be in [0, 1]");
}
void check_sigma(double sigma) {
  if (!(sigma > 0)) throw InvalidParameter("noise_multiplier", "must be a number > 0");
}
void check_steps(double steps) {
  if (!(steps >= 0) || !std::isfinite(steps))
    throw InvalidParameter("steps", "must be a finite number >= 0");
}

}  // namespace

// δ(ε) = Φ(a) − e^ε Φ(b), a = −ε/μ + μ/2, b = −ε/μ − μ/2 (b < a). Written as
//   δ = Φ(a) · (1 − exp(t)),  t = ε + log Φ(b) − log Φ(a) ≤ 0,
// so log δ = log Φ(a) + log(1 − eᵗ) with a stable log Φ and log1mexp: no
// overflow of e^ε, no catastrophic subtraction of two tiny numbers, and a
// rounding-induced t ≥ 0 gives δ = 0 rather than a negative number.
double gdp_log_delta(double mu, double epsilon) {
  check_mu(mu);
  check_epsilon(epsilon);
  if (mu == 0 || epsilon == kInf) return -kInf;
  if (mu == kInf) return 0;  // δ = 1
  const double r = epsilon / mu;
  const double a = -r + mu / 2;
  const double b = -r - mu / 2;
  const double la = detail::log_norm_cdf(a);
  if (la == -kInf) return -kInf;
  const double lb = detail::log_norm_cdf(b);
  const double t = epsilon + lb - la;
  if (std::isnan(t)) return -kInf;
  if (mu < 0.5 && t > -0.5 && a > -30) {
    // Small μ: t is a small difference of rounded logs (relative error
    // ~1e-16·|log Φ(a)|/|t| in δ). Use δ = [Φ(a) − Φ(b)] − (e^ε − 1)·Φ(b) with
    // Φ(a) − Φ(b) = ∫_b^a φ by 20-point Gauss–Legendre (interval width μ < ½,
    // accurate to machine precision), exact at ε = 0 and mildly cancelling otherwise.
    const double mass = boost::math::quadrature::gauss<double, 20>::integrate(
        [](double z) { return 0.39894228040143267794 * std::exp(-0.5 * z * z); }, b, a);
    const double d = mass - std::expm1(epsilon) * detail::norm_cdf(b);
    if (d > 0) return std::log(d);
  }
  return la + detail::log1mexp(t);
}

double gdp_delta(double mu, double epsilon) { return std::exp(gdp_log_delta(mu, epsilon)); }

double gdp_epsilon(double mu, double delta) {
  check_mu(mu);
  check_delta(delta);
  if (mu == 0 || delta >= 1) return 0;
  if (mu == kInf) return kInf;
  if (delta == 0) return kInf;
  const double log_target = std::log(delta);
  if (gdp_log_delta(mu, 0) <= log_target) return 0;
  // δ(ε) ≤ Φ(−ε/μ + μ/2) ≤ δ once ε ≥ μ²/2 − μ·Φ⁻¹(δ): an upper end of the bracket.
  double hi = mu * mu / 2 - mu * detail::norm_quantile(delta);
  hi = std::max(hi * (1 + 1e-12), 1e-300);
  // Clamp log δ so that the solver never sees −inf (log of a double is ≥ −745).
  auto f = [&](double e) { return std::max(gdp_log_delta(mu, e), -3000.0) - log_target; };
  for (int i = 0; f(hi) > 0 && i < 2000; ++i) hi *= 2;  // safety net for rounding
  if (f(hi) > 0) return kInf;
  std::uintmax_t iters = 300;
  const auto [lo_end, hi_end] = boost::math::tools::toms748_solve(
      f, 0.0, hi, boost::math::tools::eps_tolerance<double>(52), iters);
  (void)lo_end;
  return hi_end;  // f(hi_end) ≤ 0: the upper, safe end of the final bracket
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
  check_sigma(sigma);
  if (!(sensitivity > 0)) throw InvalidParameter("sensitivity", "must be a number > 0");
  return sensitivity / sigma;
}

double gdp_clt_mu_poisson(double q, double sigma, double steps) {
  check_q(q);
  check_sigma(sigma);
  check_steps(steps);
  if (q == 0 || steps == 0) return 0;
  return q * std::sqrt(steps * std::expm1(1 / (sigma * sigma)));
}

double gdp_clt_mu_uniform(double q, double sigma, double steps) {
  check_q(q);
  check_sigma(sigma);
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
  check_delta(delta);
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
