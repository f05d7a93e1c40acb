#include "accounting/pld.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <complex>
#include <future>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>

#include "accounting/errors.hpp"
#include "accounting/fft.hpp"

// Method and error terms (numbers refer to the comments below).
//
// (1) One release. With μ0 = base noise at 0, μ1 = at 1, μ = (1−q)μ0 + qμ1,
//     the remove-direction loss is L(z) = log((1−q) + q·r(z)), r = dμ1/dμ0,
//     nondecreasing in z (r(z) = exp((2z−1)/(2σ²)) for the Gaussian,
//     exp((|z| − |z−1|)/b) for Laplace), z ∼ μ; the add direction has loss −L(z),
//     z ∼ μ0 (SPEC §7). Because L is monotone, P(X ≤ l) and Q(X ≤ l) are CDFs of
//     μ and μ0 at the generalised inverse of L, so bucket masses are exact
//     differences of normal / Laplace CDFs, taken on the accurate side (erfc
//     in the upper tail).
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
//     log-polar power adds a relative error ≤ 8u(760 + π·ΣT); the inverse
//     transform adds γ_N‖Ẑ‖₂ (normwise). By Parseval, Σ_j |ŷ_j − y_j| ≤
//     ‖Ẑ − Z‖₂ + γ_N‖Ẑ‖₂ (unnormalised F), and since (1 − e^{ε−l})₊ ≤ 1 that L1
//     bound is added to the upper δ and subtracted from the lower δ. Negative
//     outputs are clamped to 0, which only moves them towards the
//     (non-negative) truth. These bounds hold for FFT algorithms of the
//     Cooley–Tukey family under that model; FFTW is of that family but its
//     codelets are not individually proven to meet the constant.

namespace dpb::pld {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kU = std::numeric_limits<double>::epsilon() / 2;  // unit round-off

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
double difference(const Prob& a, const Prob& b) {
  double d;
  if (a.upper && b.upper)
    d = a.v - b.v;
  else if (!a.upper && !b.upper)
    d = b.v - a.v;
  else
    d = b.cdf() - a.cdf();
  return std::max(d, 0.0);
}

/// The pair of §(1) for one mechanism: μ0 = base noise, μ1 = base noise + 1.
class Model {
 public:
  explicit Model(const Mechanism& m) : m_(m) {
    if (!(m.parameter > 0) || !std::isfinite(m.parameter))
      throw InvalidParameter(m.kind == Mechanism::Kind::gaussian ? "noise_multiplier" : "scale",
                             "must be a finite positive number");
    if (!(m.sampling > 0 && m.sampling <= 1))
      throw InvalidParameter("sampling_probability", "must be in (0, 1]");
    const bool lap = m.kind == Mechanism::Kind::laplace;
    c_min_ = lap ? -1 / m.parameter : -kInf;
    c_max_ = lap ? 1 / m.parameter : kInf;
    log_q_ = std::log(m.sampling);
    l_min_ = loss_of_c(c_min_);
    l_max_ = loss_of_c(c_max_);
  }

  bool laplace() const { return m_.kind == Mechanism::Kind::laplace; }
  double l_min() const { return l_min_; }
  double l_max() const { return l_max_; }

  /// log r(z) = log dμ1/dμ0 at z.
  double c_of_z(double z) const {
    if (laplace()) return (std::abs(z) - std::abs(z - 1)) / m_.parameter;
    const double s = m_.parameter;
    return (2 * z - 1) / (2 * s * s);
  }
  /// L = log((1−q) + q e^c), stable for large |c|.
  double loss_of_c(double c) const {
    const double q = m_.sampling;
    if (q == 1) return c;
    if (c == kInf) return kInf;
    if (c > 0) return c + std::log(q + (1 - q) * std::exp(-c));
    return std::log1p(q * std::expm1(c));
  }
  double loss_of_z(double z) const { return loss_of_c(c_of_z(z)); }
  /// Inverse of loss_of_c on (l_min, l_max).
  double c_of_loss(double l) const {
    const double q = m_.sampling;
    if (q == 1) return l;
    if (l > 1) return l + std::log1p(-(1 - q) * std::exp(-l)) - log_q_;
    return std::log(std::expm1(l) + q) - log_q_;
  }
  double z_of_c(double c) const {
    if (laplace()) return std::clamp((m_.parameter * c + 1) / 2, 0.0, 1.0);
    const double s = m_.parameter;
    return s * s * c + 0.5;
  }
  /// sup{z : L(z) ≤ l}.
  double z_le(double l) const {
    if (l < l_min_) return -kInf;
    if (l >= l_max_) return kInf;
    return z_of_c(c_of_loss(l));
  }
  /// sup{z : L(z) < l}.
  double z_lt(double l) const {
    if (l <= l_min_) return -kInf;
    if (l > l_max_) return kInf;
    return z_of_c(c_of_loss(l));
  }

  double base_cdf(double z) const {
    const double s = m_.parameter;
    if (laplace()) return z < 0 ? 0.5 * std::exp(z / s) : 1 - 0.5 * std::exp(-z / s);
    return 0.5 * std::erfc(-z / (s * std::numbers::sqrt2));
  }
  double base_sf(double z) const {
    const double s = m_.parameter;
    if (laplace()) return z > 0 ? 0.5 * std::exp(-z / s) : 1 - 0.5 * std::exp(z / s);
    return 0.5 * std::erfc(z / (s * std::numbers::sqrt2));
  }
  /// z with base_sf(z) = τ (the upper τ-quantile of the base noise).
  double base_upper_quantile(double tau) const {
    const double s = m_.parameter;
    if (laplace()) return s * std::log(0.5 / tau);
    return boost::math::quantile(boost::math::complement(boost::math::normal(0.0, s), tau));
  }

