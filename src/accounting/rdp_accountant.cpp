#include "accounting/rdp_accountant.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "accounting/attack_risk.hpp"
#include "accounting/errors.hpp"
#include "accounting/event_walk.hpp"
#include "accounting/mixture_dominance.hpp"
#include "accounting/rdp.hpp"
#include "accounting/rdp_events.hpp"
#include "accounting/rdp_without_replacement.hpp"

namespace dpb {
namespace {

constexpr const char* kMixedRelations =
    "rdp: cannot compose poisson_sampled (add/remove neighbouring) and "
    "sampled_without_replacement (replace-one neighbouring) events: their RDP bounds hold "
    "for different neighbouring relations";

struct RdpTerm;
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

RdpTerm make_term(RdpTerm::Kind kind, double parameter = 0, double ratio = 1) {
  RdpTerm t{};
  t.kind = kind;
  t.parameter = parameter;
  t.ratio = ratio;
  return t;
}

std::string rdp_refusal(std::string_view what) { return "rdp: " + std::string(what); }

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here).
/// `relation`: the neighbouring relation the user fixed, or nullopt (inferred).
struct RdpPlanner {
  std::optional<Neighbouring> relation;

  using P = Planned<RdpTerm>;

  /// The refusal of a kind this accountant analyses only unsampled.
  static P unsampled_only(const Sampling& s, std::string_view name) {
    return P::refuse(refuse_sampled("rdp", s, "a gaussian", name) +
                     " (no RDP analysis of a sampled " + std::string(name) + ")");
  }
  /// Kinds analysed under replace-one and replace-special only.
  std::optional<std::string> needs_replace(std::string_view name, std::string_view why) const {
    if (!relation)
      return rdp_refusal(std::string(name) + " has no analysis under add_remove neighbouring (" +
                         std::string(why) +
                         "), and none was chosen: choose neighbouring replace_one or "
                         "replace_special");
    if (*relation == Neighbouring::add_remove)
      return rdp_refusal(std::string(name) + " has no analysis under add_remove neighbouring (" +
                         std::string(why) + "): use replace_one or replace_special");
    return std::nullopt;
  }

