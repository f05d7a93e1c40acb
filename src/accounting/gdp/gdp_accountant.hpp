#pragma once
#include "accounting/accountant.hpp"

namespace dpb {

/// Gaussian DP accountant (Dong, Roth & Su 2022; Bu, Dong, Long & Su 2020),
/// docs/gdp.md#composition. Keeps Σμᵢ² (μ-GDP composes as √Σμᵢ²):
///  - gaussian σ: μ = 1/σ, exact;
///  - poisson_sampled gaussian (q, σ): the central-limit contribution
///    q²(e^{1/σ²} − 1) per step (approximate; q = 1 is the exact Gaussian);
///  - sampled_without_replacement gaussian (m of N): the uniform-sampling CLT
///    contribution 2q²(e^{1/σ²}Φ(1.5/σ) + 3Φ(−0.5/σ) − 2), q = m/N, replace-one;
///  - single_epoch_tree_aggregation: μ = s·√depth/σ (replace-one s = 2,
///    replace-special s = 1); no_op μ = 0; non_private μ = inf;
///  - self_composed / composed of those.
/// Any CLT part makes the whole result approximate (not an upper bound).
class GdpAccountant final : public Accountant {
 public:
  explicit GdpAccountant(const AccountantOptions& options);
  std::string_view name() const override { return "gdp"; }
  std::optional<std::string> unsupported_reason(const DpEvent& event) const override;
  void compose(const DpEvent& event, std::int64_t count = 1) override;
  Guarantee epsilon(double delta) const override;
  Guarantee delta(double epsilon) const override;

  /// TPR ≤ Φ(Φ⁻¹(x) + μ), advantage 2Φ(μ/2) − 1 (approximate with a CLT part).
  AttackBounds attack_bounds(std::span<const double> fprs) const override;

  /// μ of everything composed so far, as computed (to nearest).
  double mu() const;
  /// mu() rounded up past the rounding of its terms and their sum: an upper
  /// bound on the exact μ of the double inputs, from which ε and δ are computed.
  double mu_upper() const;
  /// Whether mu() is exact: no central-limit part was composed.
  bool exact() const { return !clt_; }

 private:
  Guarantee base() const;

  double exact_sq_ = 0;   ///< Σ μᵢ² of exact (Gaussian) parts
  double clt_sq_ = 0;     ///< Σ μᵢ² of central-limit parts
  double additions_ = 0;  ///< terms added into exact_sq_ and clt_sq_ (for mu()'s rounding bound)
  bool clt_ = false;
  bool clt_outside_ = false;  ///< see outside_clt_regime()
  bool poisson_ = false;
  bool without_replacement_ = false;
  std::optional<Neighbouring> relation_;  ///< AccountantOptions::neighbouring
};

}  // namespace dpb
