// Stage (6) of the PLD method (internal.hpp): the refinement loop. Both
// directions are composed on a grid Δ (docs/pld.md#directions: the result is the max over
// both), Δ shrinks until the interval [lower, upper] meets the tolerance, and
// the loop stops with a note when the grid limit or the Δ-independent error
// terms are reached.
#include <algorithm>
#include <cmath>
#include <future>
#include <optional>
#include <utility>

#include "accounting/errors.hpp"
#include "accounting/pld/internal.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::pld {
namespace {

using detail::compose_impl;
using detail::GridTooLarge;
using detail::kInf;
using detail::kTinyProbability;

/// The tails put at +∞ and the window's folded tails take this share of the δ
/// in question, so they never dominate the interval width.
constexpr double kTailShare = 1e-5;
/// Round-off above this share of the δ in question (where it starts to count
/// against the tolerance) is reduced with direct
/// sums where they are affordable (compose_impl's roundoff_target).
constexpr double kRoundoffShare = 1e-3;
/// A δ query does not know its δ: its tails are sized for a δ of this size.
constexpr double kDeltaQueryScale = 1e-10;
/// Ceilings on the tail mass per release end and on the window tail, even for
/// a large δ: truncation stays far below what the refinement fights.
constexpr double kMaxTailMass = 1e-12;
constexpr double kMaxWindowTail = 1e-10;
/// First Δ when none is given: cheap, and usually one or two refinements from
/// the default tolerance.
constexpr double kFirstInterval = 1e-3;
/// A round that does not shrink the width to below this share of the previous
/// one shows that the Δ-independent terms dominate: stop. (Δ shrinks by at
/// least kMinShrink = 3/4 per round, and the width at least as much while the
/// grid decides it.)
constexpr double kMinProgress = 0.9;
/// δ query: stop once the Δ-independent terms take this share of the target.
constexpr double kMaxFloorShare = 0.5;
/// Each round aims at this share of the target width, shrinking Δ by at least
/// 1/4 and at most 1024-fold.
constexpr double kAimShare = 0.7;
constexpr double kMaxShrink = 1.0 / 1024;
constexpr double kMinShrink = 0.75;

/// Coarse tails (docs/pld.md#coarse-tails): the strides tried, widest first
/// (2 and 4 save too little to pay for a wider interval), each with a fine
/// part holding all but kCoarseTailShares[i]/stride² of a release's P-mass at
/// each end (largest first: a smaller share suits shorter runs) ...
constexpr std::size_t kCoarseStrides[] = {256, 128, 64, 32, 16, 8};
constexpr double kCoarseTailShares[] = {1.0 / 16,   1.0 / 64,   1.0 / 256,
                                        1.0 / 1024, 1.0 / 4096, 1.0 / 16384};
/// ... those whose K releases allowed in coarse buckets add at most this share
/// to the second-order bound's variance TΔ²/4, K(s² − 1) ≤ share·T (Δ then
/// shrinks by at most ~10% more to meet the same width) ...
constexpr double kCoarseVarianceShare = 0.25;

/// ... and of those the one with the fewest points (the fine part's span plus
/// the coarse span over the stride, summed over releases and directions), if
/// it has at most this share of one fine grid's (else the wider interval is
/// not worth it).
constexpr double kCoarseMinSaving = 0.5;

/// One release kind that may get coarse tails, in one direction, and the
/// span of its one fine grid (loss units).
struct SpanTerm {
  const Mechanism* mechanism;
  Direction direction;
  double whole;
};

/// The spans of the grids of `comps` (both directions) with one fine grid,
/// for the kinds that may get coarse tails (the others have the same span
/// either way, so they are left out).
std::vector<SpanTerm> fine_spans(std::span<const Component> comps, double tail_mass) {
  std::vector<SpanTerm> out;
  for (const auto& comp : comps)
    for (const Direction d : {Direction::remove, Direction::add})
      if (const auto all = detail::coarse_range(comp.mechanism, d, tail_mass))
        out.push_back({&comp.mechanism, d, all->second - all->first});
  return out;
}

/// Their span with coarse tails c: the fine part plus the rest over the
/// stride (what discretisation and direct sums cost; Δ cancels).
double coarse_span(std::span<const SpanTerm> terms, Coarsening c) {
  double span = 0;
  for (const SpanTerm& t : terms) {
    const auto fine = detail::coarse_range(*t.mechanism, t.direction, c.tail);
    const double part = std::clamp(fine->second - fine->first, 0.0, t.whole);
    span += part + (t.whole - part) / static_cast<double>(c.stride);
  }
  return span;
}

/// The coarse tails for `total` releases (none when no pair qualifies, e.g.
/// short runs, or saves too little), K chosen as compose_impl() will
/// (P(N > K) ≤ window_tail), from the bound 2·tail on each release's chance of
/// a coarse bucket.
Coarsening coarsening_for(std::span<const Component> comps, double total, double tail_mass,
                          double window_tail) {
  const std::vector<SpanTerm> terms = fine_spans(comps, tail_mass);
  double fine = 0;
  for (const SpanTerm& t : terms) fine += t.whole;
  Coarsening best;
  double best_span = kCoarseMinSaving * fine;
  for (std::size_t stride : kCoarseStrides) {
    const double s = static_cast<double>(stride);
    for (double share : kCoarseTailShares) {
      const double tail = share / (s * s);
      if (!(tail > tail_mass)) continue;
      const double k = detail::coarse_count_bound(2 * tail * total, total, window_tail).first;
      if (!(k * (s * s - 1) <= kCoarseVarianceShare * total)) continue;
      const Coarsening c{stride, tail};
      const double span = coarse_span(terms, c);
      if (span < best_span) {
        best = c;
        best_span = span;
      }
    }
  }
  return best;
}

/// Merges equal mechanisms, drops zero counts; reports whether every loss is
/// symmetric (q = 1: both directions have the same PLD).
std::vector<Component> normalise(std::span<const Component> components, bool& symmetric) {
  std::vector<Component> out;
  symmetric = true;
  for (const auto& c : components) {
    if (c.count < 0) throw InvalidParameter("count", "must be non-negative");
    if (c.count == 0) continue;
    detail::validate(c.mechanism);
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Component& o) { return o.mechanism == c.mechanism; });
    if (it != out.end())
      it->count += c.count;
    else
      out.push_back(c);
    if (!pld::symmetric(c.mechanism)) symmetric = false;
  }
  return out;
}