  P operator()(const GaussianEvent& e, const Sampling& s) const {
    if (auto why = epoch_refusal("rdp", s, true, relation)) return P::refuse(*why);
    if (is_epoch_sampling(s))
      // k unamplified releases per epoch (uses_per_epoch): a Gaussian whose
      // RDP is k·α/(2σ²), i.e. σ/√k (Mironov 2017, Prop. 7 and composition).
      return make_term(RdpTerm::Kind::gaussian,
                       scaled_noise_multiplier(e.noise_multiplier,
                                               std::sqrt(static_cast<double>(uses_per_epoch(s)))));
    if (const auto* p = std::get_if<PoissonSampling>(&s)) {
      if (relation == Neighbouring::replace_one)
        return P::refuse(
            "rdp: poisson_sampled gaussian under replace_one neighbouring is not analysed here "
            "(the RDP bound of Mironov, Talwar & Zhang 2019 is for add/remove and "
            "replace-special): use pld, or neighbouring add_remove or replace_special");
      return make_term(RdpTerm::Kind::poisson_gaussian, e.noise_multiplier, p->probability);
    }
    if (const auto* w = std::get_if<WithoutReplacementSampling>(&s)) {
      if (relation && *relation != Neighbouring::replace_one)
        return P::refuse(
            "rdp: sampled_without_replacement is analysed under replace_one "
            "neighbouring only (Wang, Balle & Kasiviswanathan 2019), not " +
            std::string(to_string(*relation)));
      return make_term(RdpTerm::Kind::wor_gaussian, e.noise_multiplier, w->ratio());
    }
    return make_term(RdpTerm::Kind::gaussian, e.noise_multiplier);
  }
  P operator()(const LaplaceEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(refuse_sampled("rdp", s, "a gaussian", e.kName));
    return make_term(RdpTerm::Kind::laplace, e.scale);
  }
  P operator()(const NoOpEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make_term(RdpTerm::Kind::zero);
  }
  P operator()(const NonPrivateEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make_term(RdpTerm::Kind::infinite);
  }
  P operator()(const EpsilonDeltaEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    // An (ε, δ)-DP mechanism is a post-processing of the (ε, δ) randomized
    // response (Kairouz, Oh & Viswanath 2015, Thm 2.1; Murtagh & Vadhan 2016,
    // Lemma 3.2): with probability δ it reveals which neighbour it saw,
    // otherwise it is binary randomized response with ε. The RDP curve is that
    // of the ε part; the δ's compose as 1 − Π(1 − δ_i), added outside it.
    RdpTerm t = make_term(RdpTerm::Kind::pure_dp, e.epsilon);
    t.log1m_delta = std::log1p(-e.delta);
    return t;
  }
  P operator()(const DiscreteLaplaceEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    // Pure (aΔ)-DP: the privacy loss a(|x − Δ| − |x|) lies in [−aΔ, aΔ] (for
    // Δ = 1 it takes only ±a, so binary randomized response is then exact).
    RdpTerm t =
        make_term(RdpTerm::Kind::pure_dp, e.noise_parameter * static_cast<double>(e.sensitivity));
    t.scales = true;
    return t;
  }
  P operator()(const DiscreteGaussianEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(refuse_sampled("rdp", s, "a gaussian", e.kName) +
                       ": no published analysis shows that a sampled discrete Gaussian "
                       "behaves as a sampled continuous one");
    // Canonne, Kamath & Steinke 2020, Thm 4 (from their Prop. 5): ρ-zCDP with
    // ρ = Δ²/(2σ²).
    const double d = static_cast<double>(e.sensitivity);
    RdpTerm t = make_term(RdpTerm::Kind::zcdp, d * d / (2 * e.sigma * e.sigma));
    t.scales = true;
    return t;
  }
  P operator()(const RandomizedResponseEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (auto why = needs_replace(e.kName, "a record's bucket is replaced, not removed"))
      return P::refuse(*why);
    RdpTerm t = make_term(RdpTerm::Kind::randomized_response, e.noise_parameter);
    t.buckets = e.num_buckets;
    return t;
  }
  P operator()(const ZcdpEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(refuse_sampled("rdp", s, "a gaussian", e.kName) +
                       ": no published analysis of a sampled zCDP mechanism (it need not "
                       "behave as a sampled Gaussian)");
    RdpTerm t = make_term(RdpTerm::Kind::zcdp, e.rho);
    t.xi = e.xi;
    return t;
  }
  P operator()(const ExponentialMechanismEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make_term(RdpTerm::Kind::exponential, e.epsilon);
  }
  P operator()(const PermuteAndFlipEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    // Analysed as a generic ε-DP mechanism (McKenna & Sheldon 2020 prove ε-DP).
    // dp_accounting gives it the Laplace curves, for which no proof is
    // published; binary randomized response bounds every ε-DP mechanism.
    return make_term(RdpTerm::Kind::pure_dp, e.epsilon);
  }
  P operator()(const MixtureOfGaussiansEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (relation == Neighbouring::replace_one)
      return P::refuse(rdp_refusal(std::string(e.kName) +
                                   " has no analysis under replace_one (its pair compares one "
                                   "side against N(0, s^2)): use add_remove or replace_special"));
    const MixtureDominance d = dominating_sampled_gaussian(e);
    if (d.probability == 0) return make_term(RdpTerm::Kind::zero);
    if (d.probability == 1) return make_term(RdpTerm::Kind::gaussian, d.noise_multiplier);
    if (const auto user = as_binomial_mixture(e)) {
      RdpTerm t =
          make_term(RdpTerm::Kind::user_poisson_gaussian, e.standard_deviation, user->probability);
      t.buckets = user->records;
      t.xi = user->eta;
      return t;
    }
    return make_term(RdpTerm::Kind::poisson_gaussian, d.noise_multiplier, d.probability);
  }
  P operator()(const SingleEpochTreeAggregationEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (auto why = needs_replace(e.kName,
                                 "the analysis of Kairouz et al. 2021, App. D, replaces a record "
                                 "by a null one in every tree it reaches"))
      return P::refuse(*why);
    RdpTerm t = make_term(RdpTerm::Kind::tree, e.noise_multiplier);
    t.buckets = tree_aggregation_depth(e.step_counts);
    return t;
  }
  P operator()(const RepeatAndSelectEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    auto inner = std::make_shared<RdpPlan>(plan_event<RdpTerm>(*e.event, *this, "rdp"));
    if (inner->refusal) return P::refuse(*inner->refusal);
    for (const auto& [term, count] : inner->terms)
      if (count > 0 && term.log1m_delta < 0)
        return P::refuse(
            "rdp: repeat_and_select of an event with delta > 0 (epsilon_delta) has no RDP "
            "analysis: Papernot & Steinke 2022 need the repeated event's RDP curve");
    RdpTerm t = make_term(RdpTerm::Kind::repeat_and_select, e.mean);
    t.xi = e.shape;
    t.inner = std::move(inner);
    return t;
  }
  P operator()(const TruncatedSubsampledGaussianEvent& e, const Sampling&) const {
    return P::refuse(
        rdp_refusal(std::string(e.kName) + " has no RDP analysis implemented here: use pld"));
  }
};

/// The relations fixed by the sampled events anywhere in `plan`, including
/// inside repeat_and_select.
void merge_relations(const RdpPlan& plan, Relations& into) {
  into.add_remove = into.add_remove || plan.relations.add_remove;
  into.replace_one = into.replace_one || plan.relations.replace_one;
  for (const auto& [term, count] : plan.terms)
    if (term.inner) merge_relations(*term.inner, into);
}

RdpPlan rdp_plan(const DpEvent& event, std::optional<Neighbouring> relation) {
  RdpPlan plan = plan_event<RdpTerm>(event, RdpPlanner{relation}, "rdp");
  if (plan.refusal) return plan;
  merge_relations(plan, plan.relations);
  // With the relation fixed every leaf is analysed under it (the planner has
  // refused those that have no analysis there); inferred, the sampled leaves
  // fix it and must agree.
  if (!relation && plan.relations.mixed()) plan.refusal = kMixedRelations;
  return plan;
}

/// log(1 − δ_extra) of one occurrence of `plan` (its epsilon_delta events).
double plan_log1m_delta(const RdpPlan& plan) {
  double sum = 0;
  for (const auto& [term, count] : plan.terms)
    if (count > 0 && term.log1m_delta < 0) sum += static_cast<double>(count) * term.log1m_delta;
  return sum;
}

/// rdp_poisson_gaussian(q, σ, α) is a pure function and the costly part of
/// every evaluation; sweeps and solvers ask for the same (q, σ) many times
/// (with different step counts), and a single ε needs only some orders
/// (pruned_epsilon below). So the last few curves are remembered per thread,
/// each order computed when first asked for (NaN until then).
struct LazyCurve {
  double q, sigma;
  std::vector<double> orders, values;
  std::vector<std::size_t> ascending;  ///< positions of `orders`, by increasing order
  double at(std::size_t i) {
    if (std::isnan(values[i])) values[i] = rdp_poisson_gaussian(q, sigma, orders[i]);
    return values[i];
  }
};

LazyCurve& lazy_poisson_gaussian_curve(double q, double sigma, const std::vector<double>& orders) {
  constexpr std::size_t kEntries = 16;
  thread_local std::deque<LazyCurve> cache;
  for (auto& e : cache)
    if (e.q == q && e.sigma == sigma && e.orders == orders) return e;
  if (cache.size() == kEntries) cache.pop_back();
  std::vector<std::size_t> ascending(orders.size());
  for (std::size_t i = 0; i < ascending.size(); ++i) ascending[i] = i;
  std::sort(ascending.begin(), ascending.end(),
            [&](std::size_t a, std::size_t b) { return orders[a] < orders[b]; });
  cache.push_front({q, sigma, orders,
                    std::vector<double>(orders.size(), std::numeric_limits<double>::quiet_NaN()),
                    std::move(ascending)});
  return cache.front();
}

const std::vector<double>& poisson_gaussian_curve(double q, double sigma,
                                                  const std::vector<double>& orders) {
  LazyCurve& c = lazy_poisson_gaussian_curve(q, sigma, orders);
  for (std::size_t i = 0; i < orders.size(); ++i) c.at(i);
  return c.values;
}

/// Slack on "ρ is nondecreasing in α" for computed values: each is within
/// about 1e-10 relative of the truth (docs/rdp.md#accuracy-guard), so a computed ρ(α) is at
/// least (1 − 1e-9) times a computed ρ at any lower order.
constexpr double kMonotoneSlack = 1e-9;

/// epsilon_from_rdp(orders, n·ρ, δ, conversion) for n steps of the
/// Poisson-sampled Gaussian (q, σ), with ρ computed only at the orders that
/// can win: Rényi divergence is nondecreasing in the order (van Erven &
/// Harremoës 2014, Thm 3), so at an order above a computed one, ε is at least
/// the conversion of the lower order's n·ρ; an order whose bound is above the
/// best ε found is skipped. Integer orders (cheap) go first, then the rest,
/// each ascending. The same ε and order as the full curve, to the bit (a
/// skipped order's ε is strictly above the minimum). nullopt when the KL
/// shortcut might apply (the caller then takes the full curve).
std::optional<RdpEpsilon> pruned_epsilon(double q, double sigma, double term_count,
                                         double compose_count, const std::vector<double>& orders,
                                         double delta, RdpConversion conversion) {
  // n·ρ exactly as compose() composes it: 0 + compose_count·(0 + term_count·ρ).
  auto composed = [&](double rho) { return rho == 0 ? 0.0 : compose_count * (term_count * rho); };
  LazyCurve& curve = lazy_poisson_gaussian_curve(q, sigma, orders);
  const double log_delta = std::log(delta);
  const std::vector<std::size_t>& by_order = curve.ascending;
  // The KL shortcut can only hold where n·ρ ≤ −log(1 − δ²), and ρ is
  // smallest at the smallest order: a margin of 2 covers the rounding.
  if (conversion == RdpConversion::improved) {
    const double r = composed(curve.at(by_order.front()));
    if (r * (1 - kMonotoneSlack) <= 2 * -std::log1p(-delta * delta)) return std::nullopt;
  }
  auto conversion_of = [&](double r, std::size_t i) {
    const ConversionTerm c = rdp_conversion_term(orders[i], log_delta, conversion);
    return r + c.value + kConversionRoundUp * (r + c.magnitude);
  };
  std::vector<double> eps(orders.size(), std::numeric_limits<double>::infinity());
  double best = std::numeric_limits<double>::infinity();
  auto settle_order = [&](std::size_t i) {
    const double rho = curve.at(i);
    if (!(rho >= 0)) throw InvalidParameter("rdp", "RDP values must be >= 0");
    const double r = composed(rho);
    if (std::isinf(r)) return;
    eps[i] = conversion_of(r, i);
    best = std::min(best, eps[i]);
  };
  // Orders already computed (a sweep's earlier step counts) cost nothing.
  for (std::size_t i = 0; i < orders.size(); ++i)
    if (!std::isnan(curve.values[i])) settle_order(i);
  // Ascending scans, each keeping n·ρ at the last known order below as the
  // bound for the next: integer orders (cheap) first, then every order.
  for (const bool integers_only : {true, false}) {
    double below = 0;
    for (std::size_t i : by_order) {
      if (!std::isnan(curve.values[i])) {
        below = composed(curve.values[i]) * (1 - kMonotoneSlack);
        continue;
      }
      if (integers_only && orders[i] != std::floor(orders[i])) continue;
      if (!(conversion_of(below, i) <= best)) continue;  // cannot win (or inf)
      settle_order(i);
      below = composed(curve.values[i]) * (1 - kMonotoneSlack);
    }
  }
  // The first minimum in list order, as epsilon_from_rdp picks it.
  RdpEpsilon out{std::numeric_limits<double>::infinity(), orders.front(), false};
  for (std::size_t i = 0; i < orders.size(); ++i)
    if (eps[i] < out.epsilon) out = {eps[i], orders[i], false};
  if (out.epsilon < 0) out.epsilon = 0;
  return out;
}

/// The same cache for rdp_sampled_without_replacement_gaussian.
const std::vector<double>& wor_gaussian_curve(double ratio, double sigma,
                                              const std::vector<double>& orders) {
  struct Entry {
    double ratio, sigma;
    std::vector<double> orders, curve;
  };
  constexpr std::size_t kEntries = 16;
  thread_local std::deque<Entry> cache;
  for (const auto& e : cache)
    if (e.ratio == ratio && e.sigma == sigma && e.orders == orders) return e.curve;
  if (cache.size() == kEntries) cache.pop_back();
  cache.push_front(
      {ratio, sigma, orders, rdp_sampled_without_replacement_gaussian(ratio, sigma, orders)});
  return cache.front().curve;
}

/// Relative rounding of the δ_extra conversions (a log1p, an expm1 and a
/// difference: a few u; 8 machine epsilons cover them).
constexpr double kExtraDeltaRounding = 8 * std::numeric_limits<double>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();

void add_scaled(std::vector<double>& into, const std::vector<double>& curve, double count) {
  for (std::size_t i = 0; i < into.size(); ++i)
    if (curve[i] != 0) into[i] += count * curve[i];  // 0·inf stays 0 when count = 0
}

std::vector<double> plan_curve(const RdpPlan& plan, const std::vector<double>& orders,
                               Neighbouring relation);

// Leaves without sampling hold under either relation, with the sensitivity of
// that relation (docs/sampling.md#relations): σ and b (and the discrete mechanisms' noise) are
// relative to the add/remove sensitivity 1 (one record's contribution), and
// replacing a record moves the query by up to kReplaceOneSensitivity = 2 of
// them, so under replace-one the Gaussian has ρ(α) = 2²·α/(2σ²) and the Laplace
// mechanism is the one with scale b/2 at sensitivity 1. Under replace-special
// (a record replaced by a null one contributing nothing) the move is 1.
// Guarantees (epsilon_delta, zcdp, exponential_mechanism, permute_and_flip)
// hold as stated under every relation.
std::vector<double> term_curve(const RdpTerm& t, const std::vector<double>& orders,
                               Neighbouring relation) {
  const bool ro = relation == Neighbouring::replace_one;
  const double s = ro ? kReplaceOneSensitivity : 1.0;
  const double scale = t.scales ? s : 1.0;
  std::vector<double> out(orders.size(), 0.0);
  auto each = [&](auto&& f) {
    for (std::size_t i = 0; i < orders.size(); ++i) out[i] = f(orders[i]);
  };
  switch (t.kind) {
    case RdpTerm::Kind::gaussian:
      each([&](double a) { return rdp_gaussian(scaled_noise_multiplier(t.parameter, s), a); });
      break;
    case RdpTerm::Kind::laplace:
      each([&](double a) { return rdp_laplace(scaled_noise_multiplier(t.parameter, s), a); });
      break;
    case RdpTerm::Kind::poisson_gaussian:
      if (ro) throw UnsupportedEvent(kMixedRelations);
      out = poisson_gaussian_curve(t.ratio, t.parameter, orders);
      break;
    case RdpTerm::Kind::wor_gaussian:
      if (!ro) throw UnsupportedEvent(kMixedRelations);
      out = wor_gaussian_curve(t.ratio, t.parameter, orders);
      break;
    case RdpTerm::Kind::zero:
      break;
    case RdpTerm::Kind::infinite:
      each([](double) { return kInf; });
      break;
    case RdpTerm::Kind::pure_dp:
      each([&](double a) { return rdp_pure_dp(t.parameter * scale, a); });
      break;
    case RdpTerm::Kind::zcdp:
      each([&](double a) { return rdp_zcdp(t.xi, t.parameter * scale * scale, a); });
      break;
    case RdpTerm::Kind::exponential:
      each([&](double a) { return rdp_exponential_mechanism(t.parameter, a); });
      break;
    case RdpTerm::Kind::randomized_response:
      if (relation == Neighbouring::add_remove)
        throw UnsupportedEvent("rdp: randomized_response has no analysis under add_remove");
      each([&](double a) {
        return ro ? rdp_randomized_response_replace_one(t.parameter, t.buckets, a)
                  : rdp_randomized_response_replace_special(t.parameter, t.buckets, a);
      });
      break;
    case RdpTerm::Kind::tree: {
      if (relation == Neighbouring::add_remove)
        throw UnsupportedEvent(
            "rdp: single_epoch_tree_aggregation has no analysis under add_remove");
      // Kairouz et al. 2021, App. D: one record reaches at most `depth` nodes
      // (one per level of the one tree it is in), each with Gaussian noise σ,
      // so the vector of node sums is a Gaussian mechanism of L2 sensitivity
      // s·√depth: ρ(α) = α·depth·s²/(2σ²).
      const double sigma_eff =
          scaled_noise_multiplier(t.parameter, s * std::sqrt(static_cast<double>(t.buckets)));
      each([&](double a) { return std::nextafter(rdp_gaussian(sigma_eff, a), kInf); });
      break;
    }
    case RdpTerm::Kind::repeat_and_select:
      out =
          rdp_repeat_and_select(orders, plan_curve(*t.inner, orders, relation), t.parameter, t.xi);
      break;
    case RdpTerm::Kind::user_poisson_gaussian: {
      if (ro) throw UnsupportedEvent(kMixedRelations);
      // Two bounds on a user of k records, each in the batch w.p. q, noise σ:
      // (a) the Poisson-sampled Gaussian of rate 1 − (1 − q)^k and noise σ/k
      //     that dominates the mixture (mixture_dominance.hpp);
      // (b) split the noise N(0, σ²) into k independent N(0, σ²/k): the step
      //     is the sum (a post-processing) of k independent releases
      //     b_j·g_j + N(0, σ²/k), b_j ~ Bernoulli(q), each a Poisson-sampled
      //     Gaussian at σ/√k, so its RDP is at most k times theirs (Mironov
      //     2017, Prop. 1 and post-processing).
      // Both hold at every order for the exact Binomial(k, q) mixture P_b, so
      // their minimum does. The event's weights are Binomial(k, q) within a
      // relative η (as_binomial_mixture): pointwise (1−η)P_b ≤ P ≤ (1+η)P_b,
      // which moves D_α(P‖Q) by at most α/(α−1)·log(1+η) and D_α(Q‖P) by at
      // most −log(1−η); the larger is added.
      const double k = static_cast<double>(t.buckets);
      const double q_any = -std::expm1(k * std::log1p(-t.ratio));
      // A copy: the second look-up may evict the first curve from the cache.
      const std::vector<double> dominated =
          poisson_gaussian_curve(q_any, scaled_noise_multiplier(t.parameter, k), orders);
      const std::vector<double>& split = poisson_gaussian_curve(
          t.ratio, scaled_noise_multiplier(t.parameter, std::sqrt(k)), orders);
      for (std::size_t i = 0; i < orders.size(); ++i) {
        const double a = orders[i];
        const double slack =
            std::max(a / (a - 1) * std::log1p(t.xi), -std::log1p(-t.xi)) * (1 + 1e-12);
        out[i] = std::nextafter(std::min(dominated[i], k * split[i]) + slack, kInf);
      }
      break;
    }
  }
  return out;
}

/// RDP of one occurrence of a planned event at every order (RDP composes
/// additively, Mironov 2017 Prop. 1).
std::vector<double> plan_curve(const RdpPlan& plan, const std::vector<double>& orders,
                               Neighbouring relation) {
  std::vector<double> out(orders.size(), 0.0);
  for (const auto& [term, count] : plan.terms)
    if (count > 0) add_scaled(out, term_curve(term, orders, relation), static_cast<double>(count));
  return out;
}

/// δ' with 1 − δ = (1 − δ')(1 − δ_extra), rounded down; ≤ 0 when δ ≤ δ_extra.
double effective_delta(double delta, double log1m_extra) {
  if (log1m_extra == 0) return delta;
  const double d = -std::expm1(std::log1p(-delta) - log1m_extra);
  return d * (1 - kExtraDeltaRounding);
}

/// 1 − (1 − δ)(1 − δ_extra) = δ + δ_extra − δ·δ_extra, rounded up, capped at 1.
double with_extra_delta(double delta, double log1m_extra) {
  if (log1m_extra == 0) return delta;
  const double d = -std::expm1(std::log1p(-delta) + log1m_extra);
  return std::min(1.0, d * (1 + kExtraDeltaRounding));
}

}  // namespace

