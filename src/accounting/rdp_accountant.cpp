#include "accounting/rdp_accountant.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <tuple>
#include <type_traits>

#include "accounting/errors.hpp"
#include "accounting/rdp.hpp"
#include "accounting/rdp_without_replacement.hpp"

namespace dpb {
namespace {

/// Which neighbouring relations the sampled events inside `event` fix.
struct Relations {
  bool add_remove = false;   ///< a poisson_sampled event (SPEC §2.2)
  bool replace_one = false;  ///< a sampled_without_replacement event (SPEC §2.3)
};

void collect_relations(const DpEvent& event, Relations& r) {
  std::visit(
      [&r](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          r.add_remove = true;
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          r.replace_one = true;
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          collect_relations(*e.event, r);
        } else if constexpr (std::is_same_v<T, ComposedEvent>) {
          for (const auto& inner : e.events) collect_relations(*inner, r);
        }
      },
      static_cast<const DpEvent::variant&>(event));
}

Relations relations(const DpEvent& event) {
  Relations r;
  collect_relations(event, r);
  return r;
}

constexpr const char* kMixedRelations =
    "rdp: cannot compose poisson_sampled (add/remove neighbouring) and "
    "sampled_without_replacement (replace-one neighbouring) events: their RDP bounds hold "
    "for different neighbouring relations";

/// Why RDP cannot account for this event, or nullopt. Mirrors event_curve().
std::optional<std::string> rdp_unsupported_inner(const DpEvent& event) {
  return std::visit(
      [](const auto& e) -> std::optional<std::string> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          if (!std::holds_alternative<GaussianEvent>(*e.event))
            return "rdp: poisson_sampled supports only a gaussian event inside, not " +
                   event_name(*e.event);
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          if (!std::holds_alternative<GaussianEvent>(*e.event))
            return "rdp: sampled_without_replacement supports only a gaussian event inside, "
                   "not " +
                   event_name(*e.event);
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          return rdp_unsupported_inner(*e.event);
        } else if constexpr (std::is_same_v<T, ComposedEvent>) {
          for (const auto& inner : e.events)
            if (auto why = rdp_unsupported_inner(*inner)) return why;
          return std::nullopt;
        } else {
          return std::nullopt;  // Gaussian, Laplace
        }
      },
      static_cast<const DpEvent::variant&>(event));
}

std::optional<std::string> rdp_unsupported(const DpEvent& event) {
  if (auto why = rdp_unsupported_inner(event)) return why;
  const Relations r = relations(event);
  if (r.add_remove && r.replace_one) return std::string(kMixedRelations);
  return std::nullopt;
}

/// rdp_poisson_gaussian(q, σ, orders) is a pure function and the costly part
/// of every evaluation; sweeps and solvers ask for the same (q, σ) many times
/// (with different step counts), so the last few curves are remembered, per
/// thread.
const std::vector<double>& poisson_gaussian_curve(double q, double sigma,
                                                  const std::vector<double>& orders) {
  struct Entry {
    double q, sigma;
    std::vector<double> orders, curve;
  };
  constexpr std::size_t kEntries = 16;
  thread_local std::deque<Entry> cache;
  for (const auto& e : cache)
    if (e.q == q && e.sigma == sigma && e.orders == orders) return e.curve;
  if (cache.size() == kEntries) cache.pop_back();
  cache.push_front({q, sigma, orders, rdp_poisson_gaussian(q, sigma, orders)});
  return cache.front().curve;
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

void add_scaled(std::vector<double>& into, const std::vector<double>& curve, double count) {
  for (std::size_t i = 0; i < into.size(); ++i)
    if (curve[i] != 0) into[i] += count * curve[i];  // 0·inf stays 0 when count = 0
}

}  // namespace

RdpAccountant::RdpAccountant(const AccountantOptions& options)
    : orders_(options.orders.empty() ? default_rdp_orders() : options.orders),
      rdp_(orders_.size(), 0.0),
      rdp_add_remove_(orders_.size(), 0.0),
      rdp_replace_one_(orders_.size(), 0.0),
      conversion_(options.conversion) {
  for (double a : orders_)
    if (!(a > 1) || !std::isfinite(a)) throw InvalidParameter("orders", "every order must be > 1");
}

std::optional<std::string> RdpAccountant::unsupported_reason(const DpEvent& event) const {
  if (auto why = rdp_unsupported(event)) return why;
  const Relations r = relations(event);
  if ((r.add_remove && has_replace_one_) || (r.replace_one && has_add_remove_))
    return std::string(kMixedRelations) + " (the accountant already holds the other kind)";
  return std::nullopt;
}

