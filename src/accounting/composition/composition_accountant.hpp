#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "accounting/accountant.hpp"

namespace dpb {

/// (ε, δ) composition accountant (docs/composition.md#delta-split): k repetitions of one mechanism
/// (gaussian, laplace, a Poisson / without-replacement sampled gaussian, an
/// (ε, δ)-DP, ε-DP or zCDP event, sampled or not, tree aggregation).
/// Each step gets (ε0, δ0) from its exact profile (docs/composition.md#per-step-profiles), sampled
/// steps are amplified (docs/composition.md#amplification-poisson), and the k steps are composed
/// with the basic, advanced or optimal theorem (AccountantOptions::composition). The split of the
/// total δ between the steps and the theorem's slack is searched to minimise ε (or, for delta(ε),
/// to minimise δ); every split is a valid bound, so the result is an upper bound whether or not the
/// search finds the best split. A ledger of different steps is composed by the heterogeneous bounds
/// (docs/composition.md#heterogeneous): basic composition, or Kairouz, Oh & Viswanath 2015,
/// Thm 3.5 for advanced and optimal.
class CompositionAccountant final : public Accountant {
 public:
  /// One step of the run.
  struct Step {
    enum class Kind {
      gaussian,
      laplace,
      sampled_gaussian,
      /// (ε, δ)-DP (δ = 0: pure ε-DP): the profile of the (ε, δ) randomized
      /// response that dominates it (Kairouz, Oh & Viswanath 2015, Thm 2.1)
      fixed,
      zcdp,         ///< (ξ, ρ)-zCDP: ε(δ0) = ξ + ρ + 2√(ρ log(1/δ0))
      non_private,  ///< ε = inf
      none,         ///< no_op: adds nothing, composes with any step
    };
    Kind kind;
    double parameter;  ///< σ (gaussian kinds), the Laplace scale b, ε (fixed), ρ (zcdp)
    double q = 1;      ///< sampling ratio (sampled_gaussian; fixed and zcdp when < 1)
    bool replace_one = false;
    double delta = 0;  ///< δ (fixed), ξ (zcdp)
    bool operator==(const Step&) const = default;
  };

  /// Each distinct step with its number of uses, in the order first met.
  using Ledger = std::vector<std::pair<Step, std::int64_t>>;

  explicit CompositionAccountant(const AccountantOptions& options);
  std::string_view name() const override { return "composition"; }
  std::optional<std::string> unsupported_reason(const DpEvent& event) const override;
  void compose(const DpEvent& event, std::int64_t count = 1) override;
  Guarantee epsilon(double delta) const override;
  Guarantee delta(double epsilon) const override;
  std::optional<std::int64_t> max_count() const override;

 private:
  Guarantee base() const;
  /// ε at δ and δ at ε of a ledger of two or more distinct steps
  /// (docs/composition.md#heterogeneous), into `g` (base()).
  void heterogeneous_epsilon(double delta, Guarantee& g) const;
  void heterogeneous_delta(double epsilon, Guarantee& g) const;
  /// Why `more` steps beyond those composed exceed max_count(), or nullopt.
  std::optional<std::string> count_reason(std::int64_t more) const;

  CompositionMethod method_;
  std::optional<Neighbouring> relation_;  ///< AccountantOptions::neighbouring
  Ledger ledger_;
  std::int64_t count_ = 0;  ///< uses in all, Σ of the ledger's counts
};

}  // namespace dpb