RdpAccountant::RdpAccountant(const AccountantOptions& options)
    : orders_(options.orders.empty() ? default_rdp_orders() : options.orders),
      rdp_(orders_.size(), 0.0),
      rdp_add_remove_(orders_.size(), 0.0),
      rdp_replace_one_(orders_.size(), 0.0),
      conversion_(options.conversion),
      neighbouring_(options.neighbouring.value_or(Neighbouring::add_remove)),
      explicit_relation_(options.neighbouring) {
  for (double a : orders_)
    if (!(a > 1) || !std::isfinite(a)) throw InvalidParameter("orders", "every order must be > 1");
}

std::optional<std::string> RdpAccountant::unsupported_reason(const DpEvent& event) const {
  const RdpPlan plan = rdp_plan(event, explicit_relation_);
  if (plan.refusal) return plan.refusal;
  if (explicit_relation_) return std::nullopt;
  const Relations& r = plan.relations;
  if ((r.add_remove && has_replace_one_) || (r.replace_one && has_add_remove_))
    return std::string(kMixedRelations) + " (the accountant already holds the other kind)";
  return std::nullopt;
}

void RdpAccountant::settle() const {
  if (!pending_) return;
  const PendingSteps p = *pending_;
  pending_.reset();
  // What compose() would have added: n·(count·ρ), through the same additions.
  std::vector<double> term(orders_.size(), 0.0);
  add_scaled(term, poisson_gaussian_curve(p.q, p.sigma, orders_), p.term_count);
  if (explicit_relation_) {
    add_scaled(rdp_, term, p.compose_count);
    return;
  }
  add_scaled(rdp_add_remove_, term, p.compose_count);
  rdp_ = rdp_add_remove_;
}

