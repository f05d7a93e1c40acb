#include "accounting/pld_accountant.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

#include "accounting/errors.hpp"

namespace dpb {
namespace {

std::optional<std::string> pld_unsupported(const DpEvent& event) {
  return std::visit(
      [](const auto& e) -> std::optional<std::string> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          if (!std::holds_alternative<GaussianEvent>(*e.event) &&
              !std::holds_alternative<LaplaceEvent>(*e.event))
            return "pld: poisson_sampled supports only a gaussian or laplace event inside, not " +
                   event_name(*e.event);
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          return std::string(
              "pld: sampled_without_replacement (replace-one) is not supported: its privacy "
              "loss is not a monotone function of one real variable, so the CDF-based "
              "discretisation does not apply");
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          return pld_unsupported(*e.event);
        } else if constexpr (std::is_same_v<T, ComposedEvent>) {
          for (const auto& inner : e.events)
            if (auto why = pld_unsupported(*inner)) return why;
          return std::nullopt;
        } else {
          return std::nullopt;  // Gaussian, Laplace
        }
      },
      static_cast<const DpEvent::variant&>(event));
}

pld::Mechanism leaf(const DpEvent& event, double q) {
  if (const auto* g = std::get_if<GaussianEvent>(&event))
    return {pld::Mechanism::Kind::gaussian, g->noise_multiplier, q};
  const auto& l = std::get<LaplaceEvent>(event);
  return {pld::Mechanism::Kind::laplace, l.scale, q};
}

std::int64_t checked_product(std::int64_t a, std::int64_t b) {
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a)
    throw InvalidParameter("count", "composed count overflows");
  return a * b;
}

}  // namespace

PldAccountant::PldAccountant(const AccountantOptions& options) {
  options_.interval = options.pld_interval;
  options_.tolerance = options.pld_tolerance;
  if (!(options_.interval >= 0) || !std::isfinite(options_.interval))
    throw InvalidParameter("pld_interval", "must be >= 0 (0 = automatic)");
  if (!std::isfinite(options_.tolerance))
    throw InvalidParameter("pld_tolerance", "must be a finite number");
}

std::optional<std::string> PldAccountant::unsupported_reason(const DpEvent& event) const {
  return pld_unsupported(event);
}

void PldAccountant::add(const DpEvent& event, std::int64_t count) {
  if (count <= 0) return;
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, GaussianEvent> || std::is_same_v<T, LaplaceEvent>) {
          components_.push_back({leaf(DpEvent(e), 1.0), count});
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          if (e.sampling_probability > 0)  // q = 0: no privacy loss
            components_.push_back({leaf(*e.event, e.sampling_probability), count});
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          add(*e.event, checked_product(count, e.count));
        } else if constexpr (std::is_same_v<T, ComposedEvent>) {
          for (const auto& inner : e.events) add(*inner, count);
        } else {
          throw UnsupportedEvent(*pld_unsupported(DpEvent(e)));
        }
      },
      static_cast<const DpEvent::variant&>(event));
}

void PldAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (auto why = pld_unsupported(event)) throw UnsupportedEvent(*why);
  add(event, count);
}

Guarantee PldAccountant::make_guarantee(const pld::Interval& interval) const {
  Guarantee g;
  g.accountant = "pld";
  g.bound = BoundKind::upper;
  g.neighbouring = Neighbouring::add_remove;
  g.details.emplace_back("pld_interval", interval.interval);
  g.details.emplace_back("pld_grid_size", static_cast<double>(interval.grid));
  g.details.emplace_back("pld_refinements", static_cast<double>(interval.refinements));
  g.notes = interval.notes;
  return g;
}

Guarantee PldAccountant::epsilon(double delta) const {
  const pld::Interval r = pld::epsilon_interval(components_, delta, options_);
  Guarantee g = make_guarantee(r);
  g.epsilon = r.upper;
  g.epsilon_lower = r.lower;
  g.delta = delta;
  return g;
}

Guarantee PldAccountant::delta(double epsilon) const {
  const pld::Interval r = pld::delta_interval(components_, epsilon, options_);
  Guarantee g = make_guarantee(r);
  g.epsilon = epsilon;
  g.delta = r.upper;
  g.delta_lower = r.lower;
  return g;
}

}  // namespace dpb
