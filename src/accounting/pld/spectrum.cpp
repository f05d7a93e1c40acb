// Stages (4) and (5) of the PLD method (internal.hpp), few-coefficient
// path: after many compositions only a few Fourier coefficients of the
// composed loss are not negligible. They are located from a transform of each
// release at its own size plus a Lipschitz bound (candidates), computed by
// direct sums (direct_dft), and δ(ε) is read from them in closed form
// (ComposedLoss::spectral_delta), with no transform or array of the window.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <numbers>

#include "accounting/numerics/fft.hpp"
#include "accounting/pld/internal.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::pld {
namespace detail {
namespace {

/// Terms per block of direct_dft(): the block shares one twiddle table and
/// one block factor (a speed choice: the error does not depend on it).
constexpr std::size_t kDirectBlock = 64;
/// Release::dft_at() remembers at most this many coefficients per release
/// (16 bytes each and a map node: a few MiB).
constexpr std::size_t kRememberedCoefficients = std::size_t{1} << 16;
/// Release::transform() remembers a transform of at most this many points
/// (16 MiB of coefficients; with at most 8 releases remembered, 128 MiB).
constexpr std::size_t kRememberedTransformPoints = std::size_t{1} << 21;
/// direct_dft() sums this many frequencies in one pass (a speed choice).
constexpr std::size_t kDirectLanes = 4;
/// Release::direct_error(), in units of u (docs/pld.md#round-off): a table
/// term x_j·(w_r − 1) (w − 1 from minus_one() within 13u of |w − 1|), the
/// block's plain sum of 64 of them (63u of the moduli summed), carried through
/// the block factor b = 1 + (b − 1) (within 29u), per unit of Σ x_j|w_r − 1| ...
constexpr double kTableUlps = 145;
/// ... and the block's (b − 1)·Σ x_j (its plain sum within 63u), per unit of
/// Σ x_j|b − 1|, with the compensated sum over blocks.
constexpr double kBlockUlps = 85;
/// Release::direct_error(): margin over the error count above.
constexpr double kDirectGammaMargin = 1.2;
/// candidates(): direct sums cost (#candidates)·(release size); at most this
/// many multiply-adds per release (a fraction of a second).
constexpr std::size_t kDirectSumBudget = 200'000'000;
/// candidates(): allow at least this many, however wide the release.
constexpr std::size_t kMinCandidates = 256;
/// candidates(): at most N / kCandidateDivisor, beyond which the full
/// transform is cheaper.
constexpr std::size_t kCandidateDivisor = 64;
/// candidates(): the per-bin scan may list up to this multiple of the limit
/// before the per-frequency bound prunes it.
constexpr std::size_t kCandidateSlack = 4;
/// candidates(): the coarse moduli |X̂| carry this many u of rounding (on top
/// of the transform's γ_m·‖x‖₁).
constexpr double kModulusUlps = 4;
/// candidates(): the computed spread (the Lipschitz constant) is rounded up by
/// far more than its own round-off, relatively and absolutely.
constexpr double kSpreadRelMargin = 1e-9;
constexpr double kSpreadAbsMargin = 1e-12;
/// spectral_form(): evaluating Σ_k Re(c_k (A_k − B_k)) with |A_k|, |B_k| ≤ N
/// is within kSpectralEvalUlps·u·N·Σ|c_k|.
constexpr double kSpectralEvalUlps = 64;

/// e^{−2πi·turn/n} − 1 without cancellation: −2sin²(θ/2) − 2i·sin(θ/2)cos(θ/2),
/// θ = 2π·turn/n reduced to (−π, π] in integers; within 13u of |w − 1|.
std::complex<double> minus_one(std::uint64_t turn, std::uint64_t n) {
  const auto t = static_cast<std::int64_t>(turn % n);
  const std::int64_t centred =
      2 * static_cast<std::uint64_t>(t) > n ? t - static_cast<std::int64_t>(n) : t;
  const double half = std::numbers::pi * (static_cast<double>(centred) / static_cast<double>(n));
  const double sh = std::sin(half), ch = std::cos(half);
  return {-2 * sh * sh, -2 * sh * ch};
}

}  // namespace

/// |Ŷ_k − Y_k| of direct_dft() (docs/pld.md#round-off). With φ = 2πk/n and
/// r < kDirectBlock the place in a block of points `stride` apart,
/// |w_r − 1| ≤ min(φ·stride·r, 2) and the block factor's
/// |b − 1| ≤ min(φ|j − centre| + φ·stride·kDirectBlock, 2): the fine part
/// with stride 1, the coarse points (mass coarse_mass) with the loss's stride.
double Release::direct_error(std::size_t k, std::size_t n) const {
  const double phi = 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
  const double block = static_cast<double>(kDirectBlock);
  const double wide = block * static_cast<double>(loss.stride);
  const double table =
      std::min(phi * block, 2.0) * total_mass + std::min(phi * wide, 2.0) * coarse_mass;
  const double spread =
      std::min(phi * (centre_spread + block * total_mass + wide * coarse_mass), 2 * total_mass);
  return kDirectGammaMargin * (kTableUlps * table + kBlockUlps * spread) * kU;
}

std::vector<Segment> segments_of(const DiscreteLoss& x) {
  const std::size_t size = x.mass.size(), s = x.stride;
  if (s <= 1) return {{0, 1, size}};
  // Coarse points below the fine part: 0, s, …, fine_begin − s; above it:
  // fine_end − 1 + s, …, size − 1 (discretise_cdf aligns both).
  return {{0, s, x.fine_begin / s},
          {x.fine_begin, 1, x.fine_end - x.fine_begin},
          {x.fine_end - 1 + s, s, (size - x.fine_end) / s}};
}

/// Y_k = Σ_j x_j (e^{−2πi k(j − c)/n} − 1), c = centre, over the segments'
/// points: per block of kDirectBlock of them, starting at j = p and `stride`
/// apart, with b = e^{−2πi k(p − c)/n} and w_r = e^{−2πi k·stride·r/n},
/// Σ_r x_r (b·w_r − 1) = b·Σ_r x_r (w_r − 1) + (b − 1)·Σ_r x_r;
/// every w − 1 is computed without cancellation and every sum with
/// compensation, so that the error is relative to Σ x_j |w − 1| (small at the
/// low frequencies that survive many compositions), not to Σ x_j.
std::vector<std::complex<double>> direct_dft(const std::vector<double>& x, std::size_t n,
                                             const std::vector<std::size_t>& ks,
                                             std::int64_t centre,
                                             std::span<const Segment> segments) {
  const auto un = static_cast<std::uint64_t>(n);
  const auto nn = static_cast<std::int64_t>(n);
  // k·(s − c) mod n for a signed s − c (|k|, |s − c| < 2^32: no overflow).
  auto turn_of = [&](std::uint64_t k, std::int64_t offset) {
    const std::int64_t t = static_cast<std::int64_t>(k % un) * (offset % nn) % nn;
    return static_cast<std::uint64_t>(t < 0 ? t + nn : t);
  };
  std::vector<std::complex<double>> out(ks.size());
  double table_re[kDirectLanes][kDirectBlock], table_im[kDirectLanes][kDirectBlock];
  // kDirectLanes frequencies at a time: one pass over x feeds independent
  // sums (the additions of one sum wait for each other; those of several do
  // not). Each frequency's sums are the same operations in the same order as
  // one at a time.
  for (std::size_t first = 0; first < ks.size(); first += kDirectLanes) {
    const std::size_t lanes = std::min(kDirectLanes, ks.size() - first);
    Compensated total_re[kDirectLanes], total_im[kDirectLanes];
    for (const Segment& seg : segments) {
      if (seg.count == 0) continue;
      for (std::size_t l = 0; l < kDirectLanes; ++l)
        for (std::size_t r = 0; r < kDirectBlock; ++r) {
          // Unused lanes sum zeros (and are not read). k·stride·r < 2^64: k, r·stride < 2^32.
          const std::complex<double> w =
              l < lanes
                  ? minus_one(static_cast<std::uint64_t>(ks[first + l]) * (r * seg.stride) % un, un)
                  : 0.0;
          table_re[l][r] = w.real();
          table_im[l][r] = w.imag();
        }
      const std::size_t blocks = (seg.count + kDirectBlock - 1) / kDirectBlock;
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t from = b * kDirectBlock, to = std::min(seg.count, from + kDirectBlock);
        const std::size_t start = seg.begin + from * seg.stride;
        // Plain sums within the block: their error is relative to Σ x_j|w_r − 1|,
        // small at low frequencies (kTableUlps); compensated across blocks.
        double re[kDirectLanes] = {}, im[kDirectLanes] = {}, mass = 0;
        for (std::size_t r = 0; r < to - from; ++r) {
          const double v = x[start + r * seg.stride];
          mass += v;
          for (std::size_t l = 0; l < kDirectLanes; ++l) {
            re[l] += v * table_re[l][r];
            im[l] += v * table_im[l][r];
          }
        }
        for (std::size_t l = 0; l < lanes; ++l) {
          const std::uint64_t turn =
              turn_of(ks[first + l], static_cast<std::int64_t>(start) - centre);
          const std::complex<double> b_minus_one = minus_one(turn, un);
          const std::complex<double> part =
              (b_minus_one + 1.0) * std::complex<double>(re[l], im[l]) + b_minus_one * mass;
          total_re[l].add(part.real());
          total_im[l].add(part.imag());
        }
      }
    }
    for (std::size_t l = 0; l < lanes; ++l)
      out[first + l] = {total_re[l].total(), total_im[l].total()};
  }
  return out;
}