  /// μ((−∞, z]) and μ0((−∞, z]), each on its accurate side (sharing the
  /// base-noise value at z).
  std::pair<Prob, Prob> mu_mu0(double z) const {
    const double q = m_.sampling;
    const bool upper = z > 0.5;
    const double b0 = upper ? base_sf(z) : base_cdf(z);
    const double b1 = upper ? base_sf(z - 1) : base_cdf(z - 1);
    return {{q == 1 ? b1 : (1 - q) * b0 + q * b1, upper}, {b0, upper}};
  }

  /// P(X ≤ l) and Q(X ≤ l) of the privacy loss X in direction d.
  std::pair<Prob, Prob> at(double l, Direction d) const {
    if (d == Direction::remove) return mu_mu0(z_le(l));
    // add: X = −L(z), P = μ0, Q = μ; {X ≤ l} = {L(z) ≥ −l} = {z ≥ z_lt(−l)}.
    const auto [mu, mu0] = mu_mu0(z_lt(-l));
    return {mu0.flipped(), mu.flipped()};
  }

  /// [l_lo, l_hi] holding all but ≤ τ of the P-mass at each end.
  std::pair<double, double> range(Direction d, double tau) const {
    const double zq = base_upper_quantile(tau);
    if (d == Direction::remove) {
      // μ(z > 1 + zq) ≤ τ and μ(z < −zq) ≤ τ.
      return {std::max(l_min_, loss_of_z(-zq)), std::min(l_max_, loss_of_z(1 + zq))};
    }
    // z ∼ μ0: μ0(z > zq) ≤ τ, μ0(z < −zq) ≤ τ; X = −L(z) is decreasing in z.
    return {std::max(-l_max_, -loss_of_z(zq)), std::min(-l_min_, -loss_of_z(-zq))};
  }

 private:
  Mechanism m_;
  double c_min_, c_max_, l_min_, l_max_, log_q_;
};

struct GridTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::pair<std::int64_t, std::int64_t> grid_range(const Model& model, Direction d, double interval,
                                                 double tail_mass, std::size_t max_points) {
  const auto [lo, hi] = model.range(d, tail_mass);
  const double span = (hi - lo) / interval;
  if (!(span < static_cast<double>(max_points)))
    throw GridTooLarge("pld: one release needs more than the grid limit");
  // One extra point each side, so that an atom of the loss (Laplace) on a
  // boundary point lands inside a bucket, never in the dropped tail.
  const auto k_lo = static_cast<std::int64_t>(std::floor(lo / interval)) - 1;
  const auto k_hi = static_cast<std::int64_t>(std::ceil(hi / interval)) + 1;
  return {k_lo, k_hi};
}

DiscreteLoss discretise_impl(const Mechanism& m, Direction d, double interval, double tail_mass,
                             std::size_t max_points) {
  const Model model(m);
  const auto [k_lo, k_hi] = grid_range(model, d, interval, tail_mass, max_points);
  DiscreteLoss out;
  out.interval = interval;
  out.first_index = k_lo;
  const auto n = static_cast<std::size_t>(k_hi - k_lo + 1);
  out.mass.assign(n, 0.0);
  const double down = -std::expm1(-interval);  // 1 − e^{−Δ}
  auto [p_prev, q_prev] = model.at(static_cast<double>(k_lo) * interval, d);
  const Prob p_first = p_prev;
  double var = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const double l = static_cast<double>(k_lo + static_cast<std::int64_t>(i)) * interval;
    const auto [p_next, q_next] = model.at(l + interval, d);
    const double p = difference(p_prev, p_next);
    if (p > 0) {
      const double qb = difference(q_prev, q_next);
      // (2): b = (p − qB·e^{l}) / (1 − e^{−Δ}), clamped to [0, p] against round-off.
      const double b = std::clamp((p - qb * std::exp(std::min(l, 700.0))) / down, 0.0, p);
      const double a = p - b;
      out.mass[i] += a;
      out.mass[i + 1] += b;
      var += a * b / p;
    }
    p_prev = p_next;
    q_prev = q_next;
  }
  out.dropped_mass = p_first.cdf() + p_prev.sf();
  out.split_variance = var;
  return out;
}

/// Blocks of a discrete loss for Chernoff bounds: mass, mean loss, lowest and
/// highest loss. On a block e^{λy} lies below its chord (convexity), so
/// m·[e^{λ lo}(hi − mean) + e^{λ hi}(mean − lo)]/(hi − lo) bounds its share of
/// E[e^{λY}] for either sign of λ, tight to second order in the block width.
struct Block {
  double mass, mean, lo, hi;
};

