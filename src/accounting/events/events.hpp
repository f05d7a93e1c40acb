#pragma once
// Privacy events: what happened to the data, independent of how it is
// accounted. The vocabulary follows Google's dp_accounting DpEvent classes.
// Factories validate their parameters (throwing InvalidParameter), so an
// event that exists is well formed.
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace dpb {

struct DpEvent;
using EventPtr = std::shared_ptr<const DpEvent>;

/// One field of an event kind, as spec files name it. `min` is the smallest
/// value an integer field (or each integer of a list) may take before the
/// kind's own checks. An `optional` field may be left out (the member keeps
/// its default); `alias` is a second accepted key (dp_accounting's name where
/// ours differs); `infinity_word` lets a number field be the string "inf".
/// A std::vector<std::int64_t> field accepts a number or a list of numbers.
template <typename Event, typename Member>
struct EventField {
  std::string_view name;
  Member Event::*member;
  std::string_view meaning;
  std::int64_t min = 0;
  bool optional = false;
  std::string_view alias = {};
  bool infinity_word = false;
};

// Each event kind says its name (dp_accounting's, in snake_case), the name of
// dp_accounting's class (for ledgers serialised from Python), a one-line
// meaning, and its fields in canonical order. Spec files (reader and writer),
// --print-spec and the every-kind tests iterate over these; nothing else
// lists them.

/// Gaussian mechanism with L2 sensitivity 1 and noise standard deviation σ.
struct GaussianEvent {
  static constexpr std::string_view kName = "gaussian";
  static constexpr std::string_view kClassName = "GaussianDpEvent";
  static constexpr std::string_view kMeaning =
      "Gaussian mechanism, noise standard deviation relative to the L2 sensitivity";
  double noise_multiplier;
  static constexpr auto fields() {
    return std::tuple{EventField<GaussianEvent, double>{
        "noise_multiplier", &GaussianEvent::noise_multiplier, "sigma / sensitivity, > 0"}};
  }
};

/// Laplace mechanism with L1 sensitivity 1 and scale b.
struct LaplaceEvent {
  static constexpr std::string_view kName = "laplace";
  static constexpr std::string_view kClassName = "LaplaceDpEvent";
  static constexpr std::string_view kMeaning = "Laplace mechanism of scale b at L1 sensitivity 1";
  double scale;
  static constexpr auto fields() {
    return std::tuple{EventField<LaplaceEvent, double>{"scale", &LaplaceEvent::scale,
                                                       "b, > 0 (dp_accounting: noise_multiplier)",
                                                       0, false, "noise_multiplier"}};
  }
};

/// Each record takes part independently with probability q (add/remove).
struct PoissonSampledEvent {
  static constexpr std::string_view kName = "poisson_sampled";
  static constexpr std::string_view kClassName = "PoissonSampledDpEvent";
  static constexpr std::string_view kMeaning =
      "each record takes part independently with probability q (add/remove)";
  double sampling_probability;
  EventPtr event;
  static constexpr auto fields() {
    return std::tuple{
        EventField<PoissonSampledEvent, double>{
            "sampling_probability", &PoissonSampledEvent::sampling_probability, "q in [0, 1]"},
        EventField<PoissonSampledEvent, EventPtr>{"event", &PoissonSampledEvent::event,
                                                  "the mechanism sampled"}};
  }
};

/// A batch of m records drawn without replacement from N (replace-one).
struct SampledWithoutReplacementEvent {
  static constexpr std::string_view kName = "sampled_without_replacement";
  static constexpr std::string_view kClassName = "SampledWithoutReplacementDpEvent";
  static constexpr std::string_view kMeaning =
      "a batch of m of the N records, drawn without replacement (replace-one)";
  std::int64_t source_dataset_size;
  std::int64_t sample_size;
  EventPtr event;
  static constexpr auto fields() {
    using E = SampledWithoutReplacementEvent;
    return std::tuple{
        EventField<E, std::int64_t>{"source_dataset_size", &E::source_dataset_size, "N >= 1", 1},
        EventField<E, std::int64_t>{"sample_size", &E::sample_size, "m in [0, N]", 0},
        EventField<E, EventPtr>{"event", &E::event, "the mechanism sampled"}};
  }
};

/// An operation with no privacy impact.
struct NoOpEvent {
  static constexpr std::string_view kName = "no_op";
  static constexpr std::string_view kClassName = "NoOpDpEvent";
  static constexpr std::string_view kMeaning = "an operation with no privacy impact";
  static constexpr auto fields() { return std::tuple{}; }
};

/// An operation that is not differentially private: ε = ∞.
struct NonPrivateEvent {
  static constexpr std::string_view kName = "non_private";
  static constexpr std::string_view kClassName = "NonPrivateDpEvent";
  static constexpr std::string_view kMeaning =
      "an operation without a privacy guarantee (epsilon = inf)";
  static constexpr auto fields() { return std::tuple{}; }
};

/// A mechanism known only to be (ε, δ)-DP.
struct EpsilonDeltaEvent {
  static constexpr std::string_view kName = "epsilon_delta";
  static constexpr std::string_view kClassName = "EpsilonDeltaDpEvent";
  static constexpr std::string_view kMeaning = "a mechanism known only to be (epsilon, delta)-DP";
  double epsilon;
  double delta;
  static constexpr auto fields() {
    using E = EpsilonDeltaEvent;
    return std::tuple{EventField<E, double>{"epsilon", &E::epsilon, "epsilon >= 0"},
                      EventField<E, double>{"delta", &E::delta, "delta in [0, 1]"}};
  }
};

/// Discrete Laplace noise DLap(a) (mass ∝ e^{−a|x|} on the integers) added to
/// an integer query whose L1 sensitivity is `sensitivity`.
struct DiscreteLaplaceEvent {
  static constexpr std::string_view kName = "discrete_laplace";
  static constexpr std::string_view kClassName = "DiscreteLaplaceDpEvent";
  static constexpr std::string_view kMeaning =
      "discrete Laplace noise, mass proportional to exp(-a|x|), on an integer query";
  double noise_parameter;
  std::int64_t sensitivity;
  static constexpr auto fields() {
    using E = DiscreteLaplaceEvent;
    return std::tuple{EventField<E, double>{"noise_parameter", &E::noise_parameter, "a, > 0"},
                      EventField<E, std::int64_t>{"sensitivity", &E::sensitivity,
                                                  "integer L1 sensitivity, >= 1", 1}};
  }
};

/// Univariate discrete Gaussian noise (mass ∝ e^{−x²/(2σ²)} on the integers,
/// Canonne, Kamath & Steinke 2020) on an integer query of sensitivity Δ.
struct DiscreteGaussianEvent {
  static constexpr std::string_view kName = "discrete_gaussian";
  static constexpr std::string_view kClassName = "DiscreteGaussianDpEvent";
  static constexpr std::string_view kMeaning =
      "univariate discrete Gaussian noise, mass proportional to exp(-x^2/(2 sigma^2)), on an "
      "integer query";
  double sigma;
  std::int64_t sensitivity = 1;
  /// dp_accounting's `dimension`: only 1 (univariate) is analysed here; 0
  /// stands for "not given" (dp_accounting's None, unknown).
  std::int64_t dimension = 1;
  static constexpr auto fields() {
    using E = DiscreteGaussianEvent;
    return std::tuple{
        EventField<E, double>{"sigma", &E::sigma, "sigma, > 0"},
        EventField<E, std::int64_t>{"sensitivity", &E::sensitivity,
                                    "integer sensitivity, >= 1 (default 1)", 1, true},
        EventField<E, std::int64_t>{"dimension", &E::dimension,
                                    "1: univariate (the default; others are refused)", 1, true}};
  }
};

/// k-ary randomized response: the true bucket with probability 1 − p, else a
/// uniformly random one of the k buckets.
struct RandomizedResponseEvent {
  static constexpr std::string_view kName = "randomized_response";
  static constexpr std::string_view kClassName = "RandomizedResponseDpEvent";
  static constexpr std::string_view kMeaning =
      "k-ary randomized response: the true bucket w.p. 1 - p, else a uniform one";
  double noise_parameter;
  std::int64_t num_buckets;
  static constexpr auto fields() {
    using E = RandomizedResponseEvent;
    return std::tuple{EventField<E, double>{"noise_parameter", &E::noise_parameter, "p in [0, 1]"},
                      EventField<E, std::int64_t>{"num_buckets", &E::num_buckets, "k, >= 1", 1}};
  }
};

/// A mechanism satisfying (ξ, ρ)-zCDP: RDP ξ + ρα at every order α
/// (Bun & Steinke 2016, Def. 1.1).
struct ZcdpEvent {
  static constexpr std::string_view kName = "zcdp";
  static constexpr std::string_view kClassName = "ZCDpEvent";
  static constexpr std::string_view kMeaning =
      "a mechanism satisfying (xi, rho)-zCDP: RDP xi + rho * alpha at every order";
  double rho;
  double xi = 0;
  static constexpr auto fields() {
    using E = ZcdpEvent;
    return std::tuple{EventField<E, double>{"rho", &E::rho, "rho >= 0"},
                      EventField<E, double>{"xi", &E::xi, "xi >= 0 (default 0)", 0, true}};
  }
};

/// The ε-DP exponential mechanism (ε-bounded range, Durfee & Rogers 2019).
struct ExponentialMechanismEvent {
  static constexpr std::string_view kName = "exponential_mechanism";
  static constexpr std::string_view kClassName = "ExponentialMechanismDpEvent";
  static constexpr std::string_view kMeaning =
      "the epsilon-DP exponential mechanism (epsilon-bounded range)";
  double epsilon;
  static constexpr auto fields() {
    return std::tuple{EventField<ExponentialMechanismEvent, double>{
        "epsilon", &ExponentialMechanismEvent::epsilon, "epsilon >= 0"}};
  }
};

/// The ε-DP permute-and-flip mechanism (McKenna & Sheldon 2020).
struct PermuteAndFlipEvent {
  static constexpr std::string_view kName = "permute_and_flip";
  static constexpr std::string_view kClassName = "PermuteAndFlipDpEvent";
  static constexpr std::string_view kMeaning = "the epsilon-DP permute-and-flip mechanism";
  double epsilon;
  static constexpr auto fields() {
    return std::tuple{EventField<PermuteAndFlipEvent, double>{
        "epsilon", &PermuteAndFlipEvent::epsilon, "epsilon >= 0"}};
  }
};

/// Gaussian noise N(0, s²) on one side; on the other N(c_i, s²) with
/// probability p_i (Choquette-Choo et al. 2023).
struct MixtureOfGaussiansEvent {
  static constexpr std::string_view kName = "mixture_of_gaussians";
  static constexpr std::string_view kClassName = "MixtureOfGaussiansDpEvent";
  static constexpr std::string_view kMeaning =
      "N(0, s^2) against the mixture of N(c_i, s^2) with probabilities p_i";
  double standard_deviation;
  std::vector<double> sensitivities;
  std::vector<double> sampling_probs;
  static constexpr auto fields() {
    using E = MixtureOfGaussiansEvent;
    return std::tuple{
        EventField<E, double>{"standard_deviation", &E::standard_deviation, "s, > 0"},
        EventField<E, std::vector<double>>{"sensitivities", &E::sensitivities, "list of c_i >= 0"},
        EventField<E, std::vector<double>>{"sampling_probs", &E::sampling_probs,
                                           "list of p_i in [0, 1] summing to 1"}};
  }
};

/// The same event repeated `count` times.
struct SelfComposedEvent {
  static constexpr std::string_view kName = "self_composed";
  static constexpr std::string_view kClassName = "SelfComposedDpEvent";
  static constexpr std::string_view kMeaning = "the same event repeated count times";
  std::int64_t count;
  EventPtr event;
  static constexpr auto fields() {
    return std::tuple{EventField<SelfComposedEvent, std::int64_t>{
                          "count", &SelfComposedEvent::count, "repetitions, >= 0", 0},
                      EventField<SelfComposedEvent, EventPtr>{"event", &SelfComposedEvent::event,
                                                              "the event repeated"}};
  }
};

/// Different events, one after the other. Its spec form is the list itself:
/// {"composed": [EVENT, ...]}.
struct ComposedEvent {
  static constexpr std::string_view kName = "composed";
  static constexpr std::string_view kClassName = "ComposedDpEvent";
  static constexpr std::string_view kMeaning = "different events, one after the other";
  std::vector<EventPtr> events;
  static constexpr auto fields() {
    return std::tuple{EventField<ComposedEvent, std::vector<EventPtr>>{
        "events", &ComposedEvent::events, "a non-empty list of events"}};
  }
};

/// A batch of m records drawn with replacement from N (a record may enter it
/// several times).
struct SampledWithReplacementEvent {
  static constexpr std::string_view kName = "sampled_with_replacement";
  static constexpr std::string_view kClassName = "SampledWithReplacementDpEvent";
  static constexpr std::string_view kMeaning =
      "a batch of m draws with replacement from the N records";
  std::int64_t source_dataset_size;
  std::int64_t sample_size;
  EventPtr event;
  static constexpr auto fields() {
    using E = SampledWithReplacementEvent;
    return std::tuple{
        EventField<E, std::int64_t>{"source_dataset_size", &E::source_dataset_size, "N >= 1", 1},
        EventField<E, std::int64_t>{"sample_size", &E::sample_size, "m >= 0", 0},
        EventField<E, EventPtr>{"event", &E::event, "the mechanism sampled"}};
  }
};

/// Tree aggregation of Gaussian sums over one epoch, each record in at most
/// one step across all trees (Kairouz et al. 2021, App. D).
struct SingleEpochTreeAggregationEvent {
  static constexpr std::string_view kName = "single_epoch_tree_aggregation";
  static constexpr std::string_view kClassName = "SingleEpochTreeAggregationDpEvent";
  static constexpr std::string_view kMeaning =
      "DP-FTRL tree aggregation over one epoch (each record in one step of all trees)";
  double noise_multiplier;
  std::vector<std::int64_t> step_counts;
  static constexpr auto fields() {
    using E = SingleEpochTreeAggregationEvent;
    return std::tuple{
        EventField<E, double>{"noise_multiplier", &E::noise_multiplier,
                              "noise per node / sensitivity, > 0"},
        EventField<E, std::vector<std::int64_t>>{"step_counts", &E::step_counts,
                                                 "steps of each tree: a number or a list", 0}};
  }
};

/// The event run a random number of times, only the best run released
/// (Papernot & Steinke 2022). shape: 0 logarithmic, 1 geometric, ∞ Poisson,
/// otherwise truncated negative binomial.
struct RepeatAndSelectEvent {
  static constexpr std::string_view kName = "repeat_and_select";
  static constexpr std::string_view kClassName = "RepeatAndSelectDpEvent";
  static constexpr std::string_view kMeaning =
      "the event run a random number of times (mean, shape), only the best run released";
  EventPtr event;
  double mean;
  double shape;
  static constexpr auto fields() {
    using E = RepeatAndSelectEvent;
    return std::tuple{
        EventField<E, EventPtr>{"event", &E::event, "the event repeated"},
        EventField<E, double>{"mean", &E::mean, "mean number of runs, >= 1"},
        EventField<E, double>{"shape",
                              &E::shape,
                              "0 logarithmic, 1 geometric, \"inf\" Poisson, else truncated "
                              "negative binomial",
                              0,
                              false,
                              {},
                              true}};
  }
};

/// Poisson sampling with probability q from N records, the batch cut down to
/// at most B at random, then the Gaussian mechanism (arXiv 2508.15089).
struct TruncatedSubsampledGaussianEvent {
  static constexpr std::string_view kName = "truncated_subsampled_gaussian";
  static constexpr std::string_view kClassName = "TruncatedSubsampledGaussianDpEvent";
  static constexpr std::string_view kMeaning =
      "Poisson-sampled batch cut to at most B records, then the Gaussian mechanism";
  std::int64_t dataset_size;
  double sampling_probability;
  std::int64_t truncated_batch_size;
  double noise_multiplier;
  static constexpr auto fields() {
    using E = TruncatedSubsampledGaussianEvent;
    return std::tuple{
        EventField<E, std::int64_t>{"dataset_size", &E::dataset_size, "N >= 1", 1},
        EventField<E, double>{"sampling_probability", &E::sampling_probability, "q in [0, 1]"},
        EventField<E, std::int64_t>{"truncated_batch_size", &E::truncated_batch_size, "B >= 0", 0},
        EventField<E, double>{"noise_multiplier", &E::noise_multiplier, "sigma, > 0"}};
  }
};

/// One epoch of a loader that shuffles: a fresh uniformly random permutation
/// of the records, cut into `num_steps` consecutive batches, the mechanism run
/// once per batch; each record is in exactly one step. Analysed under
/// replace_special (zero-out) or replace_one: the dataset size is fixed.
/// dp_accounting (0.6) has no such class (kClassName is empty).
struct ShuffledEvent {
  static constexpr std::string_view kName = "shuffled";
  static constexpr std::string_view kClassName = "";
  static constexpr std::string_view kMeaning =
      "one epoch of shuffled batches: each record in exactly one of num_steps steps";
  std::int64_t num_steps;
  EventPtr event;
  static constexpr auto fields() {
    using E = ShuffledEvent;
    return std::tuple{
        EventField<E, std::int64_t>{"num_steps", &E::num_steps, "steps of the epoch, >= 1", 1},
        EventField<E, EventPtr>{"event", &E::event, "the mechanism of each step"}};
  }
};

/// One epoch of random allocation ("balls-in-bins", Feldman & Shenfeld 2025;
/// Chua et al. 2025): each record is put in `num_participations` of the
/// `num_steps` steps, chosen uniformly, independently of the other records.
/// Analysed under add_remove (or replace_special, the same pair here).
/// dp_accounting 0.6 has no such class (kClassName is empty): its
/// RandomAllocationDpEvent exists only in a pull request (#414), whose
/// `num_selected` (records' steps per epoch) is accepted as an alias of
/// num_participations, so that pull request's field names read as this kind.
struct RandomAllocationEvent {
  static constexpr std::string_view kName = "random_allocation";
  static constexpr std::string_view kClassName = "";
  static constexpr std::string_view kMeaning =
      "one epoch of balls-in-bins: each record in k uniformly chosen of num_steps steps";
  std::int64_t num_steps;
  std::int64_t num_participations = 1;
  EventPtr event;
  static constexpr auto fields() {
    using E = RandomAllocationEvent;
    return std::tuple{
        EventField<E, std::int64_t>{"num_steps", &E::num_steps, "steps of the epoch, >= 1", 1},
        EventField<E, std::int64_t>{"num_participations", &E::num_participations,
                                    "k, steps each record is in, 1 <= k <= num_steps (default 1)",
                                    1, true, "num_selected"},
        EventField<E, EventPtr>{"event", &E::event, "the mechanism of each step"}};
  }
};

/// A matrix mechanism A = B·C (DP-FTRL, banded matrix factorization) as one
/// release: the strategy's outputs C·x plus independent Gaussian noise of
/// standard deviation σ clipping norms per coordinate, where one record moves
/// C·x by at most Δ clipping norms (the L2 sensitivity of C under the run's
/// participation pattern, for one record's contributions of norm ≤ 1 each).
/// It is the Gaussian mechanism at σ/Δ (docs/matrix.md#matrix-mechanism);
/// Δ = 0: no record moves the output, no privacy loss. dp_accounting has no
/// such class (kClassName is empty).
struct MatrixMechanismEvent {
  static constexpr std::string_view kName = "matrix_mechanism";
  static constexpr std::string_view kClassName = "";
  static constexpr std::string_view kMeaning =
      "a matrix mechanism A = B C (DP-FTRL, BandMF): noise sigma on C x, C of L2 sensitivity "
      "Delta under the participation pattern; the gaussian at sigma / Delta";
  double noise_multiplier;
  double sensitivity;
  static constexpr auto fields() {
    using E = MatrixMechanismEvent;
    return std::tuple{
        EventField<E, double>{"noise_multiplier", &E::noise_multiplier,
                              "sigma, noise standard deviation / clipping norm, > 0"},
        EventField<E, double>{"sensitivity", &E::sensitivity,
                              "Delta >= 0, L2 sensitivity of C for one record's participations, "
                              "in clipping norms (add/remove)"}};
  }
};

/// Amplified banded matrix factorization (Choquette-Choo et al. 2023, arXiv
/// 2306.08153, Sec. 4, their amplification theorem for banded strategies): a b-banded
/// lower-triangular strategy C whose columns have L2 norm ≤ 1, the records split into b groups,
/// step t drawing a Poisson sample of rate q from group t mod b, noise σ. The kind asserts those
/// conditions (the verb that builds C checks them); it is then DP-SGD over
/// ⌈T/b⌉ Poisson-sampled Gaussian rounds at q and σ
/// (docs/matrix.md#amplified-banded). dp_accounting has no such class.
struct BandedMatrixFactorizationEvent {
  static constexpr std::string_view kName = "banded_matrix_factorization";
  static constexpr std::string_view kClassName = "";
  static constexpr std::string_view kMeaning =
      "amplified BandMF: b-banded C with column norms <= 1 (asserted), cyclic Poisson sampling "
      "in b groups; DP-SGD over ceil(T/b) rounds";
  double sampling_probability;
  double noise_multiplier;
  std::int64_t steps;
  std::int64_t bands;
  static constexpr auto fields() {
    using E = BandedMatrixFactorizationEvent;
    return std::tuple{
        EventField<E, double>{"sampling_probability", &E::sampling_probability,
                              "q in [0, 1], within the group a step draws from"},
        EventField<E, double>{"noise_multiplier", &E::noise_multiplier,
                              "sigma, noise standard deviation / clipping norm, > 0"},
        EventField<E, std::int64_t>{"steps", &E::steps, "T, steps of the run, >= 0", 0},
        EventField<E, std::int64_t>{"bands", &E::bands,
                                    "b, >= 1: the bands of C and the groups of records", 1}};
  }
};

struct DpEvent
    : std::variant<GaussianEvent, LaplaceEvent, PoissonSampledEvent, SampledWithoutReplacementEvent,
                   SelfComposedEvent, ComposedEvent, NoOpEvent, NonPrivateEvent, EpsilonDeltaEvent,
                   DiscreteLaplaceEvent, DiscreteGaussianEvent, RandomizedResponseEvent, ZcdpEvent,
                   ExponentialMechanismEvent, PermuteAndFlipEvent, MixtureOfGaussiansEvent,
                   SampledWithReplacementEvent, SingleEpochTreeAggregationEvent,
                   RepeatAndSelectEvent, TruncatedSubsampledGaussianEvent, ShuffledEvent,
                   RandomAllocationEvent, MatrixMechanismEvent, BandedMatrixFactorizationEvent> {
  using variant::variant;
};

/// Calls `f.template operator()<Kind>()` for every event kind, in DpEvent's order.
template <typename F>
void for_each_event_kind(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f.template operator()<std::variant_alternative_t<I, DpEvent::variant>>(), ...);
  }
  (std::make_index_sequence<std::variant_size_v<DpEvent::variant>>{});
}

