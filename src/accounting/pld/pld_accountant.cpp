#include "accounting/pld/pld_accountant.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/events/event_walk.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/pld/pld_planner.hpp"
#include "accounting/pld/random_allocation.hpp"
#include "accounting/risk/attack_risk.hpp"

namespace dpb {
namespace {

using detail::pld_plan;
using detail::PldTerm;

/// The loss resolution asked of a random-allocation epoch (its upper and
/// lower losses differ by about twice this, and the errors of E epochs add
/// up) is the accountant's tolerance over the number of epochs, within these
/// limits: finer than 1e-5 the grid limit decides anyway, coarser than 1e-2
/// the interval says little (random_allocation.hpp).
constexpr double kFinestAllocationResolution = 1e-5;
constexpr double kCoarsestAllocationResolution = 1e-2;

}  // namespace

PldAccountant::PldAccountant(const AccountantOptions& options) : relation_(options.neighbouring) {
  options_.interval = options.pld.interval;
  options_.tolerance = options.pld.tolerance;
  options_.share_releases = options.pld.share_releases;
  if (!(options_.interval >= 0) || !std::isfinite(options_.interval))
    throw InvalidParameter("pld_interval", "must be >= 0 (0 = automatic)");
  if (!std::isfinite(options_.tolerance))
    throw InvalidParameter("pld_tolerance", "must be a finite number");
}

std::pair<std::optional<Neighbouring>, std::optional<std::string>> PldAccountant::relation_for(
    const DpEvent& event) const {
  if (relation_) return {relation_, std::nullopt};
  // Inferred (docs/sampling.md#relations): sampled_without_replacement fixes
  // replace_one, the other sampled events add_remove; unsampled releases hold
  // under the relation fixed, so they are planned under it (a Gaussian's
  // sensitivity is 2 under replace_one).
  const Relations r = pld_plan(event, std::nullopt).relations;
  const char* mixed =
      "pld: cannot compose poisson_sampled or random_allocation (add/remove neighbouring) with "
      "sampled_without_replacement (replace-one neighbouring) without a relation chosen: choose "
      "neighbouring add_remove or replace_one";
  if (r.mixed()) return {std::nullopt, std::string(mixed)};
  if (r.replace_one) {
    if (inferred_ == Neighbouring::add_remove) return {std::nullopt, std::string(mixed)};
    if (unfixed_)
      return {std::nullopt,
              std::string("pld: sampled_without_replacement (replace-one neighbouring) after "
                          "releases already composed under add_remove: choose neighbouring "
                          "replace_one")};
    return {Neighbouring::replace_one, std::nullopt};
  }
  if (r.add_remove && inferred_ == Neighbouring::replace_one)
    return {std::nullopt, std::string(mixed)};
  return {inferred_, std::nullopt};
}

Neighbouring PldAccountant::stated_relation() const {
  return relation_.value_or(inferred_.value_or(Neighbouring::add_remove));
}

std::optional<std::string> PldAccountant::unsupported_reason(const DpEvent& event) const {
  const auto [relation, why] = relation_for(event);
  if (why) return why;
  return pld_plan(event, relation).refusal;
}

void PldAccountant::compose(const DpEvent& event, std::int64_t count) {
  const auto [relation, why] = relation_for(event);
  if (why) throw UnsupportedEvent(*why);
  const Plan<PldTerm> plan = pld_plan(event, relation);
  if (plan.refusal) throw UnsupportedEvent(*plan.refusal);
  if (count <= 0) return;
  if (!relation_) {
    if (plan.relations.replace_one) inferred_ = Neighbouring::replace_one;
    if (plan.relations.add_remove) inferred_ = Neighbouring::add_remove;
    if (!inferred_ && !plan.terms.empty()) unfixed_ = true;
  }
  attained_ = attained_ && plan.attained;
  for (const auto& [term, n] : plan.terms) {
    if (n <= 0) continue;
    const std::int64_t times = checked_count_product(count, n);
    attained_ = attained_ && term.attained;
    if (term.mechanism) {
      components_.push_back({*term.mechanism, times});
      lower_components_.push_back({term.lower.value_or(*term.mechanism), times});
      distinct_lower_ = distinct_lower_ || term.lower.has_value();
    }
    if (!term.note.empty() && std::find(notes_.begin(), notes_.end(), term.note) == notes_.end())
      notes_.push_back(term.note);
    for (const auto& a : term.allocations) {
      std::int64_t& total = allocations_[{a.steps, a.noise_multiplier}];
      if (__builtin_add_overflow(total, checked_count_product(times, a.count), &total))
        throw InvalidParameter("count", "composed count overflows");
    }
  }
}

namespace {

/// Random-allocation PLDs are costly (an FFT of millions of points) and pure:
/// the last few are remembered for the process, shared by every accountant
/// (plot points and solvers make one accountant per run).
std::shared_ptr<const RandomAllocationPlds> allocation_plds(std::int64_t steps, double sigma,
                                                            double resolution) {
  using Key = std::tuple<std::int64_t, double, double>;
  constexpr std::size_t kRemembered = 8;  // ~50 MiB of atoms at most
  static std::mutex mutex;
  static std::deque<std::pair<Key, std::shared_ptr<const RandomAllocationPlds>>> cache;
  const Key key{steps, sigma, resolution};
  {
    std::lock_guard lock(mutex);
    for (const auto& [k, v] : cache)
      if (k == key) return v;
  }
  auto made = std::make_shared<const RandomAllocationPlds>(
      random_allocation_plds(steps, sigma, resolution));
  std::lock_guard lock(mutex);
  if (cache.size() == kRemembered) cache.pop_back();
  cache.emplace_front(key, made);
  return made;
}

}  // namespace

std::pair<std::vector<pld::Component>, std::vector<pld::Component>> PldAccountant::bounds_lists()
    const {
  std::vector<pld::Component> upper = components_, lower = lower_components_;
  for (const auto& [key, epochs] : allocations_) {
    // Discretised now that the total count of each (t, σ) is known, so that a
    // count written as self_composed or as a list of copies is the same.
    const double wanted =
        options_.tolerance > 0
            ? std::clamp(options_.tolerance / static_cast<double>(epochs),
                         kFinestAllocationResolution, kCoarsestAllocationResolution)
            : kCoarsestAllocationResolution;
    // Rounded down to a power of two (finer, never coarser), so that runs of
    // nearby lengths (plot points, the steps solver) share one discretisation.
    const double resolution = std::exp2(std::floor(std::log2(wanted)));
    const auto plds = allocation_plds(key.first, key.second, resolution);
    upper.push_back({plds->upper, epochs});
    lower.push_back({plds->lower, epochs});
  }
  return {std::move(upper), std::move(lower)};
}

Guarantee PldAccountant::make_guarantee(const pld::Interval& interval) const {
  Guarantee g;
  g.accountant = "pld";
  g.bound = BoundKind::upper;
  g.neighbouring = stated_relation();
  g.details.emplace_back("pld_interval", interval.interval);
  g.add_count("pld_grid_size", static_cast<std::int64_t>(interval.grid));
  g.add_count("pld_refinements", interval.refinements);
  g.lower_end = attained_ ? LowerEnd::lower_bound : LowerEnd::accuracy;
  g.notes = interval.notes;
  g.notes.insert(g.notes.end(), notes_.begin(), notes_.end());
  return g;
}

Guarantee PldAccountant::epsilon(double delta) const {
  if (allocations_.empty() && !distinct_lower_) {
    const pld::Interval r = pld::epsilon_interval(components_, delta, options_);
    Guarantee g = make_guarantee(r);
    g.epsilon = r.upper;
    g.epsilon_lower = r.lower;
    g.delta = delta;
    return g;
  }
  const auto [upper, lower] = bounds_lists();
  const pld::Interval r = pld::epsilon_interval(upper, delta, options_);
  Guarantee g = make_guarantee(r);
  g.epsilon = r.upper;
  g.epsilon_lower = pld::epsilon_interval(lower, delta, options_).lower;
  g.delta = delta;
  return g;
}

AttackBounds PldAccountant::attack_bounds(std::span<const double> fprs) const {
  check_fprs(fprs);
  const auto [upper, lower] = bounds_lists();
  const pld::TradeoffInterval t = pld::tradeoff_interval(upper, lower, fprs, options_);
  AttackBounds out;
  out.accountant = "pld";
  out.neighbouring = stated_relation();
  out.fpr.assign(fprs.begin(), fprs.end());
  out.tpr = t.tpr_upper;
  out.tpr_lower = t.tpr_lower;
  out.advantage = t.advantage_upper;
  out.advantage_lower = t.advantage_lower;
  out.lower_end = attained_ ? LowerEnd::lower_bound : LowerEnd::accuracy;
  out.details.emplace_back("pld_interval", t.interval);
  out.notes = t.notes;
  out.notes.insert(out.notes.end(), notes_.begin(), notes_.end());
  return out;
}

Guarantee PldAccountant::delta(double epsilon) const {
  if (allocations_.empty() && !distinct_lower_) {
    const pld::Interval r = pld::delta_interval(components_, epsilon, options_);
    Guarantee g = make_guarantee(r);
    g.epsilon = epsilon;
    g.delta = r.upper;
    g.delta_lower = r.lower;
    return g;
  }
  const auto [upper, lower] = bounds_lists();
  const pld::Interval r = pld::delta_interval(upper, epsilon, options_);
  Guarantee g = make_guarantee(r);
  g.epsilon = epsilon;
  g.delta = r.upper;
  g.delta_lower = pld::delta_interval(lower, epsilon, options_).lower;
  return g;
}

}  // namespace dpb
