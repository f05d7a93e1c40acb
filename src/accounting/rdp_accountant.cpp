#include "accounting/rdp_accountant.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <tuple>
#include <type_traits>

#include "accounting/errors.hpp"
#include "accounting/rdp.hpp"

namespace dpb {
namespace {

/// Why RDP cannot account for this event, or nullopt. Mirrors event_curve().
std::optional<std::string> rdp_unsupported(const DpEvent& event) {
  return std::visit(
      [](const auto& e) -> std::optional<std::string> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          if (!std::holds_alternative<GaussianEvent>(*e.event))
            return "rdp: poisson_sampled supports only a gaussian event inside, not " +
                   event_name(*e.event);
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          return std::string("rdp: sampled_without_replacement is not supported yet (SPEC 2.3)");
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          return rdp_unsupported(*e.event);
        } else if constexpr (std::is_same_v<T, ComposedEvent>) {
          for (const auto& inner : e.events)
            if (auto why = rdp_unsupported(*inner)) return why;
          return std::nullopt;
        } else {
          return std::nullopt;  // Gaussian, Laplace
        }
      },
      static_cast<const DpEvent::variant&>(event));
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

void add_scaled(std::vector<double>& into, const std::vector<double>& curve, double count) {
  for (std::size_t i = 0; i < into.size(); ++i)
    if (curve[i] != 0) into[i] += count * curve[i];  // 0·inf stays 0 when count = 0
}

}  // namespace

RdpAccountant::RdpAccountant(const AccountantOptions& options)
    : orders_(options.orders.empty() ? default_rdp_orders() : options.orders),
      rdp_(orders_.size(), 0.0),
      conversion_(options.conversion) {
  for (double a : orders_)
    if (!(a > 1) || !std::isfinite(a)) throw InvalidParameter("orders", "every order must be > 1");
}

std::optional<std::string> RdpAccountant::unsupported_reason(const DpEvent& event) const {
  return rdp_unsupported(event);
}

std::vector<double> RdpAccountant::event_curve(const DpEvent& event) const {
  return std::visit(
      [this](const auto& e) -> std::vector<double> {
        using T = std::decay_t<decltype(e)>;
        std::vector<double> out(orders_.size(), 0.0);
        if constexpr (std::is_same_v<T, GaussianEvent>) {
          for (std::size_t i = 0; i < orders_.size(); ++i)
            out[i] = rdp_gaussian(e.noise_multiplier, orders_[i]);
        } else if constexpr (std::is_same_v<T, LaplaceEvent>) {
          for (std::size_t i = 0; i < orders_.size(); ++i)
            out[i] = rdp_laplace(e.scale, orders_[i]);
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          const auto& g = std::get<GaussianEvent>(*e.event);
          out = poisson_gaussian_curve(e.sampling_probability, g.noise_multiplier, orders_);
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          if (e.count > 0) add_scaled(out, event_curve(*e.event), static_cast<double>(e.count));
        } else if constexpr (std::is_same_v<T, ComposedEvent>) {
          for (const auto& inner : e.events) add_scaled(out, event_curve(*inner), 1.0);
        } else {
          throw UnsupportedEvent(*rdp_unsupported(DpEvent(e)));
        }
        return out;
      },
      static_cast<const DpEvent::variant&>(event));
}

void RdpAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (auto why = rdp_unsupported(event)) throw UnsupportedEvent(*why);
  if (count <= 0) return;
  add_scaled(rdp_, event_curve(event), static_cast<double>(count));
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
  if (rdp_unsupported(step)) return std::nullopt;
  const std::vector<double> rho = event_curve(step);
  double best = -1;
  for (std::size_t i = 0; i < orders_.size(); ++i) {
    const double a = orders_[i];
    // ε(T) at order α is T·ρ(α) + c(α) (SPEC §3).
    const double c = conversion_ == RdpConversion::classic
                         ? -std::log(delta) / (a - 1)
                         : std::log1p(-1 / a) - (std::log(delta) + std::log(a)) / (a - 1);
    if (!(rho[i] < INFINITY)) continue;
    const double t =
        rho[i] > 0 ? std::floor((epsilon - c) / rho[i]) : (c <= epsilon ? INFINITY : -1);
    best = std::max(best, t);
  }
  if (best < 1) return std::nullopt;
  return static_cast<std::int64_t>(std::min(best, 9007199254740992.0));
}

}  // namespace dpb