std::vector<Block> blocks_of(const DiscreteLoss& x) {
  const std::size_t per = std::max<std::size_t>(1, x.mass.size() / 2048);
  std::vector<Block> out;
  auto loss = [&](std::size_t i) {
    return static_cast<double>(x.first_index + static_cast<std::int64_t>(i)) * x.interval;
  };
  for (std::size_t i = 0; i < x.mass.size(); i += per) {
    const std::size_t j = std::min(x.mass.size(), i + per);
    double s = 0, first_moment = 0;
    for (std::size_t k = i; k < j; ++k) {
      s += x.mass[k];
      first_moment += x.mass[k] * static_cast<double>(k - i);
    }
    if (s > 0) {
      const double lo = loss(i), hi = loss(j - 1);
      const double mean = std::clamp(lo + first_moment / s * x.interval, lo, hi);
      out.push_back({s, mean, lo, hi});
    }
  }
  return out;
}

/// An upper bound on log E[e^{λY}] (λ ≠ 0), Y the discrete loss (sub-probability).
double log_mgf(const std::vector<Block>& blocks, double lambda) {
  double top = -kInf;
  for (const auto& b : blocks) top = std::max(top, lambda * (lambda > 0 ? b.hi : b.lo));
  if (top == -kInf) return -kInf;
  double s = 0;
  for (const auto& b : blocks) {
    const double width = b.hi - b.lo;
    if (width <= 0) {
      s += b.mass * std::exp(lambda * b.lo - top);
      continue;
    }
    const double up = (b.mean - b.lo) / width;
    s += b.mass * ((1 - up) * std::exp(lambda * b.lo - top) + up * std::exp(lambda * b.hi - top));
  }
  return top + std::log(s);
}

struct Prepared {
  std::vector<DiscreteLoss> losses;
  std::vector<double> counts;
  std::vector<std::vector<Block>> blocks;
  std::int64_t first = 0, last = 0;  // support of the composed loss (grid indices)
  double total_count = 0;
  // Chernoff: log P(S ≥ x) ≤ min_λ −λx + Σ T ψ(λ) (upper), log P(S ≤ x) ≤ min_λ λx + Σ T ψ(−λ).
  std::vector<double> lambdas, psi_up, psi_down;
  double log_tail_above(double x) const {
    double best = 0;
    for (std::size_t i = 0; i < lambdas.size(); ++i)
      best = std::min(best, -lambdas[i] * x + psi_up[i]);
    return best;
  }
  double log_tail_below(double x) const {
    double best = 0;
    for (std::size_t i = 0; i < lambdas.size(); ++i)
      best = std::min(best, lambdas[i] * x + psi_down[i]);
    return best;
  }
};

Prepared prepare(std::span<const Component> components, Direction d, double interval,
                 double tail_mass, std::size_t max_points) {
  Prepared p;
  for (const auto& c : components) {
    p.losses.push_back(discretise_impl(c.mechanism, d, interval, tail_mass, max_points));
    p.counts.push_back(static_cast<double>(c.count));
    p.blocks.push_back(blocks_of(p.losses.back()));
    const auto& x = p.losses.back();
    p.first += c.count * x.first_index;
    p.last += c.count * (x.first_index + static_cast<std::int64_t>(x.mass.size()) - 1);
    p.total_count += static_cast<double>(c.count);
  }
  for (int i = -16; i <= 24; ++i) p.lambdas.push_back(std::pow(10.0, i / 8.0));
  for (double lambda : p.lambdas) {
    double up = 0, down = 0;
    for (std::size_t c = 0; c < p.losses.size(); ++c) {
      up += p.counts[c] * log_mgf(p.blocks[c], lambda);
      down += p.counts[c] * log_mgf(p.blocks[c], -lambda);
    }
    p.psi_up.push_back(up);
    p.psi_down.push_back(down);
  }
  return p;
}

/// γ for the FFT of size n (see (5)).
double fft_gamma(std::size_t n) {
  return 8 * std::ceil(std::log2(static_cast<double>(std::max<std::size_t>(n, 2)))) * kU;
}

constexpr std::size_t kDirectBlock = 64;

/// Error factor of direct_dft(): |X̂_k − X_k| ≤ direct_gamma(n)·‖x‖₁. In-block
/// sums of 64 terms (≤ 63u of the moduli), twiddles e^{−iφ} from a table times
/// a block factor (φ = 2π·(integer phase)/n carries ≤ 2π·2u, so each factor is
/// within ~15u, the product within ~32u), pairwise sum over blocks.
double direct_gamma(std::size_t len) {
  const double blocks = std::ceil(static_cast<double>(len) / kDirectBlock);
  return 1.2 * (static_cast<double>(kDirectBlock) + 40 + std::ceil(std::log2(blocks + 1))) * kU;
}

std::complex<double> pairwise_sum(std::span<const std::complex<double>> v) {
  if (v.size() <= 2) {
    std::complex<double> s = 0;
    for (const auto& x : v) s += x;
    return s;
  }
  const std::size_t half = v.size() / 2;
  return pairwise_sum(v.subspan(0, half)) + pairwise_sum(v.subspan(half));
}

