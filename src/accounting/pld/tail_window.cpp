// Stage (4) of the PLD method (internal.hpp), its window: Chernoff bounds
// on the composed discrete loss, P(S ≥ b) ≤ e^{−λb} Π_c M_c(λ)^{T_c}, with
// each M_c bounded on blocks of the release's grid. They choose the window
// that the circular convolution keeps and bound the mass it folds in.
#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>

#include "accounting/pld/internal.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::pld::detail {
namespace {

/// At most this many Chernoff blocks per release: ψ(λ) costs one pass over
/// them per λ, and the chord bound stays tight to second order in their width.
constexpr std::size_t kChernoffBlocks = 2048;
/// The λ of the Chernoff bounds: 10^{i/8} for i = −16 … 24, i.e. λ from 0.01
/// to 1000 at 8 per decade; the bound is a minimum over them, so any λ is sound.
constexpr int kLambdaFirst = -16;
constexpr int kLambdaLast = 24;
constexpr double kLambdasPerDecade = 8.0;

std::vector<Block> blocks_of(const DiscreteLoss& x) {
  const std::size_t per = std::max<std::size_t>(1, x.mass.size() / kChernoffBlocks);
  std::vector<Block> out;
  auto loss = [&](std::size_t i) {
    return static_cast<double>(x.first_index + static_cast<std::int64_t>(i)) * x.interval;
  };
  for (std::size_t i = 0; i < x.mass.size(); i += per) {
    const std::size_t j = std::min(x.mass.size(), i + per);
    double s = 0, first_moment = 0;
    std::size_t first = j, last = i;  // the block's first and last point with mass
    for (std::size_t k = i; k < j; ++k) {
      if (!(x.mass[k] > 0)) continue;
      s += x.mass[k];
      first_moment += x.mass[k] * static_cast<double>(k - i);
      first = std::min(first, k);
      last = k;
    }
    if (s > 0) {
      // The chord spans the points with mass only (tighter, and the zeros
      // between coarse points (docs/pld.md#coarse-tails) do not widen it).
      const double lo = loss(first), hi = loss(last);
      const double mean = std::clamp(loss(i) + first_moment / s * x.interval, lo, hi);
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

}  // namespace

double Prepared::log_tail_above(double x) const {
  double best = 0;
  for (std::size_t i = 0; i < lambdas.size(); ++i)
    best = std::min(best, -lambdas[i] * x + psi_up[i]);
  return best;
}

double Prepared::log_tail_below(double x) const {
  double best = 0;
  for (std::size_t i = 0; i < lambdas.size(); ++i)
    best = std::min(best, lambdas[i] * x + psi_down[i]);
  return best;
}

namespace {

/// centre_of(): the spread, a sum of non-negative terms, is rounded up by this
/// share (its round-off is at most n·u of it, n ≤ 2^26).
constexpr double kSpreadMargin = 1e-7;
/// Releases are remembered for the process: the points of a series (whose
/// tail masses Options::share_releases rounds to a power of two, and whose
/// grids follow their neighbour's) ask for the same release again; other
/// queries seldom do, and then an entry costs only its memory. At most
/// kRememberedReleases entries, and only releases of at most
/// kRememberedPoints points (a few MiB each).
constexpr std::size_t kRememberedReleases = 8;
constexpr std::size_t kRememberedPoints = std::size_t{1} << 20;

/// Release::centre, centre_spread and total_mass (docs/pld.md#round-off):
/// the rounded mean index, Σ_j x_j |j − centre| rounded up by far more than
/// its round-off, and Σ_j x_j with compensation; coarse_mass, the mass of the
/// coarse points rounded up likewise, and terms.
void centre_of(Release& r) {
  const auto& x = r.loss.mass;
  Compensated sum;
  double first = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    sum.add(x[j]);
    first += x[j] * static_cast<double>(j);
  }
  r.total_mass = sum.total();
  r.centre = r.total_mass > 0 ? std::llround(first / r.total_mass) : 0;
  double spread = 0;
  for (std::size_t j = 0; j < x.size(); ++j)
    spread += x[j] * std::abs(static_cast<double>(static_cast<std::int64_t>(j) - r.centre));
  r.centre_spread = spread * (1 + kSpreadMargin);
  double coarse = 0;
  r.terms = 0;
  for (const Segment& seg : segments_of(r.loss)) {
    r.terms += seg.count;
    if (seg.stride == 1) continue;
    for (std::size_t i = 0; i < seg.count; ++i) coarse += x[seg.begin + i * seg.stride];
  }
  r.coarse_mass = coarse * (1 + kSpreadMargin);
}

std::shared_ptr<const Release> release(const Mechanism& m, Direction d, double interval,
                                       double tail_mass, std::size_t max_points,
                                       Coarsening coarsening, const std::vector<double>& lambdas) {
  struct Entry {
    Mechanism m;
    Direction d;
    double interval, tail_mass;
    std::size_t max_points;
    Coarsening coarsening;
    std::shared_ptr<const Release> value;
  };
  static std::mutex mutex;
  static std::deque<Entry> cache;
  {
    std::lock_guard lock(mutex);
    for (const auto& e : cache)
      if (e.d == d && e.interval == interval && e.tail_mass == tail_mass &&
          e.max_points == max_points && e.coarsening == coarsening && e.m == m)
        return e.value;
  }
  auto r = std::make_shared<Release>();
  r->loss = discretise_impl(m, d, interval, tail_mass, max_points, coarsening);
  centre_of(*r);
  r->blocks = blocks_of(r->loss);
  for (double lambda : lambdas) {
    r->mgf_up.push_back(log_mgf(r->blocks, lambda));
    r->mgf_down.push_back(log_mgf(r->blocks, -lambda));
  }
  if (r->loss.mass.size() <= kRememberedPoints) {
    std::lock_guard lock(mutex);
    if (cache.size() == kRememberedReleases) cache.pop_back();
    cache.push_front({m, d, interval, tail_mass, max_points, coarsening, r});
  }
  return r;
}

}  // namespace

Prepared prepare(std::span<const Component> components, Direction d, double interval,
                 double tail_mass, std::size_t max_points, Coarsening coarsening) {
  Prepared p;
  for (int i = kLambdaFirst; i <= kLambdaLast; ++i)
    p.lambdas.push_back(std::pow(10.0, i / kLambdasPerDecade));
  p.psi_up.assign(p.lambdas.size(), 0.0);
  p.psi_down.assign(p.lambdas.size(), 0.0);
  for (const auto& c : components) {
    auto r = release(c.mechanism, d, interval, tail_mass, max_points, coarsening, p.lambdas);
    p.counts.push_back(static_cast<double>(c.count));
    const auto& x = r->loss;
    p.first += c.count * x.first_index;
    p.last += c.count * (x.first_index + static_cast<std::int64_t>(x.mass.size()) - 1);
    p.total_count += static_cast<double>(c.count);
    for (std::size_t i = 0; i < p.lambdas.size(); ++i) {
      p.psi_up[i] += p.counts.back() * r->mgf_up[i];
      p.psi_down[i] += p.counts.back() * r->mgf_down[i];
    }
    p.releases.push_back(std::move(r));
  }
  return p;
}

std::pair<std::int64_t, std::int64_t> window(const Prepared& prep, double interval,
                                             double window_tail) {
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
  return {k_a, k_b};
}

}  // namespace dpb::pld::detail
