#pragma once
// The RDP accountant's planner (events/event_walk.hpp): each leaf of an event
// becomes an RdpTerm, the parameters of its RDP curve (no heavy numerics),
// under the neighbouring relation asked for. The planner itself, one overload
// per leaf kind and no catch-all, is in rdp_planner.cpp; this header holds
// what the accountant (rdp_accountant.cpp) and the curves (rdp_curves.hpp)
// share: the term, the plan, and rdp_plan() that makes one.
#include <cstdint>
#include <memory>
#include <optional>

#include "accounting/events/event_walk.hpp"
#include "accounting/events/events.hpp"
#include "accounting/events/neighbouring.hpp"

namespace dpb::detail {

/// The refusal of an event that mixes the relations of two sampled events.
inline constexpr const char* kRdpMixedRelations =
    "rdp: cannot compose poisson_sampled (add/remove neighbouring) and "
    "sampled_without_replacement (replace-one neighbouring) events: their RDP bounds hold "
    "for different neighbouring relations";

struct RdpTerm;
/// An event as the RDP accountant sees it (event_walk.hpp).
using RdpPlan = Plan<RdpTerm>;

/// One leaf as the RDP accountant evaluates it (event_walk.hpp). `s` below is
/// the sensitivity factor of the relation the curve is evaluated under
/// (kReplaceOneSensitivity = 2 under replace-one, else 1).
struct RdpTerm {
  enum class Kind {
    gaussian,             ///< ρ(α) = α/(2(σ/s)²) (Mironov 2017, Prop. 7)
    laplace,              ///< Mironov 2017, Prop. 6, scale b/s
    poisson_gaussian,     ///< docs/rdp.md#subsampled-gaussian; add/remove, replace-special
    wor_gaussian,         ///< docs/rdp.md#without-replacement; replace-one only
    zero,                 ///< no_op
    infinite,             ///< non_private: +inf at every order
    pure_dp,              ///< an ε-DP mechanism: binary randomized response (rdp_pure_dp)
    zcdp,                 ///< ξ + ρα (Bun & Steinke 2016, Def. 1.1)
    exponential,          ///< min(ξ + ε²α/8, ε) (Cesar & Rogers 2021, Sec. 3)
    randomized_response,  ///< exact k-ary RR, replace-one or replace-special
    tree,                 ///< Gaussian of sensitivity √depth (Kairouz et al. 2021, App. D)
    repeat_and_select,    ///< Papernot & Steinke 2022 of `inner`
    /// a user of `buckets` records Poisson-sampled at `ratio`, noise σ: the
    /// smaller of two dominating curves (mixture_dominance.hpp)
    user_poisson_gaussian,
  };
  Kind kind;
  double parameter = 0;      ///< σ, b, ε, ρ, p or the mean of repeat_and_select
  double ratio = 1;          ///< q, or m/N without replacement
  double xi = 0;             ///< zCDP ξ; repeat_and_select: the shape
  std::int64_t buckets = 0;  ///< randomized response k; tree depth
  /// ε (pure_dp) times s, or ρ (zcdp) times s²: the discrete mechanisms whose
  /// parameters are relative to one record's contribution.
  bool scales = false;
  /// log(1 − δ) of an epsilon_delta event (0 otherwise).
  double log1m_delta = 0;
  std::shared_ptr<const RdpPlan> inner;  ///< repeat_and_select: the repeated event
};

/// The plan of `event` for the RDP accountant: its leaves' terms, and the
/// relations its sampled events fix, those inside repeat_and_select included.
/// `relation`: the neighbouring relation the user fixed, or nullopt
/// (inferred: the sampled leaves fix it and must agree, kRdpMixedRelations).
RdpPlan rdp_plan(const DpEvent& event, std::optional<Neighbouring> relation);

}  // namespace dpb::detail
