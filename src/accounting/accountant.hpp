#pragma once
// One interface for every accountant (after dp_accounting's PrivacyAccountant):
// an accountant is fed events with compose() and then answers epsilon(δ) or
// delta(ε) for everything composed so far. A new accountant is a folder of its
// own plus its descriptor in registry.cpp (ARCHITECTURE.md, "Adding an accountant").
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accounting/events/events.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/rdp/rdp_conversion.hpp"

namespace dpb {

/// What kind of statement a result is: a sound upper bound on the privacy
/// loss, an approximation (e.g. the GDP central-limit theorem), a sound lower
/// bound (the true loss is at least this), or an estimate under another
/// sampling scheme than the one run (the Poisson figure beside a shuffled run).
enum class BoundKind { upper, approximate, lower, estimate };
std::string_view to_string(BoundKind b);

/// What the lower end of an interval (PLD's `epsilon_lower`, `delta_lower`,
/// `tpr_lower`, `advantage_lower`) says about the run (docs/claims.md#attained-pairs). PLD
/// composes, for each part of the run, a pair of output distributions. When
/// every pair is *attained* by some pair of neighbouring datasets for this
/// mechanism, the exact value of the composed pair is the run's, so the lower
/// end is a sound lower bound on the run (`lower_bound`). When some pair only
/// *dominates* the mechanism (a generic ε-DP stand-in, a shuffled epoch as an
/// unamplified release, k > 1 allocations composed separately, ...), the
/// lower end bounds the stand-in's exact value, not the run's: it only says
/// how close the upper end is to what that stand-in can give (`accuracy`).
enum class LowerEnd { lower_bound, accuracy };
/// "lower bound" or "accuracy".
std::string_view to_string(LowerEnd l);

/// An (ε, δ) statement with what the accountant knows about it.
struct Guarantee {
  std::string accountant;
  double epsilon = 0;
  double delta = 0;
  BoundKind bound = BoundKind::upper;
  Neighbouring neighbouring = Neighbouring::add_remove;
  std::optional<double> order;          ///< best Rényi order (RDP)
  bool order_at_edge = false;           ///< best order is the smallest or largest tried
  std::optional<double> epsilon_lower;  ///< lower end of an ε interval (PLD)
  std::optional<double> delta_lower;    ///< lower end of a δ interval (PLD)
  /// What epsilon_lower / delta_lower claim about the run.
  LowerEnd lower_end = LowerEnd::lower_bound;
  /// Further named numbers an accountant reports (e.g. "mu", "delta_split_step").
  std::vector<std::pair<std::string, double>> details;
  /// The names in `details` that are counts (e.g. "pld_grid_size"): integers,
  /// shown in full and as JSON integers.
  std::vector<std::string> count_details;
  /// Adds a count to `details` and names it in `count_details`.
  void add_count(std::string name, std::int64_t n) {
    count_details.push_back(name);
    details.emplace_back(std::move(name), static_cast<double>(n));
  }
  bool is_count(std::string_view name) const {
    for (const auto& c : count_details)
      if (c == name) return true;
    return false;
  }
  std::vector<std::string> notes;  ///< one-line remarks for the reader
};

/// What an accountant can say about membership-inference attacks on
/// everything composed so far (docs/risk.md#trade-off-bound): bounds on the true-positive rate
/// (power) of any test between neighbouring datasets at each false-positive
/// rate asked, and on the advantage max_x (TPR(x) − x), which is the total
/// variation distance, i.e. δ at ε = 0.
struct AttackBounds {
  std::string accountant;
  BoundKind bound = BoundKind::upper;  ///< of `tpr` and `advantage`
  Neighbouring neighbouring = Neighbouring::add_remove;
  std::vector<double> fpr;        ///< the false-positive rates asked
  std::vector<double> tpr;        ///< upper bound (or approximation) at each fpr
  std::vector<double> tpr_lower;  ///< the interval's lower end at each fpr (PLD), or empty
  double advantage = 0;           ///< upper bound on max_x (TPR(x) − x)
  std::optional<double> advantage_lower;
  /// What tpr_lower / advantage_lower claim about the run.
  LowerEnd lower_end = LowerEnd::lower_bound;
  std::vector<std::pair<std::string, double>> details;
  std::vector<std::string> notes;
};

/// Composition theorem for (ε, δ) mechanisms: docs/composition.md#basic,
/// docs/composition.md#advanced, docs/composition.md#optimal.
enum class CompositionMethod { basic, advanced, optimal };
std::string_view to_string(CompositionMethod m);

/// The rdp accountant's settings.
struct RdpSettings {
  std::vector<double> orders;  ///< Rényi orders; empty = default_rdp_orders()
  RdpConversion conversion = RdpConversion::improved;
};

/// The composition accountant's settings.
struct CompositionSettings {
  CompositionMethod method = CompositionMethod::optimal;
};

/// The pld accountant's settings.
struct PldSettings {
  /// First discretisation interval Δ of the loss grid; 0 = automatic.
  double interval = 0;
  /// Refine the grid until (upper − lower) ≤ tolerance · upper for the ε (or
  /// δ) interval; ≤ 0 = keep the first grid.
  double tolerance = 1e-3;
  /// Let queries about nearby run lengths share discretised releases
  /// (pld::Options::share_releases); set by epsilon_series.
  bool share_releases = false;
};

/// What every accountant is made from: the relation asked for, which all
/// read, and each accountant's own settings, which only it reads (its
/// descriptor's settings set them: accountant_descriptor.hpp).
struct AccountantOptions {
  /// The neighbouring relation asked for; nullopt = the one the events fix
  /// (poisson_sampled: add/remove, sampled_without_replacement: replace-one),
  /// add/remove when none does.
  std::optional<Neighbouring> neighbouring;
  RdpSettings rdp;
  CompositionSettings composition;
  PldSettings pld;
};

class Accountant {
 public:
  virtual ~Accountant() = default;
  virtual std::string_view name() const = 0;
  /// Why this accountant cannot handle `event`, or nullopt when it can.
  virtual std::optional<std::string> unsupported_reason(const DpEvent& event) const = 0;
  bool supports(const DpEvent& event) const { return !unsupported_reason(event); }
  /// Adds `count` repetitions of `event`. Throws UnsupportedEvent.
  virtual void compose(const DpEvent& event, std::int64_t count = 1) = 0;
  /// Smallest ε it can certify at δ ∈ (0, 1) for all events composed so far.
  virtual Guarantee epsilon(double delta) const = 0;
  /// Smallest δ it can certify at ε ≥ 0.
  virtual Guarantee delta(double epsilon) const = 0;
  /// Bounds on any membership-inference attack at each false-positive rate
  /// in (0, 1) (AttackBounds). The default reads this accountant's privacy
  /// profile δ(ε) on a grid of ε (accountant.cpp); accountants with a
  /// tighter characterisation override it.
  virtual AttackBounds attack_bounds(std::span<const double> fprs) const;
  /// A closed-form guess of the largest n with ε(n-fold `step`) ≤ epsilon at
  /// δ, for accountants that have one (RDP, docs/rdp.md#steps-closed-form). Calibration checks it.
  virtual std::optional<std::int64_t> largest_count_hint(const DpEvent& /*step*/,
                                                         double /*epsilon*/,
                                                         double /*delta*/) const {
    return std::nullopt;
  }
  /// The largest number of repetitions of one step this accountant evaluates
  /// (an event beyond it is one it does not handle: unsupported_reason() says
  /// so and compose() refuses it), or nullopt: no limit.
  virtual std::optional<std::int64_t> max_count() const { return std::nullopt; }
};

/// The default of Accountant::attack_bounds(): the accountant's own privacy
/// profile read on a grid of ε ≥ 0 (every (ε, δ(ε)) it certifies is a valid
/// guarantee, so the smallest of their TPR bounds is one: Dong, Roth & Su
/// 2022, Prop. 2.12), and the advantage as its δ at ε = 0.
AttackBounds attack_bounds_from_profile(const Accountant& accountant, std::span<const double> fprs);

/// The accountant registered as `name` (accountant_descriptor.hpp), made from
/// `options`. Throws std::out_of_range for an unknown name.
std::unique_ptr<Accountant> make_accountant(std::string_view name,
                                            const AccountantOptions& options);

}  // namespace dpb