/// X_k = Σ_j x_j e^{−2πi jk/n} for the listed k only (the same convention as
/// fft::forward), each phase reduced exactly modulo n in integers.
std::vector<std::complex<double>> direct_dft(const std::vector<double>& x, std::size_t n,
                                             const std::vector<std::size_t>& ks) {
  const std::size_t blocks = (x.size() + kDirectBlock - 1) / kDirectBlock;
  const auto un = static_cast<std::uint64_t>(n);
  auto unit = [&](std::uint64_t turn) {
    return std::polar(
        1.0, -2 * std::numbers::pi * static_cast<double>(turn % un) / static_cast<double>(n));
  };
  std::vector<std::complex<double>> out(ks.size()), sums(blocks);
  std::complex<double> table[kDirectBlock];
  for (std::size_t i = 0; i < ks.size(); ++i) {
    const std::uint64_t k = ks[i];
    for (std::size_t r = 0; r < kDirectBlock; ++r) table[r] = unit(k * r);
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t start = b * kDirectBlock, stop = std::min(x.size(), start + kDirectBlock);
      double re = 0, im = 0;
      for (std::size_t j = start; j < stop; ++j) {
        re += x[j] * table[j - start].real();
        im += x[j] * table[j - start].imag();
      }
      sums[b] = std::complex<double>(re, im) * unit((k * start) % un);
    }
    out[i] = pairwise_sum(sums);
  }
  return out;
}

/// The frequencies k ≤ n/2 at which Π_c |X_ck|^{T_c} may exceed e^{bound_log},
/// from a transform of each release at its own (smaller) size m: |X(θ)| is
/// Lipschitz in θ with constant Σ_j x_j |j − mean| (the spread about the mean,
/// in grid steps), so |X(θ_k)| ≤ |X̂(2πm'/m)| + ρ_m + |θ_k − 2πm'/m|·spread at the
/// nearest coarse frequency m'. nullopt when too many remain for direct sums.
std::optional<std::vector<std::size_t>> candidates(const Prepared& prep, std::size_t n,
                                                   double bound_log) {
  const std::size_t h = n / 2 + 1;
  std::size_t widest = 1;
  for (const auto& x : prep.losses) widest = std::max(widest, x.mass.size());
  // Direct sums cost (#candidates)·(release size): keep that below ~2e8.
  const std::size_t limit = std::min(n / 64, std::max<std::size_t>(256, 200'000'000 / widest));
  struct Coarse {
    std::vector<double> modulus;
    std::size_t m;
    double rho, spread, t;
    /// Bound on |X(2πk/n)| from the nearest coarse frequency.
    double bound(std::size_t k, std::size_t n_fine) const {
      const double exact =
          static_cast<double>(k) * static_cast<double>(m) / static_cast<double>(n_fine);
      const auto near = static_cast<std::size_t>(std::llround(exact));
      const std::size_t idx = near <= m / 2 ? near : m - near;  // conjugate mirror
      const double dist = 2 * std::numbers::pi * std::abs(exact - static_cast<double>(near)) /
                          static_cast<double>(m);
      return modulus[idx] + rho + dist * spread;
    }
  };
  std::vector<Coarse> coarse;
  for (std::size_t c = 0; c < prep.losses.size(); ++c) {
    const auto& x = prep.losses[c].mass;
    const std::size_t m = fft::good_size(x.size());
    if (2 * m >= n) return std::nullopt;  // no cheaper than the full transform
    double norm1 = 0, first = 0;
    for (std::size_t j = 0; j < x.size(); ++j) {
      norm1 += x[j];
      first += x[j] * static_cast<double>(j);
    }
    const double mean = norm1 > 0 ? first / norm1 : 0;
    double spread = 0;
    for (std::size_t j = 0; j < x.size(); ++j)
      spread += x[j] * std::abs(static_cast<double>(j) - mean);
    const auto spectrum = fft::forward(x, m);
    std::vector<double> modulus(spectrum.size());
    for (std::size_t i = 0; i < spectrum.size(); ++i) modulus[i] = std::abs(spectrum[i]);
    coarse.push_back({std::move(modulus), m, fft_gamma(m) * norm1 + 4 * kU,
                      spread * (1 + 1e-9) + 1e-12, prep.counts[c]});
  }
  // Every survivor k has T_c·log|X_ck| ≥ bound_log for each c (all terms are
  // ≤ 0). For the release with the fewest, list the fine k of each coarse bin
  // whose worst-case bound (at the bin edge) reaches e^{bound_log/T_c}.
  std::vector<std::size_t> best;
  bool have_best = false;
  for (const Coarse& cs : coarse) {
    const double threshold = std::exp(bound_log / cs.t);
    const double edge = std::numbers::pi / static_cast<double>(cs.m) * cs.spread;
    std::vector<std::size_t> list;
    for (std::size_t bin = 0; bin <= cs.m / 2; ++bin) {
      if (cs.modulus[bin] + cs.rho + edge < threshold) continue;
      // Fine k whose nearest coarse frequency is `bin`.
      const double lo =
          (static_cast<double>(bin) - 0.5) * static_cast<double>(n) / static_cast<double>(cs.m);
      const double hi =
          (static_cast<double>(bin) + 0.5) * static_cast<double>(n) / static_cast<double>(cs.m);
      const auto k_lo = static_cast<std::size_t>(std::max(0.0, std::floor(lo)));
      const auto k_hi = std::min(h - 1, static_cast<std::size_t>(std::ceil(hi)));
      for (std::size_t k = k_lo; k <= k_hi; ++k) {
        if (!list.empty() && k <= list.back()) continue;
        if (cs.bound(k, n) >= threshold) list.push_back(k);
      }
      if (have_best && list.size() >= best.size()) break;
      if (list.size() > 4 * limit) break;
    }
    if (!have_best || list.size() < best.size()) {
      best = std::move(list);
      have_best = true;
    }
  }
  if (best.size() > 4 * limit) return std::nullopt;
  std::vector<std::size_t> out;
  for (std::size_t k : best) {
    double log_bound = 0;
    for (const Coarse& cs : coarse) {
      const double bound = cs.bound(k, n);
      if (bound < 1) log_bound += cs.t * std::log(bound);
    }
    if (log_bound >= bound_log) out.push_back(k);
  }
  if (out.size() > limit) return std::nullopt;
  return out;
}

