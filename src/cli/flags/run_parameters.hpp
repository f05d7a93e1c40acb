#pragma once
// The DP-SGD run parameters, defined once. kRunParameters (flag names, JSON
// Lines key, kind and range, help, default) drives everything that lists
// them: the flags' declaration, parsing one run, sweeps and --input lines,
// the names in messages, the refusal of run flags beside --spec or --input,
// and the man page's RUN PARAMETERS (generated from the table). The
// arithmetic (q = B/N, T = ⌈E·N/B⌉ or E·⌊N/B⌋ / E·⌈N/B⌉ with --last-batch)
// is accounting/dpsgd/dp_sgd_run.hpp's.
#include <CLI/CLI.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accounting/answer.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/run_calibration.hpp"
#include "cli/flags/choices.hpp"
#include "report/record.hpp"

namespace dpb::cli {

using dpb::kRunParamCount;
using dpb::RunParam;

/// What a parameter's value is, and so how it is parsed.
enum class ParamKind {
  probability,    ///< a number in [0, 1]
  positive_real,  ///< a finite number > 0
  count,          ///< an integer in [1, 2^53]
  choice,         ///< one of choice_names(): kSamplingChoices, kLastBatchChoices
  positive_list,  ///< a non-empty list of finite numbers > 0 (one value)
};

inline constexpr std::array<Choice<Sampling>, 4> kSamplingChoices{{
    {"poisson", Sampling::poisson},
    {"without-replacement", Sampling::without_replacement},
    {"shuffle", Sampling::shuffle},
    {"balls-in-bins", Sampling::balls_in_bins},
}};
/// PyTorch DataLoader's words: drop_last=True drops an epoch's last partial batch.
inline constexpr std::array<Choice<LastBatch>, 2> kLastBatchChoices{{
    {"drop", LastBatch::drop},
    {"keep", LastBatch::keep},
}};
/// Where noise given as a standard deviation is added: Opacus and Keras state the std of the
/// noise on the mean gradient, the DP-SGD papers the std on the sum.
inline constexpr std::array<Choice<NoiseOn>, 2> kNoiseOnChoices{{
    {"sum", NoiseOn::sum},
    {"mean", NoiseOn::mean},
}};

struct RunParameter {
  RunParam id;
  std::string_view names;  ///< CLI11 names, e.g. "-q,--sampling-rate"
  std::string_view flag;   ///< the flag messages name, e.g. "--sampling-rate"
  std::string_view key;    ///< the JSON Lines key (and inputs/result field)
  ParamKind kind;
  std::string_view help;
  std::string_view default_value;  ///< "" when there is none
  /// sweep: a list gives one row per value; rows nest by rank, smallest
  /// outermost (q or batch size, then σ, then steps or epochs). 0: one value.
  int sweep_rank;
  /// Stands in place of another parameter (given together: refused).
  std::optional<RunParam> instead_of;
};

inline constexpr std::array<RunParameter, kRunParamCount> kRunParameters{{
    {RunParam::sampling_rate, "-q,--sampling-rate", "--sampling-rate", "sampling_rate",
     ParamKind::probability, "Poisson sampling probability of a record per step, in [0, 1]", "", 1,
     std::nullopt},
    {RunParam::noise_multiplier, "--sigma,--noise-multiplier", "--noise-multiplier",
     "noise_multiplier", ParamKind::positive_real,
     "noise standard deviation / L2 clipping norm, > 0", "", 2, std::nullopt},
    {RunParam::steps, "-T,--steps", "--steps", "steps", ParamKind::count,
     "number of noisy steps, an integer >= 1", "", 3, std::nullopt},
    {RunParam::dataset_size, "--dataset-size", "--dataset-size", "dataset_size", ParamKind::count,
     "N: records in the dataset (q = B/N)", "", 0, std::nullopt},
    {RunParam::batch_size, "--batch-size", "--batch-size", "batch_size", ParamKind::count,
     "B: expected batch size (q = B/N; with --accumulation-steps, the physical micro-batch)", "", 1,
     std::nullopt},
    {RunParam::accumulation_steps, "--accumulation-steps", "--accumulation-steps",
     "accumulation_steps", ParamKind::count,
     "k: micro-batches of --batch-size accumulated per optimizer step; the logical batch B*k is "
     "what is sampled (q = B*k/N, T = ceil(epochs * N / (B*k))) and --steps count optimizer "
     "steps",
     "1", 1, std::nullopt},
    {RunParam::epochs, "--epochs", "--epochs", "epochs", ParamKind::positive_real,
     "passes over the data: T = ceil(epochs * N / B), or ceil(epochs / q) with -q; with "
     "--last-batch, epochs * floor(N / B) or epochs * ceil(N / B)",
     "", 3, std::nullopt},
    {RunParam::last_batch, "--last-batch", "--last-batch", "last_batch", ParamKind::choice,
     "steps per epoch as PyTorch's DataLoader counts them: drop (the last partial batch, "
     "T = epochs * floor(N / B)) | keep (T = epochs * ceil(N / B)); needs --dataset-size, "
     "--batch-size and whole --epochs (without it T = ceil(epochs * N / B))",
     "", 0, std::nullopt},
    {RunParam::sampling, "--sampling", "--sampling", "sampling", ParamKind::choice,
     "how batches are drawn: poisson (default; add/remove) | without-replacement (B of N; "
     "replace-one) | shuffle (a fresh permutation per epoch cut into batches; replace-special) | "
     "balls-in-bins (each record in --participations random steps of each epoch; add/remove)",
     "poisson", 0, std::nullopt},
    {RunParam::group_noise_multipliers, "--group-noise-multipliers", "--group-noise-multipliers",
     "group_noise_multipliers", ParamKind::positive_list,
     "per-layer clipping: z1,z2,... in place of --noise-multiplier; they act as "
     "z* = 1/sqrt(sum 1/z_m^2)",
     "", 0, RunParam::noise_multiplier},
    {RunParam::participations, "--participations", "--participations", "participations",
     ParamKind::count,
     "with --sampling balls-in-bins: k, the steps of each epoch every record is in, 1 <= k <= "
     "steps per epoch",
     "", 0, std::nullopt},
    {RunParam::records_per_user, "--records-per-user", "--records-per-user", "records_per_user",
     ParamKind::count,
     "the unit of privacy: each person owns up to k records, all of which differ between "
     "neighbours (user-level); 1 = record-level",
     "", 0, std::nullopt},
    {RunParam::clipping_count_noise, "--clipping-count-noise", "--clipping-count-noise",
     "clipping_count_noise", ParamKind::positive_real,
     "adaptive clipping (Andrew et al. 2021): sigma_b, the noise deviation of the count of "
     "unclipped examples released each step, summed as b - 1/2 (for a plain 0/1 count give "
     "sigma_b / 2); the run is accounted at 1/sqrt(1/sigma^2 + 1/(2 sigma_b)^2), and sigma solves "
     "give the gradient's (1/sigma^2 - 1/(2 sigma_b)^2)^(-1/2)",
     "", 0, std::nullopt},
    {RunParam::noise_std, "--noise-std,--noise-sd", "--noise-std", "noise_std",
     ParamKind::positive_real,
     "the noise as a standard deviation, with --clipping-norm C, in place of --noise-multiplier: "
     "sigma = std / C (std * B / C with --noise-on mean)",
     "", 2, RunParam::noise_multiplier},
    {RunParam::clipping_norm, "--clipping-norm", "--clipping-norm", "clipping_norm",
     ParamKind::positive_real,
     "C: the L2 clipping norm: with --noise-std, sigma = std / C; with a noise multiplier, the "
     "noise std it means is stated (solving for sigma, the std it needs)",
     "", 0, std::nullopt},
    {RunParam::noise_on, "--noise-on", "--noise-on", "noise_on", ParamKind::choice,
     "where the --noise-std noise is added: sum (default; of the clipped gradients) | mean (of "
     "the expected batch B, as Opacus and Keras state it: sigma = std * B / C; needs "
     "--dataset-size and --batch-size)",
     "", 0, std::nullopt},
    {RunParam::clients, "--clients", "--clients", "clients", ParamKind::count,
     "federated learning: clients in the population, in place of --dataset-size; the unit of "
     "privacy is one client (all its data)",
     "", 0, RunParam::dataset_size},
    {RunParam::clients_per_round, "--clients-per-round", "--clients-per-round", "clients_per_round",
     ParamKind::count,
     "federated learning: clients sampled per round, in place of --batch-size (q = clients per "
     "round / clients; --sampling poisson: each client independently, without-replacement: "
     "exactly this many)",
     "", 1, RunParam::batch_size},
    {RunParam::rounds, "--rounds", "--rounds", "rounds", ParamKind::count,
     "federated learning: rounds (one noisy aggregate each), in place of --steps; a client's "
     "local steps are not rounds",
     "", 3, RunParam::steps},
}};

/// kRunParameters lists every RunParam once, in the enum's order (so that
/// run_parameter(p) is kRunParameters[p]): checked when this header compiles.
constexpr bool lists_every_parameter_in_order(
    const std::array<RunParameter, kRunParamCount>& table) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (static_cast<std::size_t>(table[i].id) != i) return false;
  return true;
}
static_assert(lists_every_parameter_in_order(kRunParameters),
              "kRunParameters must list RunParam's values in their declaration order");