enum class Query { epsilon, delta };

/// Tail mass put at +∞ per release end, and the window tail: small against
/// the δ in question (`total` releases).
/// With `share` (Options::share_releases) the tail mass is rounded down to a
/// power of two (a smaller tail is only more accurate), so that runs of
/// nearby lengths discretise each release identically and share it
/// (tail_window.cpp remembers releases).
std::pair<double, double> tails(double total, Query query, double value, bool share) {
  const double scale = query == Query::epsilon ? value : kDeltaQueryScale;
  double tail = std::clamp(kTailShare * scale / (2 * total), kTinyProbability, kMaxTailMass);
  if (share) tail = std::max(kTinyProbability, std::exp2(std::floor(std::log2(tail))));
  return {tail, std::clamp(kTailShare * scale, kTinyProbability, kMaxWindowTail)};
}

/// The answer that needs no grid, if any: nothing composed (ε = 0, δ = 0),
/// or a release with loss +∞ for certain (non_private, or (ε, δ) with δ = 1):
/// ε = ∞ and δ = 1 exactly.
std::optional<Interval> without_grid(const std::vector<Component>& comps, Query query) {
  Interval result;
  if (comps.empty()) {
    result.notes.push_back("pld: nothing composed");
    return result;  // ε = 0, δ = 0
  }
  for (const auto& c : comps) {
    if (infinite_mass(c.mechanism, Direction::remove) >= 1 ||
        infinite_mass(c.mechanism, Direction::add) >= 1) {
      result.lower = result.upper = query == Query::epsilon ? kInf : 1.0;
      result.notes.push_back(
          "pld: a release without a privacy guarantee (non_private): epsilon is infinite");
      return result;
    }
  }
  return std::nullopt;
}