ComposedLoss compose_impl(std::span<const Component> components, Direction d, double interval,
                          double tail_mass, double window_tail, std::size_t max_grid) {
  const Prepared prep = prepare(components, d, interval, tail_mass, max_grid);
  const double log_tail = std::log(window_tail);
  // Window [a, b] (in loss), each side's Chernoff bound ≤ window_tail.
  double a = -kInf, b = kInf;
  for (std::size_t i = 0; i < prep.lambdas.size(); ++i) {
    b = std::min(b, (prep.psi_up[i] - log_tail) / prep.lambdas[i]);
    a = std::max(a, -(prep.psi_down[i] - log_tail) / prep.lambdas[i]);
  }
  std::int64_t k_a = prep.first, k_b = prep.last;
  if (std::isfinite(a) && a / interval > static_cast<double>(prep.first))
    k_a = static_cast<std::int64_t>(std::floor(a / interval));
  if (std::isfinite(b) && b / interval < static_cast<double>(prep.last))
    k_b = static_cast<std::int64_t>(std::ceil(b / interval));
  k_b = std::max(k_b, k_a);
  // The window may exceed max_grid when only a few Fourier coefficients are
  // needed (spectral form, no array of the window); 2^32 keeps the integer
  // phase reductions k·j mod N exact in 64 bits.
  if (static_cast<double>(k_b - k_a) + 1 > 4294967296.0)
    throw GridTooLarge("pld: composed grid exceeds the limit");
  const std::size_t n = fft::good_size(static_cast<std::size_t>(k_b - k_a + 1));

  // (4) Π_c X_c^{T_c} in log-polar form; (5) round-off terms.
  const std::size_t h = n / 2 + 1;
  const double gamma =
      8 * std::ceil(std::log2(static_cast<double>(std::max<std::size_t>(n, 2)))) * kU;
  // (5) Componentwise: |X̂_ck − X_ck| ≤ ρ_c = γ_N·‖x_c‖₁ (each of the log₂N
  // butterfly stages adds a relative error ≤ 8u to partial sums whose moduli
  // add up to at most ‖x‖₁). The perturbation of Z_k = Π_c X_ck^{T_c} is then
  // ≤ Σ_c T_c ρ_c (r_ck + ρ_c)^{T_c − 1} Π_{c'≠c} (r_c'k + ρ_c')^{T_c'} (r =
  // computed modulus, clamped to the unit disc, which holds the true value).
  // Coefficients whose bound (r + ρ)^T is below e^{−50} are set to 0; each
  // such error is < e^{−50}, at most √N·e^{−50} in ‖·‖₂ all together.
  constexpr double kNegligible = -50;
  struct Survivor {
    std::size_t k, idx;  // frequency, position in the candidate list
    double log_r, theta, log_r_pert, pert_sum;
  };
  std::vector<Survivor> alive;
  double rho_total = 0;
  // Many compositions leave few coefficients: compute only those (directly);
  // otherwise one full forward transform per release.
  const auto cand = candidates(prep, n, kNegligible);
  if (!cand && n > max_grid) throw GridTooLarge("pld: composed grid exceeds the limit");
  for (std::size_t c = 0; c < prep.losses.size(); ++c) {
    const auto& x = prep.losses[c];
    const double t = prep.counts[c];
    double norm1 = 0;
    for (double v : x.mass) norm1 += v;
    const double rho = (cand ? direct_gamma(x.mass.size()) : gamma) * norm1;
    rho_total += t * rho;
    const auto spectrum = cand ? direct_dft(x.mass, n, *cand) : fft::forward(x.mass, n);
    auto update = [&](Survivor& s) {
      const std::complex<double> v = spectrum[cand ? s.idx : s.k];
      const double r = std::min(std::abs(v), 1.0);
      const double rp = std::min(r + rho, 1.0);
      s.log_r += r > 0 ? t * std::log(r) : -kInf;
      s.theta = std::remainder(s.theta + std::remainder(t * std::arg(v), 2 * std::numbers::pi),
                               2 * std::numbers::pi);
      s.log_r_pert += t * std::log(rp);
      s.pert_sum += t * rho / rp;
      return s.log_r_pert >= kNegligible;
    };
    if (c == 0) {
      const std::size_t count = cand ? cand->size() : h;
      for (std::size_t i = 0; i < count; ++i) {
        Survivor s{cand ? (*cand)[i] : i, i, 0, 0, 0, 0};
        if (update(s)) alive.push_back(s);
      }
    } else {
      std::erase_if(alive, [&](Survivor& s) { return !update(s); });
    }
  }
  double z_norm2 = 0, dz_norm2 = 0;
  auto weight = [&](std::size_t k) {  // the Hermitian mirror counts twice
    return (k == 0 || (n % 2 == 0 && k == h - 1)) ? 1.0 : 2.0;
  };
  std::vector<std::complex<double>> z_alive(alive.size());
  for (std::size_t i = 0; i < alive.size(); ++i) {
    const Survivor& s = alive[i];
    const double dz = std::exp(s.log_r_pert) * s.pert_sum;
    dz_norm2 += weight(s.k) * dz * dz;
    if (s.log_r < -740) continue;
    z_alive[i] = std::polar(std::exp(s.log_r), s.theta);
    z_norm2 += weight(s.k) * std::norm(z_alive[i]);
  }
  const double z_norm = std::sqrt(z_norm2);
  const double dz_norm = std::sqrt(dz_norm2) + std::sqrt(static_cast<double>(n)) *
                                                   std::exp(kNegligible) * (1 + rho_total);
  const double power_rel = 8 * kU * (760 + std::numbers::pi * prep.total_count);
  // Σ_j |ŷ_j − y_j| ≤ ‖Ẑ − Z‖₂ (Parseval), plus the error of the last step.
  double roundoff = dz_norm + power_rel * z_norm + 4 * kU;

  const auto nn = static_cast<std::int64_t>(n);
  // Circular position p holds loss index ≡ prep.first + p (mod n); the window
  // starts at k_a, so y_j (loss (k_a + j)Δ) is circular position j + shift.
  const std::int64_t shift = (((k_a - prep.first) % nn) + nn) % nn;
  ComposedLoss out;
  if (alive.size() * 32 <= n || n > max_grid) {
    // Few coefficients left (many compositions): keep the spectrum and read δ
    // from it directly, y_j = Σ_k Re(c_k e^{2πi kj/N}) with
    // c_k = w_k Z_k e^{2πi k·shift/N} / N — no inverse transform.
    std::vector<std::size_t> freq(alive.size());
    std::vector<std::complex<double>> coef(alive.size());
    double coef_sum = 0;
    for (std::size_t i = 0; i < alive.size(); ++i) {
      const std::size_t k = alive[i].k;
      const auto turn = static_cast<std::int64_t>(
          (static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(shift)) %
          static_cast<std::uint64_t>(n));
      const double phase =
          2 * std::numbers::pi * static_cast<double>(turn) / static_cast<double>(n);
      freq[i] = k;
      coef[i] = z_alive[i] * std::polar(weight(k) / static_cast<double>(n), phase);
      coef_sum += std::abs(coef[i]);
    }
    out = ComposedLoss::spectral(interval, k_a, n, std::move(freq), std::move(coef));
    // Evaluating Σ_k Re(c_k (A_k − B_k)) with |A_k|, |B_k| ≤ N: ≤ 64u·N·Σ|c_k|.
    roundoff += 64 * kU * static_cast<double>(n) * coef_sum;
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
  const std::int64_t k_top = k_a + nn - 1;
  out.alias_above = k_top >= prep.last
                        ? 0.0
                        : std::exp(prep.log_tail_above(static_cast<double>(k_top + 1) * interval));
  out.alias_below = k_a <= prep.first
                        ? 0.0
                        : std::exp(prep.log_tail_below(static_cast<double>(k_a - 1) * interval));
  double log_finite = 0, var = 0;
  for (std::size_t c = 0; c < prep.losses.size(); ++c) {
    log_finite += prep.counts[c] * std::log1p(-std::min(prep.losses[c].dropped_mass, 1.0));
    var += prep.counts[c] * prep.losses[c].split_variance;
  }
  out.infinite_mass = -std::expm1(log_finite);
  out.variance = var * interval * interval;
  const double beta = 0.5 * std::pow(interval / 2 + interval * interval / 12, 2);
  out.bias = prep.total_count * beta;
  out.releases = static_cast<std::size_t>(prep.total_count);
  return out;
}

}  // namespace