const RunParameter& run_parameter(RunParam p);
/// The values a choice parameter takes (empty for the other kinds).
std::vector<std::string> choice_names(RunParam p);

/// How messages name the parameters: flags, or JSON keys of --input lines.
enum class Naming { flags, keys };
std::string name_of(RunParam p, Naming naming);

/// The DP-SGD flags as given. Every flag may hold a list (for sweeps);
/// single-run verbs take one value.
struct DpSgdFlags {
  std::vector<std::string> sampling_rate, noise_multiplier, steps, dataset_size, batch_size,
      accumulation_steps, epochs, last_batch, group_noise_multipliers, participations,
      records_per_user, clipping_count_noise, noise_std, clipping_norm, noise_on, clients,
      clients_per_round, rounds;
  std::string sampling = "poisson";
  bool sampling_given = false;  ///< --sampling was on the command line
};

/// Declares every run parameter's flag (kRunParameters, in order).
void add_dp_sgd_flags(CLI::App& app, DpSgdFlags& flags);
/// The texts given for `p` (none when its flag was not given).
std::vector<std::string> texts_of(const DpSgdFlags& flags, RunParam p);
bool given(const DpSgdFlags& flags, RunParam p);
/// Refuses every run flag given: "<flag>: not with <other> (<why>)".
void refuse_run_flags(const DpSgdFlags& flags, const std::string& other, const std::string& why);