const std::vector<double>& RdpAccountant::curve() const {
  settle();
  return rdp_;
}

void RdpAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (auto why = unsupported_reason(event)) throw UnsupportedEvent(*why);
  if (count <= 0) return;
  settle();
  const RdpPlan plan = rdp_plan(event, explicit_relation_);
  const double n = static_cast<double>(count);
  // The first event, when it is T steps of the Poisson-sampled Gaussian under
  // add/remove (a DP-SGD run): kept as such, so that epsilon() computes only
  // the orders that can win (pruned_epsilon); anything else settles it.
  if (!composed_ && plan.terms.size() == 1 && plan.terms.front().second > 0 &&
      plan.terms.front().first.kind == RdpTerm::Kind::poisson_gaussian &&
      plan_log1m_delta(plan) == 0 && plan.relations.add_remove && !plan.relations.replace_one &&
      explicit_relation_.value_or(Neighbouring::add_remove) == Neighbouring::add_remove) {
    const RdpTerm& t = plan.terms.front().first;
    composed_ = true;
    pending_ =
        PendingSteps{t.ratio, t.parameter, static_cast<double>(plan.terms.front().second), n};
    if (!explicit_relation_) {
      has_add_remove_ = true;
      neighbouring_ = Neighbouring::add_remove;
    }
    return;
  }
  composed_ = true;
  log1m_extra_delta_ += n * plan_log1m_delta(plan);
  if (explicit_relation_) {
    add_scaled(rdp_, plan_curve(plan, orders_, *explicit_relation_), n);
    return;
  }
  const Relations& r = plan.relations;
  // Both totals are kept until a sampled event fixes the relation.
  if (!r.replace_one && !has_replace_one_)
    add_scaled(rdp_add_remove_, plan_curve(plan, orders_, Neighbouring::add_remove), n);
  if (!r.add_remove && !has_add_remove_)
    add_scaled(rdp_replace_one_, plan_curve(plan, orders_, Neighbouring::replace_one), n);
  has_add_remove_ = has_add_remove_ || r.add_remove;
  has_replace_one_ = has_replace_one_ || r.replace_one;
  neighbouring_ = has_replace_one_ ? Neighbouring::replace_one : Neighbouring::add_remove;
  rdp_ = has_replace_one_ ? rdp_replace_one_ : rdp_add_remove_;
}