/// (6) The interval read off the directions composed on one grid, end by end
/// the larger of the two; `floor` receives the δ error terms that do not
/// shrink with Δ, and `shifted` (δ query) the upper δ at ε·(1 + tolerance).
Interval read_directions(const std::vector<ComposedLoss>& done, Query query, double value,
                         const Options& options, double& floor, double& shifted) {
  Interval now;
  double lo = 0, up = 0;
  std::size_t grid = 0;
  floor = 0;
  shifted = 0;
  for (const ComposedLoss& c : done) {
    floor = std::max(floor, c.infinite_mass - c.certain_infinite_mass + c.alias_above +
                                c.alias_below + 2 * c.roundoff);
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
  now.grid = grid;
  return now;
}

/// `composed`, when given, receives the composed loss of each direction on
/// the grid of the returned interval (remove first), for further reading.
Interval refine(std::span<const Component> raw, Query query, double value, const Options& options,
                std::vector<ComposedLoss>* composed = nullptr) {
  bool symmetric = true;
  const std::vector<Component> comps = normalise(raw, symmetric);
  Interval result;
  if (std::optional<Interval> known = without_grid(comps, query)) return *known;
  double total = 0;
  for (const auto& c : comps) total += static_cast<double>(c.count);
  // (Named copies, not a structured binding: clang 14 cannot capture one.)
  const auto tail = tails(total, query, value, options.share_releases);
  const double tail_mass = tail.first, window_tail = tail.second;
  // Round-off above this share of the δ in question is worth direct sums.
  const double roundoff_target =
      kRoundoffShare * (query == Query::epsilon ? value : kDeltaQueryScale);
  const Coarsening coarsening = coarsening_for(comps, total, tail_mass, window_tail);

  double interval = options.interval > 0 ? options.interval : kFirstInterval;
  bool have = false;
  double floor = 0;    // δ error terms that do not shrink with Δ
  double shifted = 0;  // δ query: upper δ at ε·(1 + tolerance)
  for (int round = 0;; ++round) {
    Interval now;
    try {
      // The two directions are independent: the add direction runs on a
      // second thread when there is one.
      auto run = [&](Direction d) {
        return compose_impl(comps, d, interval, tail_mass, window_tail, options.max_grid,
                            options.share_releases, roundoff_target, coarsening);
      };
      std::future<ComposedLoss> add;
      if (!symmetric) add = std::async(std::launch::async, run, Direction::add);
      std::vector<ComposedLoss> done;
      done.push_back(run(Direction::remove));
      if (add.valid()) done.push_back(add.get());
      now = read_directions(done, query, value, options, floor, shifted);
      now.interval = interval;
      now.refinements = round + 1;
      if (composed) *composed = std::move(done);
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
    if (!std::isfinite(result.lower)) {
      // Both ends infinite: δ is below the mass the events put at +∞.
      result.notes.push_back(
          "pld: epsilon is infinite: the events put more than delta of their privacy loss at "
          "+inf (an epsilon_delta event's delta, or a loss that is infinite with positive "
          "probability)");
      return result;
    }
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
    if (width > kMinProgress * previous_width ||
        (query == Query::delta && floor >= kMaxFloorShare * target)) {
      // A finer grid no longer helps: the width comes from the terms that do
      // not shrink with Δ (round-off, truncated tails, window), e.g. a δ far
      // below 1e-10.
      result.converged = false;
      result.notes.push_back(
          "pld: interval width limited by round-off and truncation terms, not by the grid");
      return result;
    }
    // The width shrinks like Δ where the first-order coupling bound decides
    // the lower end and like Δ² where the second-order one does
    // (docs/pld.md#second-order-lower-bound): shrink Δ by the square root of
    // the ratio (aiming at 70% of the target), which never overshoots into a
    // needlessly fine, costly grid; a width linear in Δ takes one more,
    // cheaper, round. At least 1/4 and at most 1024-fold per round.
    const double ratio = target / width;
    interval *= std::clamp(std::sqrt(kAimShare * ratio), kMaxShrink, kMinShrink);
  }
}

}  // namespace

TradeoffInterval tradeoff_interval(std::span<const Component> upper,
                                   std::span<const Component> lower, std::span<const double> fprs,
                                   const Options& options) {
  TradeoffInterval out;
  // The advantage is δ(0) (the total variation distance); its refinement
  // chooses the grid, and the curves are read from its composed losses.
  std::vector<ComposedLoss> dirs;
  const Interval adv = refine(upper, Query::delta, 0, options, &dirs);
  out.advantage_upper = adv.upper;
  out.advantage_lower = adv.lower;
  out.interval = adv.interval;
  out.grid = adv.grid;
  out.notes = adv.notes;
  const bool same = std::equal(upper.begin(), upper.end(), lower.begin(), lower.end(),
                               [](const Component& a, const Component& b) {
                                 return a.count == b.count && a.mechanism == b.mechanism;
                               });
  std::vector<ComposedLoss> lower_dirs;
  if (!same) {
    // The optimistic list on its own grid: the lower bounds hold on any grid.
    const Interval low = refine(lower, Query::delta, 0, options, &lower_dirs);
    out.advantage_lower = std::min(low.lower, adv.upper);
  }
  out.tpr_upper.assign(fprs.size(), 1.0);
  out.tpr_lower.assign(fprs.begin(), fprs.end());
  if (adv.upper <= 0) {  // nothing composed (or only no-ops): no test beats guessing
    out.tpr_upper.assign(fprs.begin(), fprs.end());
    return out;
  }
  if (adv.lower >= 1) {  // non-private: every test can be perfect
    out.tpr_lower.assign(fprs.size(), 1.0);
    return out;
  }
  if (dirs.empty()) return out;  // no grid fitted: the trivial bounds (with the note)
  out.tpr_upper = detail::tpr_upper(dirs, fprs);
  const std::vector<ComposedLoss>& member = same ? dirs : lower_dirs;
  if (!member.empty()) out.tpr_lower = detail::tpr_lower(member.front(), fprs);
  for (std::size_t i = 0; i < fprs.size(); ++i)
    out.tpr_lower[i] = std::min(out.tpr_lower[i], out.tpr_upper[i]);
  return out;
}

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
