#pragma once
// A dataset's budget over many releases (docs/ledger.md): what each release
// contributes, the privacy filters that decide whether a release chosen
// adaptively still fits (the Rényi filter over a fixed set of orders, the
// Gaussian-DP filter), the planned gate (every release fixed in advance: one
// composition, any accountant), and what is left of the budget for a next
// release with one value to solve. No I/O: the ledger's store keeps the
// entries, the command line reads and renders them.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/answer.hpp"
#include "accounting/events/events.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/ledger_calibration.hpp"

namespace dpb {

/// How the releases of a ledger are chosen (docs/ledger.md#modes): adaptive
/// (each may depend on what earlier ones showed: a filter decides) or planned
/// (the whole sequence fixed in advance: ordinary composition decides).
enum class LedgerMode { adaptive, planned };
std::string_view to_string(LedgerMode mode);

/// The filter of an adaptive ledger, fixed when it is created
/// (docs/ledger.md#filters): choosing between filters release by release
/// would itself be adaptive.
enum class LedgerFilter { renyi, gdp };
std::string_view to_string(LedgerFilter filter);

/// The Rényi filter's orders unless the ledger names others
/// (docs/ledger.md#renyi-filter): the filter pays log(number of orders), so a
/// few orders spread from 1.5 to 64 (where the orders that win for budgets of
/// ε ≈ 0.5 to 20 at δ ≈ 1e-5 to 1e-9 lie) rather than the rdp accountant's 166.
inline constexpr double kDefaultFilterOrders[] = {1.5, 2,  2.5, 3,  4,  5,  6,
                                                  8,   10, 12,  16, 20, 32, 64};

/// The budget of one dataset and how it is spent.
struct DatasetBudget {
  double epsilon = 0;
  double delta = 0;
  Neighbouring neighbouring = Neighbouring::add_remove;
  LedgerMode mode = LedgerMode::adaptive;
  LedgerFilter filter = LedgerFilter::renyi;
  std::vector<double> orders;  ///< the Rényi filter's orders, each > 1, ascending
};

/// Throws InvalidParameter naming the field: ε > 0 finite, δ in (0, 1),
/// orders > 1, finite, strictly ascending, at least one.
void check_dataset_budget(const DatasetBudget& budget);

/// What one release contributes to the filters, computed once when it is
/// recorded and kept with it (docs/ledger.md#renyi-filter).
struct Contribution {
  /// ρ(α) at budget.orders under budget.neighbouring (the rdp accountant's
  /// curve; +inf where unbounded); empty when rdp cannot bound the release.
  std::vector<double> rdp;
  /// Why rdp gives no curve, or why the curve alone is not the release's
  /// guarantee (a δ outside it, from epsilon_delta events).
  std::optional<std::string> rdp_unusable;
  /// μ when the release is exactly μ-GDP (every part a Gaussian mechanism),
  /// rounded up; else nullopt with the reason.
  std::optional<double> mu;
  std::optional<std::string> mu_unusable;
};
Contribution contribution_of(const DpEvent& event, const DatasetBudget& budget);

/// B(α) = ε − log(|Λ|/δ)/(α − 1) at each order, rounded down
/// (docs/ledger.md#renyi-filter); ≤ 0 where that order can admit nothing.
std::vector<double> renyi_budget_curve(const DatasetBudget& budget);

/// The largest μ (rounded down) with μ-GDP ⇒ (ε, δ)-DP
/// (docs/ledger.md#gdp-filter): δ_μ(ε) ≤ δ.
double gdp_budget_mu(const DatasetBudget& budget);

/// The filter's state after some releases (docs/ledger.md#filters).
struct FilterState {
  LedgerFilter filter = LedgerFilter::renyi;
  std::vector<double> spent;         ///< renyi: Σρ(α), added rounded up
  std::vector<double> budget_curve;  ///< renyi: B(α)
  double mu_squared = 0;             ///< gdp: Σμ², added rounded up
  double mu_budget = 0;              ///< gdp: μ of the budget
  /// The filter admits this state: renyi, some order has Σρ(α) ≤ B(α); gdp,
  /// Σμ² ≤ μ_B².
  bool within = true;
  /// How full the filter is: renyi, the smallest Σρ(α)/B(α) over the orders
  /// with B(α) > 0 (≤ 1 when within); gdp, Σμ²/μ_B². +inf when no order can
  /// admit anything.
  double used = 0;
  /// renyi: the order where `used` is reached.
  std::optional<double> order;
};

/// The filter's state after `releases`. Throws UnsupportedEvent when a
/// release lacks what the filter needs (an RDP curve, an exact μ), naming it
/// by its index and the reason.
FilterState filter_state(const DatasetBudget& budget, std::span<const Contribution> releases);

/// The state with `next` added (which may be not `within`).
FilterState filter_add(const DatasetBudget& budget, const FilterState& state,
                       const Contribution& next);

/// The releases' RDP curves at budget.orders added up, rounded up (each
/// release's curve must be there: Contribution::rdp not empty).
std::vector<double> total_curve(const DatasetBudget& budget,
                                std::span<const Contribution> releases);

/// ε of an RDP curve at budget.orders and the budget's δ (the improved
/// conversion, docs/rdp.md#conversion): a release's own ε or a running
/// total, valid when the releases are fixed in advance; +inf when unbounded.
double curve_epsilon(const DatasetBudget& budget, std::span<const double> curve);

/// The ε the filter would need to have been created with to admit its state
/// (docs/ledger.md#needed): renyi min_α Σρ(α) + log(|Λ|/δ)/(α − 1), gdp the
/// ε at δ of √Σμ², both rounded up. Says how far over a refused release
/// goes; it is not a guarantee on the releases (a filter's budget is fixed
/// before the first release).
double filter_needed_epsilon(const DatasetBudget& budget, const FilterState& state);

/// The width a ledger asks of a PLD interval, as a share of the budget's ε
/// (docs/ledger.md#planned-precision): a total known to within 1e-3 of the
/// budget decides and reports against that budget as well as a finer one.
inline constexpr double kLedgerPldWidth = 1e-3;

/// The pld tolerance (relative to the upper end) for a ledger's total whose
/// ε is at most about `reference` (a sound upper bound from another
/// accountant, rdp's): max(tolerance, kLedgerPldWidth · ε_budget / reference),
/// so that the interval is at most kLedgerPldWidth · ε_budget wide when the
/// pld upper end is below `reference`; `tolerance` when reference is not
/// positive and finite.
double ledger_pld_tolerance(const DatasetBudget& budget, double reference, double tolerance);

/// The registered accountants, other than `excluded`, that can bound `event`
/// under the budget's relation (as check_budget() names them: an accountant
/// whose DP-SGD figure is an approximation, gdp's, is left out), for the
/// message that refuses a release no chosen accountant can bound.
std::vector<std::string> accountants_that_bound(const DpEvent& event, const DatasetBudget& budget,
                                                std::span<const std::string> excluded);

/// The planned gate (docs/ledger.md#planned-gate): the composition of every
/// release (the recorded ones and the next) asked of `accountants` in order
/// at the budget's δ, stopping at the first sound upper bound within the
/// budget. Admitted iff some accountant's sound upper bound is ≤ ε.
struct PlannedVerdict {
  bool admitted = false;
  /// Every guarantee computed, in the order asked.
  std::vector<Guarantee> guarantees;
  /// Accountants that could not bound the composition, "<name>: <reason>".
  std::vector<std::string> skipped;
  /// The smallest sound upper bound found (when there is one).
  std::optional<double> smallest_upper;
};
PlannedVerdict planned_gate(const EventPtr& all, const DatasetBudget& budget,
                            std::span<const std::string> accountants,
                            const AccountantOptions& options);

/// What is left, for a next release with one unknown
/// (docs/ledger.md#whats-left): the smallest noise parameter (rounded up) or
/// the largest count the filter still admits after `state`. Throws
/// NoSolution when none does, UnsupportedEvent when the next release lacks
/// what the filter needs.
double filter_solve(const DatasetBudget& budget, const FilterState& state, const LedgerOf& next,
                    RunUnknown unknown, const CalibrationSettings& settings);

/// The composition of `events` (the planned total's event, and what `export`
/// writes): one composed event, or the event itself when there is one.
EventPtr compose_releases(std::span<const EventPtr> events);

}  // namespace dpb