namespace {

bool at_edge(const std::vector<double>& orders, double order) {
  const auto [lo, hi] = std::minmax_element(orders.begin(), orders.end());
  return orders.size() > 1 && (order == *lo || order == *hi);
}

}  // namespace

Guarantee RdpAccountant::epsilon(double delta) const {
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  Guarantee g;
  g.accountant = "rdp";
  g.delta = delta;
  g.neighbouring = neighbouring_;
  add_extra_delta(g);
  // The δ left for the RDP curve once the epsilon_delta events' δ_extra is
  // taken out: 1 − δ = (1 − δ')(1 − δ_extra).
  const double d = effective_delta(delta, log1m_extra_delta_);
  if (!(d > 0)) {
    g.epsilon = kInf;
    g.order = orders_.front();
    g.notes.push_back("delta is at most the epsilon_delta events' own delta: epsilon = inf");
    return g;
  }
  std::optional<RdpEpsilon> pruned;
  if (pending_)
    pruned = pruned_epsilon(pending_->q, pending_->sigma, pending_->term_count,
                            pending_->compose_count, orders_, d, conversion_);
  if (!pruned) settle();
  const RdpEpsilon r = pruned ? *pruned : epsilon_from_rdp(orders_, rdp_, d, conversion_);
  g.epsilon = r.epsilon;
  g.order = r.order;
  g.order_at_edge = std::isfinite(r.epsilon) && !r.kl_shortcut && at_edge(orders_, r.order);
  if (r.kl_shortcut)
    g.notes.push_back(
        "epsilon = 0 from the KL shortcut: total variation <= delta (Bretagnolle-Huber)");
  return g;
}