DiscreteLoss discretise(const Mechanism& m, Direction d, double interval, double tail_mass) {
  if (!(interval > 0)) throw InvalidParameter("pld_interval", "must be positive");
  return discretise_impl(m, d, interval, tail_mass, std::size_t{1} << 26);
}

double exact_delta(const Mechanism& m, Direction d, double epsilon) {
  // δ(ε) = P(X > ε) − e^ε Q(X > ε)   (Meiser & Mohammadi 2018, Lemma 5 form)
  const Model model(m);
  const auto [p, q] = model.at(epsilon, d);
  return std::max(0.0, p.sf() - std::exp(epsilon) * q.sf());
}

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

ComposedLoss ComposedLoss::spectral(double step, std::int64_t first, std::size_t period,
                                    std::vector<std::size_t> frequencies,
                                    std::vector<std::complex<double>> coefficients) {
  ComposedLoss out;
  out.interval = step;
  out.first_index = first;
  out.period_ = period;
  out.freq_ = std::move(frequencies);
  out.coef_ = std::move(coefficients);
  const double one_minus_decay = -std::expm1(-step);
  const double decay = std::exp(-step);
  for (std::size_t k : out.freq_) {
    const double theta =
        2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(period);
    const double s_half = std::sin(theta / 2), s_full = std::sin(theta);
    // 1 − e^{iθ} and 1 − e^{iθ − Δ}, without cancellation.
    out.one_minus_rot_.emplace_back(2 * s_half * s_half, -s_full);
    out.one_minus_damped_.emplace_back(one_minus_decay + decay * 2 * s_half * s_half,
                                       -decay * s_full);
  }
  return out;
}