// Events without sampling (Gaussian, Laplace) hold under either relation, with
// the sensitivity of that relation: the SPEC's σ and b are relative to the
// add/remove sensitivity 1 (the clipping norm), and replacing a record moves
// the query by up to kReplaceOneSensitivity = 2 of them, so under replace-one
// the Gaussian has ρ(α) = 2²·α/(2σ²) and the Laplace mechanism is the one with
// scale b/2 at sensitivity 1.
std::vector<double> RdpAccountant::event_curve(const DpEvent& event, Neighbouring relation) const {
  const bool ro = relation == Neighbouring::replace_one;
  const double s = ro ? kReplaceOneSensitivity : 1.0;
  return std::visit(
      [this, relation, ro, s](const auto& e) -> std::vector<double> {
        using T = std::decay_t<decltype(e)>;
        std::vector<double> out(orders_.size(), 0.0);
        if constexpr (std::is_same_v<T, GaussianEvent>) {
          for (std::size_t i = 0; i < orders_.size(); ++i)
            out[i] = rdp_gaussian(e.noise_multiplier / s, orders_[i]);
        } else if constexpr (std::is_same_v<T, LaplaceEvent>) {
          for (std::size_t i = 0; i < orders_.size(); ++i)
            out[i] = rdp_laplace(e.scale / s, orders_[i]);
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          if (ro) throw UnsupportedEvent(kMixedRelations);
          const auto& g = std::get<GaussianEvent>(*e.event);
          out = poisson_gaussian_curve(e.sampling_probability, g.noise_multiplier, orders_);
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          if (!ro) throw UnsupportedEvent(kMixedRelations);
          const auto& g = std::get<GaussianEvent>(*e.event);
          const double ratio =
              static_cast<double>(e.sample_size) / static_cast<double>(e.source_dataset_size);
          out = wor_gaussian_curve(ratio, g.noise_multiplier, orders_);
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          if (e.count > 0)
            add_scaled(out, event_curve(*e.event, relation), static_cast<double>(e.count));
        } else if constexpr (std::is_same_v<T, ComposedEvent>) {
          for (const auto& inner : e.events) add_scaled(out, event_curve(*inner, relation), 1.0);
        }
        return out;
      },
      static_cast<const DpEvent::variant&>(event));
}

void RdpAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (auto why = unsupported_reason(event)) throw UnsupportedEvent(*why);
  if (count <= 0) return;
  const Relations r = relations(event);
  const double n = static_cast<double>(count);
  // Both totals are kept until a sampled event fixes the relation.
  if (!r.replace_one && !has_replace_one_)
    add_scaled(rdp_add_remove_, event_curve(event, Neighbouring::add_remove), n);
  if (!r.add_remove && !has_add_remove_)
    add_scaled(rdp_replace_one_, event_curve(event, Neighbouring::replace_one), n);
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
  const RdpEpsilon r = epsilon_from_rdp(orders_, rdp_, delta, conversion_);
  Guarantee g;
  g.accountant = "rdp";
  g.epsilon = r.epsilon;
  g.delta = delta;
  g.neighbouring = neighbouring_;
  g.order = r.order;
  g.order_at_edge = std::isfinite(r.epsilon) && !r.kl_shortcut && at_edge(orders_, r.order);
  if (r.kl_shortcut)
    g.notes.push_back(
        "epsilon = 0 from the KL shortcut: total variation <= delta (Bretagnolle-Huber)");
  return g;
}

Guarantee RdpAccountant::delta(double epsilon) const {
  const RdpDelta r = delta_from_rdp(orders_, rdp_, epsilon, conversion_);
  Guarantee g;
  g.accountant = "rdp";
  g.epsilon = epsilon;
  g.delta = r.delta;
  g.neighbouring = neighbouring_;
  g.order = r.order;
  g.order_at_edge = r.delta < 1 && at_edge(orders_, r.order);
  return g;
}

std::optional<std::int64_t> RdpAccountant::largest_count_hint(const DpEvent& step, double epsilon,
                                                              double delta) const {
  if (unsupported_reason(step)) return std::nullopt;
  const Relations r = relations(step);
  const std::vector<double> rho =
      event_curve(step, (r.replace_one || has_replace_one_) ? Neighbouring::replace_one
                                                            : Neighbouring::add_remove);
  double best = -1;
  for (std::size_t i = 0; i < orders_.size(); ++i) {
    const double a = orders_[i];
    // ε(T) at order α is T·ρ(α) + c(α) (SPEC §3).
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