Guarantee RdpAccountant::delta(double epsilon) const {
  settle();
  RdpDelta r = delta_from_rdp(orders_, rdp_, epsilon, conversion_);
  // A curve that is 0 at every order means identical output distributions
  // (D_α(P‖Q) = 0 iff P = Q): δ = 0 at every ε. (delta_from_rdp's rounding
  // term is not finite there.)
  if (std::all_of(rdp_.begin(), rdp_.end(), [](double v) { return v == 0; })) r.delta = 0;
  Guarantee g;
  g.accountant = "rdp";
  g.epsilon = epsilon;
  g.delta = with_extra_delta(r.delta, log1m_extra_delta_);
  g.neighbouring = neighbouring_;
  g.order = r.order;
  g.order_at_edge = r.delta < 1 && at_edge(orders_, r.order);
  add_extra_delta(g);
  return g;
}

AttackBounds RdpAccountant::attack_bounds(std::span<const double> fprs) const {
  check_fprs(fprs);
  settle();
  AttackBounds out;
  out.accountant = "rdp";
  out.neighbouring = neighbouring_;
  out.fpr.assign(fprs.begin(), fprs.end());
  const double extra = -std::expm1(log1m_extra_delta_);
  for (double x : fprs) out.tpr.push_back(tpr_bound_rdp(orders_, rdp_, x, extra));
  // The advantage is the total variation distance: δ at ε = 0 (rounded up by
  // the conversion), and never above what the curve's bound at x gives.
  const Guarantee at_zero = delta(0);
  out.advantage = std::min(1.0, at_zero.delta);
  out.notes = at_zero.notes;
  return out;
}