double ComposedLoss::spectral_delta(double epsilon) const {
  // δ = Σ_{j ≥ j0} y_j (1 − c·e^{−Δ(j − j0)}), j0 the first index with l_j > ε,
  // c = e^{ε − l_{j0}}, M = N − j0 terms. Per coefficient (θ = 2πk/N, e^{iθN} = 1):
  //   A = Σ_{j=j0}^{N−1} e^{iθj} = (e^{iθ j0} − 1)/(1 − e^{iθ})          (k ≠ 0; A = M for k = 0)
  //   B = c Σ_j e^{iθj} e^{−Δ(j−j0)} = c (e^{iθ j0} − e^{−ΔM})/(1 − e^{iθ−Δ}).
  const auto n = static_cast<std::int64_t>(period_);
  const double pos = epsilon / interval - static_cast<double>(first_index);
  std::int64_t j0 = 0;
  if (pos >= 0) {
    if (pos >= static_cast<double>(n)) return 0;
    j0 = static_cast<std::int64_t>(std::floor(pos)) + 1;
  }
  if (j0 >= n) return 0;
  const double l0 = static_cast<double>(first_index + j0) * interval;
  const double c = std::exp(epsilon - l0);
  const auto m = static_cast<double>(n - j0);
  const double tail = std::exp(-interval * m);  // e^{−ΔM}
  double sum = 0;
  for (std::size_t i = 0; i < freq_.size(); ++i) {
    const std::uint64_t k = freq_[i];
    std::complex<double> a_minus_b;
    if (k == 0) {
      a_minus_b = m - c * (-std::expm1(-interval * m)) / (-std::expm1(-interval));
    } else {
      const auto turn = (k * static_cast<std::uint64_t>(j0)) % static_cast<std::uint64_t>(n);
      const double phi = 2 * std::numbers::pi * static_cast<double>(turn) / static_cast<double>(n);
      const double sh = std::sin(phi / 2), ch = std::cos(phi / 2);
      const std::complex<double> e0m1(-2 * sh * sh, 2 * sh * ch);  // e^{iφ} − 1
      const std::complex<double> e0 = e0m1 + 1.0;
      a_minus_b = e0m1 / one_minus_rot_[i] - c * (e0 - tail) / one_minus_damped_[i];
    }
    sum += (coef_[i] * a_minus_b).real();
  }
  return std::max(sum, 0.0);
}

double ComposedLoss::grid_delta(double epsilon) const {
  if (period_ > 0) return spectral_delta(epsilon);
  if (mass.empty()) return 0;
  // Terms with l_i > ε: i ≥ first i with l_i > ε.
  const double pos = epsilon / interval - static_cast<double>(first_index);
  std::size_t i;
  if (pos < 0)
    i = 0;
  else if (pos >= static_cast<double>(mass.size()))
    return 0;
  else
    i = static_cast<std::size_t>(std::floor(pos)) + 1;
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
    for (int it = 0; it < 200 && hi - lo > 1e-13 * std::max(1.0, std::abs(hi)); ++it) {
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
  const double big_l = std::log(1 / eta);
  const double m = big_l * interval / 3;
  return bias + m + std::sqrt(m * m + 2 * big_l * variance);
}

namespace {
constexpr double kEtaFractions[] = {0.3, 0.1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5, 1e-6};
double summation_factor(std::size_t n) { return 4 * static_cast<double>(n) * kU; }
}  // namespace

double ComposedLoss::delta_upper(double epsilon) const {
  if (releases == 0) return 0;
  const double d = grid_delta(epsilon) * (1 + summation_factor(mass.size()));
  return std::min(1.0, d + infinite_mass + alias_above + roundoff);
}

double ComposedLoss::delta_lower(double epsilon) const {
  if (releases == 0) return 0;
  const double base = grid_delta(epsilon);
  double best = 0;
  for (double f : kEtaFractions) {
    const double eta = f * std::max(base, 1e-300);
    const double d = grid_delta(epsilon + deviation(eta)) * (1 - summation_factor(mass.size())) -
                     eta - alias_below - roundoff;
    best = std::max(best, d);
  }
  return std::min(best, 1.0);
}

double ComposedLoss::epsilon_upper(double delta) const {
  if (releases == 0) return 0;
  const double d =
      delta / (1 + summation_factor(mass.size())) - infinite_mass - alias_above - roundoff;
  return std::max(0.0, grid_epsilon(d, true));
}

double ComposedLoss::epsilon_lower(double delta) const {
  if (releases == 0) return 0;
  double best = 0;
  for (double f : kEtaFractions) {
    const double eta = f * delta;
    const double d = (delta + eta + alias_below + roundoff) / (1 - summation_factor(mass.size()));
    best = std::max(best, grid_epsilon(d, false) - deviation(eta));
  }
  return best;
}

ComposedLoss compose(std::span<const Component> components, Direction d, double interval,
                     double tail_mass, double window_tail) {
  if (!(interval > 0)) throw InvalidParameter("pld_interval", "must be positive");
  if (components.empty()) {
    ComposedLoss id(interval, 0, {1.0});
    return id;
  }
  return compose_impl(components, d, interval, tail_mass, window_tail, std::size_t{1} << 26);
}

namespace {

/// Merges equal mechanisms, drops zero counts; reports whether every loss is
/// symmetric (q = 1: both directions have the same PLD).
std::vector<Component> normalise(std::span<const Component> components, bool& symmetric) {
  std::vector<Component> out;
  symmetric = true;
  for (const auto& c : components) {
    if (c.count < 0) throw InvalidParameter("count", "must be non-negative");
    if (c.count == 0) continue;
    Model check(c.mechanism);  // validates
    (void)check;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Component& o) { return o.mechanism == c.mechanism; });
    if (it != out.end())
      it->count += c.count;
    else
      out.push_back(c);
    if (c.mechanism.sampling != 1) symmetric = false;
  }
  return out;
}

