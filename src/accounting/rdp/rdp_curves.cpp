#include "accounting/rdp/rdp_curves.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/rdp/rdp.hpp"
#include "accounting/rdp/rdp_events.hpp"
#include "accounting/rdp/rdp_without_replacement.hpp"

namespace dpb::detail {
namespace {

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

/// Slack on "ρ is nondecreasing in α" for computed values: each is within
/// about 1e-10 relative of the truth (docs/rdp.md#accuracy-guard), so a computed ρ(α) is at
/// least (1 − 1e-9) times a computed ρ at any lower order.
constexpr double kMonotoneSlack = 1e-9;

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
      if (ro) throw UnsupportedEvent(kRdpMixedRelations);
      out = poisson_gaussian_curve(t.ratio, t.parameter, orders);
      break;
    case RdpTerm::Kind::wor_gaussian:
      if (!ro) throw UnsupportedEvent(kRdpMixedRelations);
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
      if (ro) throw UnsupportedEvent(kRdpMixedRelations);
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

}  // namespace

const std::vector<double>& poisson_gaussian_curve(double q, double sigma,
                                                  const std::vector<double>& orders) {
  LazyCurve& c = lazy_poisson_gaussian_curve(q, sigma, orders);
  for (std::size_t i = 0; i < orders.size(); ++i) c.at(i);
  return c.values;
}

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

std::vector<double> plan_curve(const RdpPlan& plan, const std::vector<double>& orders,
                               Neighbouring relation) {
  std::vector<double> out(orders.size(), 0.0);
  for (const auto& [term, count] : plan.terms)
    if (count > 0) add_scaled(out, term_curve(term, orders, relation), static_cast<double>(count));
  return out;
}

}  // namespace dpb::detail