void RdpAccountant::add_extra_delta(Guarantee& g) const {
  if (log1m_extra_delta_ == 0) return;
  g.details.emplace_back("extra_delta", -std::expm1(log1m_extra_delta_));
  g.notes.push_back(
      "includes extra_delta = 1 - prod(1 - delta_i) of the epsilon_delta events: total delta = "
      "1 - (1 - delta_rdp)(1 - extra_delta)");
}

std::optional<std::int64_t> RdpAccountant::largest_count_hint(const DpEvent& step, double epsilon,
                                                              double delta) const {
  if (unsupported_reason(step)) return std::nullopt;
  const RdpPlan plan = rdp_plan(step, explicit_relation_);
  // The closed form knows only the curve: no hint with an extra δ.
  if (plan_log1m_delta(plan) < 0 || log1m_extra_delta_ < 0) return std::nullopt;
  const Neighbouring relation =
      explicit_relation_
          ? *explicit_relation_
          : ((plan.relations.replace_one || has_replace_one_) ? Neighbouring::replace_one
                                                              : Neighbouring::add_remove);
  const std::vector<double> rho = plan_curve(plan, orders_, relation);
  double best = -1;
  for (std::size_t i = 0; i < orders_.size(); ++i) {
    const double a = orders_[i];
    // ε(T) at order α is T·ρ(α) + c(α) (docs/rdp.md#steps-closed-form).
    const double c = rdp_conversion_term(a, std::log(delta), conversion_).value;
    if (!(rho[i] < INFINITY)) continue;
    const double t =
        rho[i] > 0 ? std::floor((epsilon - c) / rho[i]) : (c <= epsilon ? INFINITY : -1);
    best = std::max(best, t);
  }
  if (best < 1) return std::nullopt;
  return static_cast<std::int64_t>(std::min(best, 9007199254740992.0));
}

}  // namespace dpb
