#include "accounting/gdp_accountant.hpp"

#include <cmath>
#include <type_traits>

#include "accounting/errors.hpp"
#include "accounting/gdp.hpp"
#include "accounting/rdp_without_replacement.hpp"

namespace dpb {
namespace {

std::optional<std::string> gdp_unsupported(const DpEvent& event) {
  return std::visit(
      [](const auto& e) -> std::optional<std::string> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, GaussianEvent>) {
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, LaplaceEvent>) {
          return std::string("gdp: laplace is not supported (no exact mu-GDP characterisation)");
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          if (!std::holds_alternative<GaussianEvent>(*e.event))
            return "gdp: poisson_sampled supports only a gaussian event inside, not " +
                   event_name(*e.event);
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          if (!std::holds_alternative<GaussianEvent>(*e.event))
            return "gdp: sampled_without_replacement supports only a gaussian event inside, not " +
                   event_name(*e.event);
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          return gdp_unsupported(*e.event);
        } else {
          for (const auto& inner : e.events)
            if (auto why = gdp_unsupported(*inner)) return why;
          return std::nullopt;
        }
      },
      static_cast<const DpEvent::variant&>(event));
}

struct Parts {
  double exact_sq = 0;
  double clt_sq = 0;
  bool clt = false;
  bool clt_outside = false;  ///< a CLT part is far outside the theorem's regime
  bool poisson = false;
  bool without_replacement = false;
};

/// The central limit theorem (Bu et al. 2020, Thm 5) is a limit of many steps
/// each close to perfectly private (per-step μ → 0). Far from that — one step
/// already distinguishable (μ_step > 0.5) or fewer than 100 steps — the
/// approximation can be far off in either direction, and the result says so.
bool outside_clt_regime(double mu_step, double count) { return !(mu_step <= 0.5) || count < 100; }

// Adds `mult` occurrences of `event` to `parts` (μ² is additive under composition).
void collect(const DpEvent& event, double mult, Parts& parts) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, GaussianEvent>) {
          const double mu = 1 / e.noise_multiplier;
          parts.exact_sq += mult * mu * mu;
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          const double sigma = std::get<GaussianEvent>(*e.event).noise_multiplier;
          const double q = e.sampling_probability;
          parts.poisson = true;
          if (q == 1) {
            parts.exact_sq += mult / (sigma * sigma);
          } else if (q > 0) {
            const double mu1 = gdp_clt_mu_poisson(q, sigma, 1);
            parts.clt_sq += mult * mu1 * mu1;
            parts.clt = true;
            parts.clt_outside = parts.clt_outside || outside_clt_regime(mu1, mult);
          }
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          const double sigma = std::get<GaussianEvent>(*e.event).noise_multiplier;
          const double q =
              static_cast<double>(e.sample_size) / static_cast<double>(e.source_dataset_size);
          parts.without_replacement = true;
          if (q > 0) {
            // Replace-one: sensitivity 2 clipping norms, i.e. noise σ/2 (as RDP).
            const double mu1 = gdp_clt_mu_uniform(q, sigma / kReplaceOneSensitivity, 1);
            parts.clt_sq += mult * mu1 * mu1;
            parts.clt = true;
            parts.clt_outside = parts.clt_outside || outside_clt_regime(mu1, mult);
          }
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          if (e.count > 0) collect(*e.event, mult * static_cast<double>(e.count), parts);
        } else if constexpr (std::is_same_v<T, ComposedEvent>) {
          for (const auto& inner : e.events) collect(*inner, mult, parts);
        } else {
          throw UnsupportedEvent(*gdp_unsupported(DpEvent(e)));
        }
      },
      static_cast<const DpEvent::variant&>(event));
}

}  // namespace

GdpAccountant::GdpAccountant(const AccountantOptions&) {}

std::optional<std::string> GdpAccountant::unsupported_reason(const DpEvent& event) const {
  return gdp_unsupported(event);
}

void GdpAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (auto why = gdp_unsupported(event)) throw UnsupportedEvent(*why);
  if (count <= 0) return;
  Parts p;
  collect(event, static_cast<double>(count), p);
  if ((p.poisson || poisson_) && (p.without_replacement || without_replacement_))
    throw UnsupportedEvent(
        "gdp: cannot mix poisson_sampled (add/remove) and sampled_without_replacement "
        "(replace-one) events");
  exact_sq_ += p.exact_sq;
  clt_sq_ += p.clt_sq;
  clt_ = clt_ || p.clt;
  clt_outside_ = clt_outside_ || p.clt_outside;
  poisson_ = poisson_ || p.poisson;
  without_replacement_ = without_replacement_ || p.without_replacement;
}

double GdpAccountant::mu() const { return std::sqrt(exact_sq_ + clt_sq_); }

Guarantee GdpAccountant::base() const {
  Guarantee g;
  g.accountant = "gdp";
  g.bound = clt_ ? BoundKind::approximate : BoundKind::upper;
  g.neighbouring = without_replacement_ ? Neighbouring::replace_one : Neighbouring::add_remove;
  g.details.emplace_back("mu", mu());
  if (clt_)
    g.notes.push_back(
        "mu from the GDP central limit theorem (Bu, Dong, Long & Su 2020): an approximation, "
        "not an upper bound");
  if (clt_outside_)
    g.notes.push_back(
        "outside the central limit regime (needs many steps, each with mu_step <= 0.5): the "
        "approximation may be far off in either direction; use rdp or pld for a bound");
  return g;
}

Guarantee GdpAccountant::epsilon(double delta) const {
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  Guarantee g = base();
  g.delta = delta;
  g.epsilon = gdp_epsilon(mu(), delta);
  return g;
}

Guarantee GdpAccountant::delta(double epsilon) const {
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  Guarantee g = base();
  g.epsilon = epsilon;
  g.delta = gdp_delta(mu(), epsilon);
  return g;
}

}  // namespace dpb