/// One configuration's parameters as given (any may be missing).
using DpSgdValues = RunValues;

/// One parsed value of a parameter.
using ParamValue =
    std::variant<double, std::int64_t, Sampling, LastBatch, NoiseOn, std::vector<double>>;
/// Sets `p` (group multipliers also set σ = z*).
void set_value(DpSgdValues& values, RunParam p, const ParamValue& value);
/// The value of `p` under its JSON key (UsageError "key: must be ..., got
/// WHAT", WHAT as json_given() says it).
ParamValue parse_json_value(const RunParameter& p, const nlohmann::json& value);
/// A JSON value as a message says what was given: `a string "0.01"`, `the
/// number 1.5`, `a boolean (true)`, `an array`, `an object`, `null`; a long
/// string is cut at kMaxQuotedBytes.
std::string json_given(const nlohmann::json& value);
/// The most bytes of a given string a message quotes: a message is one line,
/// and a line of --input may be 1 MiB.
inline constexpr std::size_t kMaxQuotedBytes = 40;
/// Values given by key, checked for parameters that stand in for each other
/// (named as `naming` says) and set in table order.
DpSgdValues values_of(const std::array<std::optional<ParamValue>, kRunParamCount>& given,
                      Naming naming);

/// Each parameter's value as given (by flag or key), nullopt when not given.
using GivenValues = std::array<std::optional<ParamValue>, kRunParamCount>;
/// The flags of a single-run verb as given: at most one value each.
GivenValues single_given(const DpSgdFlags& flags);
/// The flags of a single-run verb: at most one value each.
DpSgdValues single_values(const DpSgdFlags& flags);
/// The largest sweep: 10⁷ combinations.
inline constexpr std::size_t kMaxSweepCombinations = 10'000'000;

