#pragma once
// The one walk over an event's structure. Every accountant sees a DpEvent as a
// list of *leaves*: one mechanism (gaussian, laplace, ...), the sampling that
// wraps it, and how many times it runs. composed, self_composed and the
// sampled wrappers are flattened here, once, and nowhere else.
//
// An accountant supplies a *planner*: one overload per leaf kind,
//
//   Planned<Term> operator()(const GaussianEvent&, const LeafSampling&) const;
//   Planned<Term> operator()(const LaplaceEvent&, const LeafSampling&) const;
//   ...
//
// that either turns the leaf into the accountant's own cheap description of
// it (a Term: parameters, no heavy numerics) or refuses it with a reason.
// There is no catch-all: when a leaf kind is added to DpEvent, every planner
// without an overload for it fails to compile (ARCHITECTURE.md shows the
// error). unsupported_reason() and compose() both run plan_event(), so what an
// accountant says it supports is exactly what it computes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/events/neighbouring.hpp"

namespace dpb {

// How the records reach one leaf mechanism: the alternatives of LeafSampling
// below, set by the sampled wrapper around the leaf. (Not to be confused with
// a DP-SGD run's Sampling, dpsgd/dp_sgd_run.hpp: how the run's loader draws
// its batches, which dp_sgd_event() turns into such a wrapper.)

/// Not inside a sampled wrapper.
struct NotSampled {
  bool operator==(const NotSampled&) const = default;
};
/// Each record independently with probability q (add/remove neighbours).
struct PoissonSampling {
  double probability;
  bool operator==(const PoissonSampling&) const = default;
};
/// A batch of m of the N records, drawn without replacement (replace-one).
struct WithoutReplacementSampling {
  std::int64_t dataset_size;
  std::int64_t sample_size;
  double ratio() const {
    return static_cast<double>(sample_size) / static_cast<double>(dataset_size);
  }
  bool operator==(const WithoutReplacementSampling&) const = default;
};
/// One epoch of shuffled batches: each record in exactly one of `steps` steps
/// (a fresh permutation per epoch); the dataset size is fixed.
struct ShuffleSampling {
  std::int64_t steps;
  bool operator==(const ShuffleSampling&) const = default;
};
/// One epoch of random allocation: each record in `participations` of the
/// `steps` steps, chosen uniformly and independently of the other records.
struct AllocationSampling {
  std::int64_t steps;
  std::int64_t participations;
  bool operator==(const AllocationSampling&) const = default;
};
/// How the records reach one leaf mechanism (the walk's name; see above).
using LeafSampling = std::variant<NotSampled, PoissonSampling, WithoutReplacementSampling,
                                  ShuffleSampling, AllocationSampling>;

/// A planner's answer for one leaf: the accountant's term, or why not.
template <typename Term>
struct Planned {
  std::optional<Term> term;
  std::string refusal;  ///< set when !term

  Planned(Term t) : term(std::move(t)) {}  // NOLINT(google-explicit-constructor): reads as a value
  static Planned refuse(std::string why) {
    Planned p;
    p.refusal = std::move(why);
    return p;
  }