/// Validating factories, one per kind (throw InvalidParameter naming the field).
EventPtr make_event(GaussianEvent e);
EventPtr make_event(LaplaceEvent e);
EventPtr make_event(PoissonSampledEvent e);
EventPtr make_event(SampledWithoutReplacementEvent e);
EventPtr make_event(SelfComposedEvent e);
EventPtr make_event(ComposedEvent e);
EventPtr make_event(NoOpEvent e);
EventPtr make_event(NonPrivateEvent e);
EventPtr make_event(EpsilonDeltaEvent e);
EventPtr make_event(DiscreteLaplaceEvent e);
EventPtr make_event(DiscreteGaussianEvent e);
EventPtr make_event(RandomizedResponseEvent e);
EventPtr make_event(ZcdpEvent e);
EventPtr make_event(ExponentialMechanismEvent e);
EventPtr make_event(PermuteAndFlipEvent e);
EventPtr make_event(MixtureOfGaussiansEvent e);
EventPtr make_event(SampledWithReplacementEvent e);
EventPtr make_event(SingleEpochTreeAggregationEvent e);
EventPtr make_event(RepeatAndSelectEvent e);
EventPtr make_event(TruncatedSubsampledGaussianEvent e);
EventPtr make_event(ShuffledEvent e);
EventPtr make_event(RandomAllocationEvent e);
EventPtr make_event(MatrixMechanismEvent e);
EventPtr make_event(BandedMatrixFactorizationEvent e);

