#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/pld/pld.hpp"
#include "accounting/pld/random_allocation.hpp"

namespace dpb {

/// Tight accountant with privacy loss distributions (docs/pld.md#privacy-loss): keeps the
/// composed releases and, on each query, discretises, composes by FFT and
/// reports ε (or δ) as a sound interval, refining the grid until the interval
/// is narrower than `PldSettings::tolerance` relative to its upper end.
class PldAccountant final : public Accountant {
 public:
  explicit PldAccountant(const AccountantOptions& options);
  std::string_view name() const override { return "pld"; }
  std::optional<std::string> unsupported_reason(const DpEvent& event) const override;
  void compose(const DpEvent& event, std::int64_t count = 1) override;
  Guarantee epsilon(double delta) const override;
  Guarantee delta(double epsilon) const override;

  /// The trade-off curves of the composed pair: TPR as [lower, upper] at each
  /// FPR (pld::tradeoff_interval), the advantage as δ(0)'s interval.
  AttackBounds attack_bounds(std::span<const double> fprs) const override;

  const std::vector<pld::Component>& components() const { return components_; }

 private:
  Guarantee make_guarantee(const pld::Interval& interval) const;
  /// The relation `event` is planned under here, or why it cannot be composed
  /// with what is held.
  std::pair<std::optional<Neighbouring>, std::optional<std::string>> relation_for(
      const DpEvent& event) const;
  /// The relation the guarantees state.
  Neighbouring stated_relation() const;

  pld::Options options_;
  /// The relation asked for; nullopt: inferred from the sampled events
  /// (`inferred_`), add/remove when none fixes one.
  std::optional<Neighbouring> relation_;
  /// The relation that a sampled event composed so far fixed (replace_one for
  /// sampled_without_replacement, add_remove for the other sampled kinds), when
  /// relation_ is nullopt; `unfixed_` when releases planned under add/remove by
  /// default (no sampled event yet) are held.
  std::optional<Neighbouring> inferred_;
  bool unfixed_ = false;
  /// The composed releases and how often each runs.
  std::vector<pld::Component> components_;
  /// The same with each release's attained pair where it differs
  /// (PldTerm::lower): the list composed for the lower ends.
  std::vector<pld::Component> lower_components_;
  bool distinct_lower_ = false;
  /// The terms' notes (PldTerm::note), each once.
  std::vector<std::string> notes_;
  /// Epochs of random allocation by (steps, σ): discretised at query time
  /// into a pessimistic list for the upper bounds and an optimistic one for
  /// the lower bounds (random_allocation.hpp), remembered by resolution.
  std::map<std::pair<std::int64_t, double>, std::int64_t> allocations_;
  /// Whether every pair composed so far is attained by neighbouring datasets
  /// of its mechanism (LowerEnd): then the interval's lower end bounds the
  /// run from below; otherwise it is the accuracy of the upper end.
  bool attained_ = true;

  /// The component lists of the upper and of the lower bounds.
  std::pair<std::vector<pld::Component>, std::vector<pld::Component>> bounds_lists() const;
};

}  // namespace dpb