 private:
  Planned() = default;
};

/// Which neighbouring relations the sampled leaves of an event fix (docs/sampling.md#relations):
/// Poisson sampling is analysed under add/remove, sampling without
/// replacement under replace-one. Unsampled leaves hold under either.
struct Relations {
  bool add_remove = false;
  bool replace_one = false;
  bool mixed() const { return add_remove && replace_one; }
};

/// An event as an accountant sees it: each leaf's term with its total count
/// (a count may be 0: the leaf is checked but adds nothing).
template <typename Term>
struct Plan {
  std::vector<std::pair<Term, std::int64_t>> terms;
  Relations relations;
  std::optional<std::string> refusal;  ///< the first leaf the planner refused, or a structure
  /// False when some part is accounted as an event that only dominates it, whatever the
  /// planner says of its terms: amplified banded MF's rounds, whose columns are asserted to
  /// have norm at most 1 but whose exact norms and group sizes the kind does not know
  /// (docs/matrix.md#amplified-banded). An accountant's lower end then claims no attained pair.
  bool attained = true;
};

/// The event kind that applied `s`, for messages ("" when not sampled).
inline const char* sampled_event_name(const LeafSampling& s) {
  if (std::holds_alternative<PoissonSampling>(s)) return "poisson_sampled";
  if (std::holds_alternative<WithoutReplacementSampling>(s)) return "sampled_without_replacement";
  if (std::holds_alternative<ShuffleSampling>(s)) return "shuffled";
  if (std::holds_alternative<AllocationSampling>(s)) return "random_allocation";
  return "";
}

/// The usual refusal of a mechanism an accountant analyses only unsampled.
inline std::string refuse_sampled(std::string_view accountant, const LeafSampling& s,
                                  std::string_view supported, std::string_view inner) {
  return std::string(accountant) + ": " + sampled_event_name(s) + " supports only " +
         std::string(supported) + " event inside, not " + std::string(inner);
}

/// Whether `s` is one epoch of shuffled or randomly allocated batches.
inline bool is_epoch_sampling(const LeafSampling& s) {
  return std::holds_alternative<ShuffleSampling>(s) ||
         std::holds_alternative<AllocationSampling>(s);
}

/// The refusal every planner shares for a leaf inside `shuffled` or
/// `random_allocation` (nullopt: analyse it). Only a Gaussian is analysed
/// there. A shuffled epoch keeps the dataset size, so it is analysed under
/// replace_one or replace_special, never add_remove (adding a record moves
/// others between batches). Random allocation's pair (docs/pld.md#random-allocation) is the one of
/// add_remove and of replace_special, not of replace_one.
inline std::optional<std::string> epoch_refusal(std::string_view accountant, const LeafSampling& s,
                                                bool is_gaussian,
                                                std::optional<Neighbouring> relation) {
  if (!is_epoch_sampling(s)) return std::nullopt;
  const std::string who = std::string(accountant) + ": " + sampled_event_name(s);
  if (!is_gaussian) return who + " supports only a gaussian event inside";
  if (std::holds_alternative<ShuffleSampling>(s) &&
      (!relation || *relation == Neighbouring::add_remove))
    return who +
           " has no analysis under add_remove neighbouring (the dataset size is fixed; adding a "
           "record moves others between batches): choose neighbouring replace_special (or "
           "replace_one)";
  if (std::holds_alternative<AllocationSampling>(s) && relation == Neighbouring::replace_one)
    return who + " is analysed under add_remove and replace_special, not replace_one";
  return std::nullopt;
}

/// Releases of the inner mechanism each record takes part in per epoch: 1
/// when shuffled, k under random allocation. Without amplification, an epoch
/// is at most this many unsampled releases (each record's steps are fixed
/// given the permutation or allocation, which does not depend on the data;
/// a mixture over them is no worse than its worst member, by joint
/// convexity of the hockey-stick divergence).
inline std::int64_t uses_per_epoch(const LeafSampling& s) {
  if (const auto* a = std::get_if<AllocationSampling>(&s)) return a->participations;
  return 1;
}

/// a·b for counts of repetitions; throws InvalidParameter past int64.
inline std::int64_t checked_count_product(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw InvalidParameter("count", "composed count overflows");
  return r;
}

namespace detail {

template <typename Term, typename Planner>
void walk(const DpEvent& event, const Planner& planner, std::string_view accountant,
          const LeafSampling& sampling, const char* sampler, std::int64_t count, Plan<Term>& plan) {
  if (plan.refusal) return;
  // A sampled wrapper applies to one mechanism: sampling a composition (one
  // batch shared by several mechanisms) or a sampled event again is a
  // different event that no accountant here analyses.
  auto refuse_nested = [&](const char* outer) {
    plan.refusal = std::string(accountant) + ": " + outer +
                   " supports only a mechanism inside, not " + event_name(event);
  };
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ComposedEvent>) {
          if (sampler) return refuse_nested(sampler);
          for (const auto& inner : e.events)
            walk(*inner, planner, accountant, sampling, sampler, count, plan);
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          if (sampler) return refuse_nested(sampler);
          walk(*e.event, planner, accountant, sampling, sampler,
               checked_count_product(count, e.count), plan);
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          if (sampler) return refuse_nested(sampler);
          plan.relations.add_remove = true;
          walk(*e.event, planner, accountant, LeafSampling{PoissonSampling{e.sampling_probability}},
               "poisson_sampled", count, plan);
        } else if constexpr (std::is_same_v<T, SampledWithReplacementEvent>) {
          // No accountant here has an analysis (docs/sampling.md#with-replacement):
          // a record can enter one batch several times, so its contribution (the
          // sensitivity) is random and unbounded by the clipping norm.
          plan.refusal = std::string(accountant) +
                         ": sampled_with_replacement is not supported: a record can be drawn "
                         "several times into one batch, and no analysis of that is implemented "
                         "(for batches of exactly B distinct records use "
                         "sampled_without_replacement, with rdp or pld; else poisson_sampled)";
        } else if constexpr (std::is_same_v<T, ShuffledEvent>) {
          // The relation is the one the accountant is asked for (replace_one
          // or replace_special: a shuffled epoch keeps the dataset size);
          // each planner refuses add_remove.
          if (sampler) return refuse_nested(sampler);
          walk(*e.event, planner, accountant, LeafSampling{ShuffleSampling{e.num_steps}},
               "shuffled", count, plan);
        } else if constexpr (std::is_same_v<T, RandomAllocationEvent>) {
          if (sampler) return refuse_nested(sampler);
          plan.relations.add_remove = true;
          walk(*e.event, planner, accountant,
               LeafSampling{AllocationSampling{e.num_steps, e.num_participations}},
               "random_allocation", count, plan);
        } else if constexpr (is_equivalent_kind<T>()) {
          // A kind that is an existing event (docs/matrix.md#event-kinds): a
          // matrix mechanism is the Gaussian at σ/Δ, an amplified banded run
          // DP-SGD over ⌈T/b⌉ rounds. Each accountant accounts the equivalent
          // event with the planner it has, so none repeats their maths. It is a
          // whole run: its sampling is in its own fields (or in Δ), not a
          // wrapper's.
          if (sampler) {
            plan.refusal = std::string(accountant) + ": " + std::string(T::kName) +
                           " is a whole run (its participation pattern is in its own fields) "
                           "and cannot be inside " +
                           sampler + "; compose it beside the other events instead";
            return;
          }
          walk(*equivalent_event(e), planner, accountant, sampling, sampler, count, plan);
          if constexpr (std::is_same_v<T, BandedMatrixFactorizationEvent>) plan.attained = false;
          if (plan.refusal)
            *plan.refusal += " (" + std::string(T::kName) + " is accounted as " +
                             (std::is_same_v<T, MatrixMechanismEvent>
                                  ? std::string("the gaussian at noise_multiplier / sensitivity")
                                  : std::string("self_composed(ceil(steps / bands), "
                                                "poisson_sampled(gaussian)), DP-SGD")) +
                             ")";
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          if (sampler) return refuse_nested(sampler);
          plan.relations.replace_one = true;
          walk(*e.event, planner, accountant,
               LeafSampling{WithoutReplacementSampling{e.source_dataset_size, e.sample_size}},
               "sampled_without_replacement", count, plan);
        } else {
          // A mixture of Gaussians compares one side against N(0, s²): a
          // record added or removed (or zeroed out), so it fixes add/remove
          // as a Poisson-sampled leaf does.
          if constexpr (std::is_same_v<T, MixtureOfGaussiansEvent>)
            plan.relations.add_remove = true;
          // A leaf: the planner must have an overload for T (no catch-all).
          Planned<Term> p = planner(e, sampling);
          if (!p.term) {
            plan.refusal = std::move(p.refusal);
            return;
          }
          plan.terms.emplace_back(std::move(*p.term), count);
        }
      },
      static_cast<const DpEvent::variant&>(event));
}

}  // namespace detail

/// Flattens `event` into the planner's terms (see the top of this file).
/// `accountant` prefixes structural refusals. Throws InvalidParameter when
/// the composed count overflows int64.
template <typename Term, typename Planner>
Plan<Term> plan_event(const DpEvent& event, const Planner& planner, std::string_view accountant) {
  Plan<Term> plan;
  detail::walk(event, planner, accountant, LeafSampling{NotSampled{}}, nullptr, 1, plan);
  if (plan.refusal) plan.terms.clear();
  return plan;
}

}  // namespace dpb
