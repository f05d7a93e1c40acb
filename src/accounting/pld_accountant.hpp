#pragma once
#include <optional>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/pld.hpp"

namespace dpb {

/// Tight accountant with privacy loss distributions (SPEC §7): keeps the
/// composed releases and, on each query, discretises, composes by FFT and
/// reports ε (or δ) as a sound interval, refining the grid until the interval
/// is narrower than `pld_tolerance` relative to its upper end.
class PldAccountant final : public Accountant {
 public:
  explicit PldAccountant(const AccountantOptions& options);
  std::string_view name() const override { return "pld"; }
  std::optional<std::string> unsupported_reason(const DpEvent& event) const override;
  void compose(const DpEvent& event, std::int64_t count = 1) override;
  Guarantee epsilon(double delta) const override;
  Guarantee delta(double epsilon) const override;

  const std::vector<pld::Component>& components() const { return components_; }

 private:
  Guarantee make_guarantee(const pld::Interval& interval) const;

  pld::Options options_;
  std::optional<Neighbouring> relation_;    ///< nullopt: inferred (add/remove here)
  std::vector<pld::Component> components_;  ///< what the upper bounds are computed from
  /// What the lower bounds are computed from: the same, but for random
  /// allocation, whose optimistic discretisation differs (`split_`).
  std::vector<pld::Component> lower_components_;
  bool split_ = false;
};

}  // namespace dpb