enum class Query { epsilon, delta };

Interval refine(std::span<const Component> raw, Query query, double value, const Options& options) {
  bool symmetric = true;
  const std::vector<Component> comps = normalise(raw, symmetric);
  Interval result;
  if (comps.empty()) {
    result.notes.push_back("pld: nothing composed");
    return result;  // ε = 0, δ = 0
  }
  double total = 0;
  for (const auto& c : comps) total += static_cast<double>(c.count);
  // Tail mass put at +∞ and window tail: small against the δ in question.
  const double scale = query == Query::epsilon ? value : 1e-10;
  const double tail_mass = std::clamp(1e-5 * scale / (2 * total), 1e-300, 1e-12);
  const double window_tail = std::clamp(1e-5 * scale, 1e-300, 1e-10);

  double interval = options.interval > 0 ? options.interval : 1e-3;
  bool have = false;
  double floor = 0;    // δ error terms that do not shrink with Δ
  double shifted = 0;  // δ query: upper δ at ε·(1 + tolerance)
  for (int round = 0;; ++round) {
    Interval now;
    try {
      // The two directions are independent: the add direction runs on a
      // second thread when there is one.
      auto run = [&](Direction d) {
        return compose_impl(comps, d, interval, tail_mass, window_tail, options.max_grid);
      };
      std::future<ComposedLoss> add;
      if (!symmetric) add = std::async(std::launch::async, run, Direction::add);
      std::vector<ComposedLoss> done;
      done.push_back(run(Direction::remove));
      if (add.valid()) done.push_back(add.get());
      double lo = 0, up = 0;
      std::size_t grid = 0;
      floor = 0;
      shifted = 0;
      for (const ComposedLoss& c : done) {
        floor = std::max(floor, c.infinite_mass + c.alias_above + c.alias_below + 2 * c.roundoff);
        grid = std::max(grid, c.grid_points());
        if (query == Query::epsilon) {
          lo = std::max(lo, c.epsilon_lower(value));
          up = std::max(up, c.epsilon_upper(value));
        } else {
          lo = std::max(lo, c.delta_lower(value));
          up = std::max(up, c.delta_upper(value));
          // δ at ε(1 + tolerance): what an ε interval of the target width means for δ.
          const double tol = std::max(options.tolerance, 0.0);
          shifted = std::max(shifted, c.delta_upper(value > 0 ? value * (1 + tol) : tol));
        }
      }
      now.lower = std::min(lo, up);
      now.upper = up;
      now.interval = interval;
      now.grid = grid;
      now.refinements = round + 1;
    } catch (const GridTooLarge&) {
      if (!have) {
        // Not even the first grid fits: no certified bound but the trivial one.
        result.lower = 0;
        result.upper = query == Query::epsilon ? kInf : 1;
        result.converged = false;
        result.notes.push_back(
            "pld: the grid for this event exceeds the size limit; no finite bound from pld");
        return result;
      }
      result.converged = false;
      result.notes.push_back("pld: grid size limit reached before the interval width target");
      return result;
    }
    const double previous_width = have ? result.upper - result.lower : kInf;
    result = now;
    have = true;
    if (!std::isfinite(result.upper)) {
      result.converged = false;
      result.notes.push_back(
          "pld: delta is below the round-off and truncation floor of the accountant; "
          "no finite upper bound on epsilon");
      return result;
    }
    const double width = result.upper - result.lower;
    // ε: relative width. δ: the width an ε interval of that relative width
    // gives (δ(ε) − δ(ε(1 + tolerance))), or the relative width if larger.
    double target = options.tolerance * result.upper;
    if (query == Query::delta) target = std::max(target, result.upper - shifted);
    if (options.tolerance <= 0 || width <= target) return result;
    if (width > 0.75 * previous_width || (query == Query::delta && floor >= 0.5 * target)) {
      // A finer grid no longer helps: the width comes from the terms that do
      // not shrink with Δ (round-off, truncated tails, window), e.g. a δ far
      // below 1e-10.
      result.converged = false;
      result.notes.push_back(
          "pld: interval width limited by round-off and truncation terms, not by the grid");
      return result;
    }
    // The width is close to proportional to Δ (the coupling term (3) dominates,
    // a little less than linearly on coarse grids): aim at 70% of the target;
    // shrink Δ by at least 1/4 and at most 1024-fold per round.
    const double ratio = target / width;
    interval *= std::clamp(0.7 * ratio, 1.0 / 1024, 0.75);
  }
}

}  // namespace

Interval epsilon_interval(std::span<const Component> components, double delta,
                          const Options& options) {
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  return refine(components, Query::epsilon, delta, options);
}

Interval delta_interval(std::span<const Component> components, double epsilon,
                        const Options& options) {
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    throw InvalidParameter("epsilon", "must be a finite number >= 0");
  return refine(components, Query::delta, epsilon, options);
}

}  // namespace dpb::pld
