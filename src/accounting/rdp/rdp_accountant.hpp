#pragma once
#include <optional>
#include <vector>

#include "accounting/accountant.hpp"

namespace dpb {

/// The moments accountant: keeps the composed RDP curve ρ(α) on a fixed set of
/// orders (RDP composes additively, Mironov 2017 Prop. 1) and converts it to
/// (ε, δ) on demand (docs/rdp.md#conversion).
class RdpAccountant final : public Accountant {
 public:
  explicit RdpAccountant(const AccountantOptions& options);
  std::string_view name() const override { return "rdp"; }
  std::optional<std::string> unsupported_reason(const DpEvent& event) const override;
  void compose(const DpEvent& event, std::int64_t count = 1) override;
  Guarantee epsilon(double delta) const override;
  Guarantee delta(double epsilon) const override;
  /// The trade-off implied by every order at once (tpr_bound_rdp), with the
  /// extra δ of epsilon_delta events; the advantage is δ at ε = 0.
  AttackBounds attack_bounds(std::span<const double> fprs) const override;
  /// docs/rdp.md#steps-closed-form: T = max_α ⌊(ε − c(α)) / ρ(α)⌋, c(α) the conversion term.
  std::optional<std::int64_t> largest_count_hint(const DpEvent& step, double epsilon,
                                                 double delta) const override;

  const std::vector<double>& orders() const { return orders_; }
  const std::vector<double>& curve() const;
  /// Whether epsilon_delta events put a δ outside the curve (then the curve
  /// alone is not the composition's guarantee).
  bool has_extra_delta() const { return log1m_extra_delta_ != 0; }

 private:
  /// Adds extra_delta (and a note) to `g` when epsilon_delta events hold some.
  void add_extra_delta(Guarantee& g) const;
  /// Adds a pending run (below) to the curves.
  void settle() const;

  /// T steps of one Poisson-sampled Gaussian composed first and alone, not
  /// yet added to the curves: epsilon() evaluates only the orders that can
  /// win; every other use settles it first.
  struct PendingSteps {
    double q, sigma, term_count, compose_count;
  };
  mutable std::optional<PendingSteps> pending_;
  bool composed_ = false;  ///< anything composed yet

  std::vector<double> orders_;
  /// The composed curve under neighbouring_ (one of the two below).
  mutable std::vector<double> rdp_;
  /// Everything composed, read under add/remove and under replace-one. A
  /// poisson_sampled event fixes add/remove, a sampled_without_replacement
  /// event fixes replace-one (docs/sampling.md#relations); mixing them is refused.
  mutable std::vector<double> rdp_add_remove_;
  std::vector<double> rdp_replace_one_;
  bool has_add_remove_ = false;
  bool has_replace_one_ = false;
  RdpConversion conversion_;
  Neighbouring neighbouring_ = Neighbouring::add_remove;
  /// The relation the user fixed (AccountantOptions::neighbouring): then only
  /// rdp_ is kept, under it; nullopt: inferred from the sampled events.
  std::optional<Neighbouring> explicit_relation_;
  /// log(1 − δ_extra) of the epsilon_delta events composed so far:
  /// δ_extra = 1 − Π(1 − δ_i) is added outside the RDP curve.
  double log1m_extra_delta_ = 0;
};

}  // namespace dpb