/// |Σ p_i − 1| allowed for mixture_of_gaussians: probabilities written with
/// ~12 significant digits (or summed in floating point) still pass; a list
/// that is off by more is a mistake, not round-off.
inline constexpr double kProbabilitySumTolerance = 1e-9;

EventPtr make_gaussian(double noise_multiplier);

/// σ/c, a noise multiplier (or a Laplace scale) divided by a sensitivity
/// c >= 1 (replace-one's 2, a user's k records, √k releases). A positive σ
/// whose quotient underflows to 0 is held at the smallest double: 0 is no
/// noise at all (make_gaussian and the curves refuse it), and far above the
/// smallest double (σ below about 1e-154, where 1/σ² overflows) every
/// accountant's loss is already the σ → 0 limit (infinite, or 0 when nothing
/// is sampled): the answer is that limit, as for σ itself that small.
inline double scaled_noise_multiplier(double sigma, double c) {
  const double s = sigma / c;
  return s == 0 && sigma > 0 ? std::numeric_limits<double>::denorm_min() : s;
}
EventPtr make_laplace(double scale);
EventPtr make_poisson_sampled(double sampling_probability, EventPtr event);
EventPtr make_sampled_without_replacement(std::int64_t source_dataset_size,
                                          std::int64_t sample_size, EventPtr event);