const CoarseSpectrum& Release::coarse() const {
  std::call_once(coarse_once_, [this] {
    // With coarse tails, the transform of the fine part alone; the coarse
    // points change |X| by at most their mass (coarse_mass, added to ρ).
    const bool fine_only = loss.stride > 1;
    const std::vector<double> fine =
        fine_only
            ? std::vector<double>(loss.mass.begin() + static_cast<std::ptrdiff_t>(loss.fine_begin),
                                  loss.mass.begin() + static_cast<std::ptrdiff_t>(loss.fine_end))
            : std::vector<double>{};
    const auto& x = fine_only ? fine : loss.mass;
    // Any size gives a sound bound (the transform folds x modulo m); one near
    // the release's length keeps the Lipschitz term small. A power of two, so
    // that releases of similar length (the two directions) share one FFTW plan.
    const std::size_t m = std::bit_ceil(std::max<std::size_t>(x.size(), 1));
    double norm1 = 0, first = 0;
    for (std::size_t j = 0; j < x.size(); ++j) {
      norm1 += x[j];
      first += x[j] * static_cast<double>(j);
    }
    const double mean = norm1 > 0 ? first / norm1 : 0;
    double spread = 0;
    for (std::size_t j = 0; j < x.size(); ++j)
      spread += x[j] * std::abs(static_cast<double>(j) - mean);
    coarse_.modulus = fft::forward_modulus(x, m);
    coarse_.m = m;
    coarse_.rho = fft_gamma(m) * norm1 + kModulusUlps * kU + (fine_only ? coarse_mass : 0.0);
    coarse_.spread = spread * (1 + kSpreadRelMargin) + kSpreadAbsMargin;
  });
  return coarse_;
}