/// Every combination of the flags' lists, q (or batch size) outermost, then
/// σ, then steps (or epochs), without holding them: combination i of size()
/// is made when asked for (a sweep of 10⁷ rows keeps flat memory).
class SweepGrid {
 public:
  explicit SweepGrid(const DpSgdFlags& flags);
  std::size_t size() const { return size_; }
  DpSgdValues at(std::size_t i) const;

 private:
  DpSgdValues base_;
  std::vector<std::pair<RunParam, std::vector<ParamValue>>> axes_;  ///< outermost first
  std::size_t size_ = 1;
};

/// Every combination of the flags' lists, in SweepGrid order.
std::vector<DpSgdValues> sweep_values(const DpSgdFlags& flags);

/// The parameter a verb solves for (it must then not be given).
using Unknown = RunUnknown;

/// A run parameter's place in kRunParameters and in GivenValues (RunParam's order).
inline std::size_t index_of(RunParam p) { return static_cast<std::size_t>(p); }

/// What `sweep --solve` takes (and a `sweep --input` line's "solve").
inline constexpr std::array<Choice<Unknown>, 3> kSolveChoices{{
    {"sigma", Unknown::noise_multiplier},
    {"steps", Unknown::steps},
    {"sampling-rate", Unknown::sampling_rate},
}};
/// A line's "solve" also takes the JSON key of the parameter it solves for.
inline constexpr std::array<Choice<Unknown>, 5> kSolveKeyChoices{{
    {"sigma", Unknown::noise_multiplier},
    {"noise_multiplier", Unknown::noise_multiplier},
    {"steps", Unknown::steps},
    {"sampling-rate", Unknown::sampling_rate},
    {"sampling_rate", Unknown::sampling_rate},
}};
/// The run parameter an unknown is (noise_multiplier, steps, sampling_rate;
/// `none` has none and is not asked).
RunParam solved_parameter(Unknown unknown);

/// accounting's derive_run() with its refusals naming flags or keys (UsageError).
DpSgdRun derive(const DpSgdValues& values, Unknown unknown, Naming naming = Naming::flags);
/// accounting's steps_for_epochs() with its errors naming flags.
std::int64_t steps_for_epochs_named(double epochs, double sampling_rate,
                                    std::optional<std::int64_t> dataset_size,
                                    std::optional<std::int64_t> batch_size,
                                    Naming naming = Naming::flags,
                                    std::optional<LastBatch> last_batch = std::nullopt,
                                    Sampling sampling = Sampling::poisson);
/// A RunParameterError's message with its parameters named as `naming` says.
std::string message_of(const RunParameterError& e, Naming naming);

/// With --epochs and no --sampling, one line on stderr: the figure assumes
/// Poisson sampling, which most data loaders do not do
/// (docs/guide.md#which-sampling-did-your-training-loop-do).
void note_assumed_poisson(const DpSgdFlags& flags, std::ostream& err);
/// With --clipping-count-noise, one line on stderr naming the combined multiplier the run is
/// accounted at (and, solving σ, the gradient's).
void note_clipping_count(const DpSgdRun& run, std::ostream& err);

/// The scheme as results name it: poisson, without_replacement, shuffle, balls_in_bins.
std::string sampling_name(Sampling s);

/// The parameters of a run, in report order (q, σ and T unless unknown).
void add_inputs(report::Record& inputs, const DpSgdRun& run, Unknown unknown = Unknown::none);

}  // namespace dpb::cli