EventPtr make_self_composed(std::int64_t count, EventPtr event);
EventPtr make_composed(std::vector<EventPtr> events);

/// The DP-SGD run: `steps` Poisson-sampled Gaussian steps.
EventPtr make_dp_sgd(double sampling_probability, double noise_multiplier, std::int64_t steps);

/// Event name in the dp_accounting vocabulary ("gaussian", "poisson_sampled", ...).
std::string event_name(const DpEvent& event);

/// Depth of the trees of single_epoch_tree_aggregation: ⌈log2(max T + 1)⌉
/// (the number of tree nodes one leaf contributes to, Kairouz et al. 2021,
/// App. D).
int tree_aggregation_depth(std::span<const std::int64_t> step_counts);

/// The noise multiplier of the Gaussian mechanism a matrix mechanism is: σ/Δ
/// rounded down (toward more privacy loss), Δ > 0. A quotient past the
/// largest double is held there (rounded down still); one that underflows is
/// held at the smallest double, as scaled_noise_multiplier() does and for its
/// reason (docs/matrix.md#matrix-mechanism).
double matrix_mechanism_multiplier(double noise_multiplier, double sensitivity);

/// The rounds of DP-SGD an amplified banded run is: ⌈T/b⌉, b ≥ 1
/// (docs/matrix.md#amplified-banded).
std::int64_t banded_rounds(std::int64_t steps, std::int64_t bands);

/// Whether `Kind` is an existing event under another name, accounted as its
/// equivalent_event() (below): a whole run, never inside a sampled wrapper.
template <typename Kind>
constexpr bool is_equivalent_kind() {
  return std::is_same_v<Kind, MatrixMechanismEvent> ||
         std::is_same_v<Kind, BandedMatrixFactorizationEvent>;
}

/// The existing events these kinds are (docs/matrix.md#event-kinds), which the
/// walk (event_walk.hpp) accounts in their place: the Gaussian at
/// matrix_mechanism_multiplier() (no_op when Δ = 0), and DP-SGD's
/// self_composed(⌈T/b⌉, poisson_sampled(q, gaussian(σ))).
EventPtr equivalent_event(const MatrixMechanismEvent& e);
EventPtr equivalent_event(const BandedMatrixFactorizationEvent& e);

}  // namespace dpb