std::vector<std::complex<double>> Release::dft_at(std::size_t n,
                                                  std::span<const std::size_t> ks) const {
  std::vector<std::complex<double>> out(ks.size());
  std::vector<std::size_t> missing, where;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < ks.size(); ++i) {
      const auto it = dft_.find({n, ks[i]});
      if (it != dft_.end()) {
        out[i] = it->second;
      } else {
        missing.push_back(ks[i]);
        where.push_back(i);
      }
    }
  }
  if (missing.empty()) return out;
  // Each X_k is a function of (x, n, k) alone: the same value whichever list
  // it is computed in, and whichever thread computes it first.
  const auto values = direct_dft(loss.mass, n, missing, centre, segments_of(loss));
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < missing.size(); ++i) {
    out[where[i]] = values[i];
    if (dft_.size() < kRememberedCoefficients) dft_.emplace(std::pair{n, missing[i]}, values[i]);
  }
  return out;
}

std::shared_ptr<const std::vector<std::complex<double>>> Release::transform(std::size_t n) const {
  {
    std::lock_guard lock(mutex_);
    if (transform_ && transform_->size() == n / 2 + 1 && transform_n_ == n) return transform_;
  }
  auto t = std::make_shared<const std::vector<std::complex<double>>>(fft::forward(loss.mass, n));
  if (n > kRememberedTransformPoints) return t;
  std::lock_guard lock(mutex_);
  transform_ = t;
  transform_n_ = n;
  return t;
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
  for (const auto& r : prep.releases) widest = std::max(widest, r->terms);
  // Direct sums cost (#candidates)·(release size): keep that below ~2e8.
  const std::size_t limit = std::min(
      n / kCandidateDivisor, std::max<std::size_t>(kMinCandidates, kDirectSumBudget / widest));
  struct Coarse {
    const CoarseSpectrum& s;
    double t;
    /// Bound on |X(2πk/n)| from the nearest coarse frequency.
    double bound(std::size_t k, std::size_t n_fine) const {
      const std::size_t m = s.m;
      const double exact =
          static_cast<double>(k) * static_cast<double>(m) / static_cast<double>(n_fine);
      const auto near = static_cast<std::size_t>(std::llround(exact));
      const std::size_t idx = near <= m / 2 ? near : m - near;  // conjugate mirror
      const double dist = 2 * std::numbers::pi * std::abs(exact - static_cast<double>(near)) /
                          static_cast<double>(m);
      return s.modulus[idx] + s.rho + dist * s.spread;
    }
  };
  std::vector<Coarse> coarse;
  for (std::size_t c = 0; c < prep.releases.size(); ++c) {
    // No cheaper than the full transform: decided on the release's length
    // rounded to a fast size, whatever size its coarse transform has.
    const DiscreteLoss& x = prep.loss(c);
    const std::size_t coarse_size = x.stride > 1 ? x.fine_end - x.fine_begin : x.mass.size();
    if (2 * fft::good_size(coarse_size) >= n) return std::nullopt;
    coarse.push_back({prep.releases[c]->coarse(), prep.counts[c]});
  }
  // Every survivor k has T_c·log|X_ck| ≥ bound_log for each c (all terms are
  // ≤ 0). For the release with the fewest, list the fine k of each coarse bin
  // whose worst-case bound (at the bin edge) reaches e^{bound_log/T_c}.
  std::vector<std::size_t> best;
  bool have_best = false;
  for (const Coarse& cs : coarse) {
    const double threshold = std::exp(bound_log / cs.t);
    const double edge = std::numbers::pi / static_cast<double>(cs.s.m) * cs.s.spread;
    std::vector<std::size_t> list;
    for (std::size_t bin = 0; bin <= cs.s.m / 2; ++bin) {
      if (cs.s.modulus[bin] + cs.s.rho + edge < threshold) continue;
      // Fine k whose nearest coarse frequency is `bin`.
      const double lo =
          (static_cast<double>(bin) - 0.5) * static_cast<double>(n) / static_cast<double>(cs.s.m);
      const double hi =
          (static_cast<double>(bin) + 0.5) * static_cast<double>(n) / static_cast<double>(cs.s.m);
      const auto k_lo = static_cast<std::size_t>(std::max(0.0, std::floor(lo)));
      const auto k_hi = std::min(h - 1, static_cast<std::size_t>(std::ceil(hi)));
      for (std::size_t k = k_lo; k <= k_hi; ++k) {
        if (!list.empty() && k <= list.back()) continue;
        if (cs.bound(k, n) >= threshold) list.push_back(k);
      }
      if (have_best && list.size() >= best.size()) break;
      if (list.size() > kCandidateSlack * limit) break;
    }
    if (!have_best || list.size() < best.size()) {
      best = std::move(list);
      have_best = true;
    }
  }
  if (best.size() > kCandidateSlack * limit) return std::nullopt;
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
ComposedLoss spectral_form(double interval, std::int64_t k_a, std::size_t n, std::int64_t shift,
                           std::span<const std::size_t> ks, std::span<const std::complex<double>> z,
                           double& roundoff) {
  // y_j = Σ_k Re(c_k e^{2πi kj/N}) with c_k = w_k Z_k e^{2πi k·shift/N} / N.
  std::vector<std::size_t> freq(ks.size());
  std::vector<std::complex<double>> coef(ks.size());
  double coef_sum = 0;
  for (std::size_t i = 0; i < ks.size(); ++i) {
    const std::size_t k = ks[i];
    const auto turn = static_cast<std::int64_t>(
        (static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(shift)) %
        static_cast<std::uint64_t>(n));
    const double phase = 2 * std::numbers::pi * static_cast<double>(turn) / static_cast<double>(n);
    freq[i] = k;
    coef[i] = z[i] * std::polar(hermitian_weight(k, n) / static_cast<double>(n), phase);
    coef_sum += std::abs(coef[i]);
  }
  ComposedLoss out = ComposedLoss::spectral(interval, k_a, n, std::move(freq), std::move(coef));
  roundoff += kSpectralEvalUlps * kU * static_cast<double>(n) * coef_sum;
  return out;
}

}  // namespace detail

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

double ComposedLoss::spectral_delta(double epsilon, bool weighted) const {
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
  // Unweighted (the tail Σ_{j ≥ j0} y_j): c = 0, B = 0.
  const double c = weighted ? std::exp(epsilon - l0) : 0.0;
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

}  // namespace dpb::pld
