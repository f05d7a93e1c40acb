#include "cli/flags/run_parameters.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "accounting/dpsgd/run_forms.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {
namespace {

/// The DpSgdFlags member holding a parameter's texts (none for --sampling,
/// a single string with a default).
std::vector<std::string> DpSgdFlags::*list_member(RunParam p) {
  switch (p) {
    case RunParam::sampling_rate:
      return &DpSgdFlags::sampling_rate;
    case RunParam::noise_multiplier:
      return &DpSgdFlags::noise_multiplier;
    case RunParam::steps:
      return &DpSgdFlags::steps;
    case RunParam::dataset_size:
      return &DpSgdFlags::dataset_size;
    case RunParam::batch_size:
      return &DpSgdFlags::batch_size;
    case RunParam::accumulation_steps:
      return &DpSgdFlags::accumulation_steps;
    case RunParam::epochs:
      return &DpSgdFlags::epochs;
    case RunParam::last_batch:
      return &DpSgdFlags::last_batch;
    case RunParam::group_noise_multipliers:
      return &DpSgdFlags::group_noise_multipliers;
    case RunParam::participations:
      return &DpSgdFlags::participations;
    case RunParam::records_per_user:
      return &DpSgdFlags::records_per_user;
    case RunParam::clipping_count_noise:
      return &DpSgdFlags::clipping_count_noise;
    case RunParam::noise_std:
      return &DpSgdFlags::noise_std;
    case RunParam::clipping_norm:
      return &DpSgdFlags::clipping_norm;
    case RunParam::noise_on:
      return &DpSgdFlags::noise_on;
    case RunParam::clients:
      return &DpSgdFlags::clients;
    case RunParam::clients_per_round:
      return &DpSgdFlags::clients_per_round;
    case RunParam::rounds:
      return &DpSgdFlags::rounds;
    case RunParam::sampling:
      return nullptr;
  }
  return nullptr;
}

const Domain& domain_of(ParamKind kind) {
  return kind == ParamKind::probability ? kProbability : kPositive;
}

/// Calls `f` with the Choice table of choice parameter `p`; false for the
/// parameters of other kinds.
template <typename F>
bool with_choices(RunParam p, F&& f) {
  switch (p) {
    case RunParam::sampling:
      f(kSamplingChoices);
      return true;
    case RunParam::last_batch:
      f(kLastBatchChoices);
      return true;
    case RunParam::noise_on:
      f(kNoiseOnChoices);
      return true;
    case RunParam::sampling_rate:
    case RunParam::noise_multiplier:
    case RunParam::steps:
    case RunParam::dataset_size:
    case RunParam::batch_size:
    case RunParam::accumulation_steps:
    case RunParam::epochs:
    case RunParam::group_noise_multipliers:
    case RunParam::participations:
    case RunParam::records_per_user:
    case RunParam::clipping_count_noise:
    case RunParam::noise_std:
    case RunParam::clipping_norm:
    case RunParam::clients:
    case RunParam::clients_per_round:
    case RunParam::rounds:
      break;
  }
  return false;
}

/// The value of choice parameter `p` named `text` (a UsageError naming `name`
/// and the choices otherwise).
ParamValue parse_choice_value(RunParam p, std::string_view name, const std::string& text) {
  ParamValue out;
  if (!with_choices(p, [&](const auto& choices) { out = parse_choice(name, text, choices); }))
    throw UsageError(std::string(name) + ": takes no choice");
  return out;
}

/// Every value the texts of `p`'s flag give: one per list item for numbers
/// and counts, one in all for a choice or a list parameter.
std::vector<ParamValue> parse_texts(const RunParameter& p, const std::vector<std::string>& texts) {
  const std::string flag(p.flag);
  std::vector<ParamValue> out;
  switch (p.kind) {
    case ParamKind::probability:
    case ParamKind::positive_real:
      for (double x : parse_list(flag, texts, domain_of(p.kind))) out.emplace_back(x);
      break;
    case ParamKind::count:
      for (std::int64_t x : parse_integer_list(flag, texts, 1)) out.emplace_back(x);
      break;
    case ParamKind::choice:
      for (const auto& t : texts) out.push_back(parse_choice_value(p.id, flag, t));
      break;
    case ParamKind::positive_list:
      out.emplace_back(parse_list(flag, texts, kPositive));
      break;
  }
  return out;
}

using Given = std::array<std::optional<ParamValue>, kRunParamCount>;

/// Parameters that stand in for another may not be given beside it.
void check_instead_of(const std::array<bool, kRunParamCount>& present, Naming naming) {
  for (const auto& p : kRunParameters)
    if (p.instead_of && present[index_of(p.id)] && present[index_of(*p.instead_of)])
      throw UsageError(name_of(p.id, naming) + ": give either it or " +
                       name_of(*p.instead_of, naming) + ", not both");
}

}  // namespace

const RunParameter& run_parameter(RunParam p) { return kRunParameters[index_of(p)]; }

std::vector<std::string> choice_names(RunParam p) {
  std::vector<std::string> names;
  with_choices(p, [&names](const auto& choices) { names = choice_names(choices); });
  return names;
}

std::string name_of(RunParam p, Naming naming) {
  const auto& entry = run_parameter(p);
  return std::string(naming == Naming::flags ? entry.flag : entry.key);
}

RunParam solved_parameter(Unknown unknown) {
  switch (unknown) {
    case Unknown::steps:
      return RunParam::steps;
    case Unknown::sampling_rate:
      return RunParam::sampling_rate;
    case Unknown::noise_multiplier:
    case Unknown::none:
      break;
  }
  return RunParam::noise_multiplier;
}

std::string message_of(const RunParameterError& e, Naming naming) {
  std::string s;
  for (const auto& part : e.parts()) {
    if (const auto* text = std::get_if<std::string>(&part))
      s += *text;
    else if (const auto* param = std::get_if<RunParam>(&part))
      s += name_of(*param, naming);
    else  // a scheme, as --sampling takes it (also in messages about keys)
      s += choice_name(kSamplingChoices, std::get<Sampling>(part));
  }
  return s;
}

void add_dp_sgd_flags(CLI::App& app, DpSgdFlags& f) {
  for (const auto& p : kRunParameters) {
    const std::string names(p.names), help(p.help);
    if (auto member = list_member(p.id)) {
      CLI::Option* option = app.add_option(names, f.*member, help);
      if (p.kind == ParamKind::choice) record_choices(option, choice_names(p.id));
    } else {
      add_choice_option(app, names, f.sampling, kSamplingChoices, help)
          ->each([&f](const std::string&) { f.sampling_given = true; });
    }
  }
}

std::vector<std::string> texts_of(const DpSgdFlags& f, RunParam p) {
  if (auto member = list_member(p)) return f.*member;
  if (f.sampling_given || f.sampling != run_parameter(p).default_value) return {f.sampling};
  return {};
}

bool given(const DpSgdFlags& f, RunParam p) { return !texts_of(f, p).empty(); }

void refuse_run_flags(const DpSgdFlags& f, const std::string& other, const std::string& why) {
  for (const auto& p : kRunParameters)
    if (given(f, p.id))
      throw UsageError(std::string(p.flag) + ": not with " + other + " (" + why + ")");
}

void set_value(DpSgdValues& v, RunParam p, const ParamValue& x) {
  switch (p) {
    case RunParam::sampling_rate:
      v.sampling_rate = std::get<double>(x);
      return;
    case RunParam::noise_multiplier:
      v.noise_multiplier = std::get<double>(x);
      return;
    case RunParam::steps:
      v.steps = std::get<std::int64_t>(x);
      return;
    case RunParam::dataset_size:
      v.dataset_size = std::get<std::int64_t>(x);
      return;
    case RunParam::batch_size:
      v.batch_size = std::get<std::int64_t>(x);
      return;
    case RunParam::accumulation_steps:
      v.accumulation_steps = std::get<std::int64_t>(x);
      return;
    case RunParam::epochs:
      v.epochs = std::get<double>(x);
      return;
    case RunParam::last_batch:
      v.last_batch = std::get<LastBatch>(x);
      return;
    case RunParam::sampling:
      v.sampling = std::get<Sampling>(x);
      return;
    case RunParam::group_noise_multipliers:
      v.group_noise_multipliers = std::get<std::vector<double>>(x);
      v.noise_multiplier = grouped_noise_multiplier(v.group_noise_multipliers);
      return;
    case RunParam::participations:
      v.participations = std::get<std::int64_t>(x);
      return;
    case RunParam::records_per_user:
      v.records_per_user = std::get<std::int64_t>(x);
      return;
    case RunParam::clipping_count_noise:
      v.clipping_count_noise = std::get<double>(x);
      return;
    case RunParam::noise_std:
      v.noise_std = std::get<double>(x);
      return;
    case RunParam::clipping_norm:
      v.clipping_norm = std::get<double>(x);
      return;
    case RunParam::noise_on:
      v.noise_on = std::get<NoiseOn>(x);
      return;
    case RunParam::clients:
      v.clients = std::get<std::int64_t>(x);
      return;
    case RunParam::clients_per_round:
      v.clients_per_round = std::get<std::int64_t>(x);
      return;
    case RunParam::rounds:
      v.rounds = std::get<std::int64_t>(x);
      return;
  }
}

std::string json_given(const nlohmann::json& v) {
  // dump() with invalid UTF-8 replaced, so that a message never throws.
  const auto dumped = [](const nlohmann::json& x) {
    return x.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    if (text.size() <= kMaxQuotedBytes) return "a string " + dumped(v);
    return "a string " + dumped(nlohmann::json(text.substr(0, kMaxQuotedBytes))) + "...";
  }
  if (v.is_number()) return "the number " + dumped(v);
  if (v.is_boolean()) return "a boolean (" + dumped(v) + ")";
  if (v.is_array()) return v.empty() ? "an empty array" : "an array";
  if (v.is_object()) return "an object";
  return "null";
}

ParamValue parse_json_value(const RunParameter& p, const nlohmann::json& v) {
  const std::string key(p.key);
  switch (p.kind) {
    case ParamKind::probability:
    case ParamKind::positive_real: {
      const Domain& d = domain_of(p.kind);
      if (!v.is_number() || !d.contains(v.get<double>()))
        throw UsageError(key + ": must be " + d.description + ", got " + json_given(v));
      return v.get<double>();
    }
    case ParamKind::count: {
      const double d = v.is_number() ? v.get<double>() : 0;
      // An integer literal is read exactly: 9007199254740993 is past the
      // limit, not 2^53 (its nearest double).
      if (d > kMaxSteps ||
          (v.is_number_unsigned() && v.get<std::uint64_t>() > (std::uint64_t{1} << 53)))
        throw UsageError(key + ": must be at most 2^53 = 9007199254740992, got " + json_given(v));
      if (!v.is_number() || !(d >= 1) || d != std::floor(d))
        throw UsageError(key + ": must be an integer >= 1, got " + json_given(v));
      return static_cast<std::int64_t>(d);
    }
    case ParamKind::choice: {
      const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
      return parse_choice_value(p.id, key, text);
    }
    case ParamKind::positive_list: {
      std::vector<double> out;
      if (v.is_array())
        for (const auto& x : v) {
          if (!x.is_number() || !kPositive.contains(x.get<double>()))
            throw UsageError(key + ": must be a non-empty array of finite numbers > 0, got " +
                             json_given(x) + " in the array");
          out.push_back(x.get<double>());
        }
      if (out.empty())
        throw UsageError(key + ": must be a non-empty array of finite numbers > 0, got " +
                         json_given(v));
      return out;
    }
  }
  throw UsageError(key + ": unknown kind");
}

DpSgdValues values_of(const Given& given_values, Naming naming) {
  std::array<bool, kRunParamCount> present{};
  for (std::size_t i = 0; i < kRunParamCount; ++i) present[i] = given_values[i].has_value();
  check_instead_of(present, naming);
  DpSgdValues v;
  for (const auto& p : kRunParameters) {
    const auto& x = given_values[index_of(p.id)];
    if (x)
      set_value(v, p.id, *x);
    else if (!p.default_value.empty())
      set_value(v, p.id, parse_texts(p, {std::string(p.default_value)}).front());
  }
  return v;
}

/// A parameter that takes one value, given what reads as one number written
/// with a comma ("0,01", "1,000"): refused as such, before its parts are read
/// as a list (whose first part may fail on its own, "0" for a δ).
void refuse_comma_number(const RunParameter& p, const std::vector<std::string>& texts) {
  const bool whole = p.kind == ParamKind::count;
  if (!whole && p.kind != ParamKind::probability && p.kind != ParamKind::positive_real) return;
  const std::string hint = comma_number_hint(texts, whole);
  if (!hint.empty())
    throw UsageError(std::string(p.flag) + ": takes one value here, got '" + comma_joined(texts) +
                     "'" + hint);
}

GivenValues single_given(const DpSgdFlags& f) {
  Given values;
  for (const auto& p : kRunParameters) {
    const auto texts = texts_of(f, p.id);
    if (texts.empty()) continue;
    refuse_comma_number(p, texts);
    auto parsed = parse_texts(p, texts);
    if (parsed.size() != 1)
      throw UsageError(std::string(p.flag) + ": takes one value here, got '" + comma_joined(texts) +
                       "' (use 'dpbudget sweep' for lists)");
    values[index_of(p.id)] = std::move(parsed.front());
  }
  return values;
}

DpSgdValues single_values(const DpSgdFlags& f) { return values_of(single_given(f), Naming::flags); }

SweepGrid::SweepGrid(const DpSgdFlags& f) {
  Given fixed;
  std::array<std::vector<ParamValue>, kRunParamCount> lists;
  std::array<bool, kRunParamCount> present{};
  double total = 1;
  for (const auto& p : kRunParameters) {
    const auto texts = texts_of(f, p.id);
    if (texts.empty()) continue;
    const std::size_t i = index_of(p.id);
    present[i] = true;
    if (p.sweep_rank == 0) refuse_comma_number(p, texts);
    auto parsed = parse_texts(p, texts);
    if (p.sweep_rank > 0) {
      total *= static_cast<double>(parsed.size());
      lists[i] = std::move(parsed);
    } else if (parsed.size() != 1) {
      throw UsageError(std::string(p.flag) + ": takes one value here, got '" + comma_joined(texts) +
                       "' (use 'dpbudget sweep' for lists)");
    } else {
      fixed[i] = std::move(parsed.front());
    }
  }
  check_instead_of(present, Naming::flags);
  if (total > static_cast<double>(kMaxSweepCombinations))
    throw UsageError("sweep: more than " + std::to_string(kMaxSweepCombinations) + " combinations");
  base_ = values_of(fixed, Naming::flags);
  // Axes outermost first: by rank, then in table order.
  int max_rank = 0;
  for (const auto& p : kRunParameters) max_rank = std::max(max_rank, p.sweep_rank);
  for (int rank = 1; rank <= max_rank; ++rank)
    for (const auto& p : kRunParameters) {
      auto& list = lists[index_of(p.id)];
      if (p.sweep_rank != rank || list.empty()) continue;
      axes_.emplace_back(p.id, std::move(list));
    }
  size_ = 1;
  for (const auto& [id, list] : axes_) size_ *= list.size();
}

DpSgdValues SweepGrid::at(std::size_t i) const {
  DpSgdValues v = base_;
  // Mixed radix, the innermost (last) axis varying fastest; set outermost
  // first so that later values win as in a nested loop. At most one axis per
  // run parameter, so the digits fit a fixed array (no allocation per row).
  std::array<std::size_t, kRunParamCount> digit{};
  for (std::size_t a = axes_.size(); a-- > 0;) {
    digit[a] = i % axes_[a].second.size();
    i /= axes_[a].second.size();
  }
  for (std::size_t a = 0; a < axes_.size(); ++a)
    set_value(v, axes_[a].first, axes_[a].second[digit[a]]);
  return v;
}

std::vector<DpSgdValues> sweep_values(const DpSgdFlags& f) {
  const SweepGrid grid(f);
  std::vector<DpSgdValues> out;
  out.reserve(grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) out.push_back(grid.at(i));
  return out;
}

std::int64_t steps_for_epochs_named(double epochs, double sampling_rate,
                                    std::optional<std::int64_t> dataset_size,
                                    std::optional<std::int64_t> batch_size, Naming naming,
                                    std::optional<LastBatch> last_batch, Sampling sampling) {
  try {
    return steps_for_epochs(epochs, sampling_rate, dataset_size, batch_size, last_batch, sampling);
  } catch (const RunParameterError& e) {
    throw UsageError(message_of(e, naming));
  }
}

DpSgdRun derive(const DpSgdValues& v, Unknown unknown, Naming naming) {
  try {
    return derive_run(v, unknown);
  } catch (const RunParameterError& e) {
    throw UsageError(message_of(e, naming));
  }
}

void note_assumed_poisson(const DpSgdFlags& f, std::ostream& err) {
  if (f.epochs.empty() || f.sampling_given) return;
  err << "dpbudget: note: this assumes Poisson sampling (each record in each step with "
         "probability q); a loader that shuffles or draws fixed-size batches is another scheme: "
         "see --sampling\n";
}

void note_clipping_count(const DpSgdRun& run, std::ostream& err) {
  if (!run.clipping_count_noise) return;
  using report::Rounding;
  err << "dpbudget: note: --clipping-count-noise: gradient noise "
      << report::format_number(run.gradient_noise_multiplier, 6, Rounding::nearest)
      << " and the clipped count's noise "
      << report::format_number(*run.clipping_count_noise, 6, Rounding::nearest)
      << " (multiplier 2*sigma_b) act as one Gaussian of multiplier "
      << report::format_number(run.noise_multiplier, 6, Rounding::down)
      << ", which the figures are for (Andrew et al. 2021, Theorem 1)\n";
}

std::string sampling_name(Sampling s) {
  // Results name the scheme with an underscore (as the neighbouring relations).
  return std::string(to_string(s));
}

void add_inputs(report::Record& in, const DpSgdRun& run, Unknown unknown) {
  auto key = [](RunParam p) { return std::string(run_parameter(p).key); };
  const bool epochs_given = run.epochs && unknown != Unknown::steps;
  if (unknown != Unknown::sampling_rate)
    in.add(key(RunParam::sampling_rate), report::number(run.sampling_rate));
  if (unknown != Unknown::noise_multiplier) {
    // z* of grouped multipliers is rounded down (smaller σ, more loss). With adaptive
    // clipping's count, noise_multiplier is the gradient's, as the flag gave it.
    const double gradient =
        run.clipping_count_noise ? run.gradient_noise_multiplier : run.noise_multiplier;
    // σ derived from grouped multipliers or from a noise std is shown rounded down as it is used.
    const bool derived = !run.group_noise_multipliers.empty() || run.noise_std;
    in.add(key(RunParam::noise_multiplier),
           report::number(gradient, derived ? report::Rounding::down : report::Rounding::nearest));
    if (!run.group_noise_multipliers.empty())
      in.add(key(RunParam::group_noise_multipliers), report::numbers(run.group_noise_multipliers));
    if (run.noise_std)
      in.add(key(RunParam::noise_std), report::number(*run.noise_std));
    else if (run.clipping_norm)
      in.add(key(RunParam::noise_std), report::number(noise_std_of(run), report::Rounding::up));
  }
  if (run.clipping_norm) {
    in.add(key(RunParam::clipping_norm), report::number(*run.clipping_norm));
    in.add(key(RunParam::noise_on),
           report::text(std::string(choice_name(kNoiseOnChoices, run.noise_on))));
  }
  if (run.clipping_count_noise) {
    in.add(key(RunParam::clipping_count_noise), report::number(*run.clipping_count_noise));
    if (unknown != Unknown::noise_multiplier)
      in.add("combined_noise_multiplier",
             report::number(run.noise_multiplier, report::Rounding::down));
  }
  // A federated run's N, B and T are its clients, clients per round and rounds.
  const bool fl = run.federated;
  if (unknown != Unknown::steps && !(unknown == Unknown::sampling_rate && epochs_given))
    in.add(key(fl ? RunParam::rounds : RunParam::steps), report::integer(run.steps));
  if (run.dataset_size)
    in.add(key(fl ? RunParam::clients : RunParam::dataset_size),
           report::integer(*run.dataset_size));
  // run.batch_size is the logical batch; the flag gave the physical one.
  if (run.batch_size && unknown != Unknown::sampling_rate)
    in.add(key(fl ? RunParam::clients_per_round : RunParam::batch_size),
           report::integer(*run.batch_size / run.accumulation_steps));
  if (run.accumulation_steps > 1) {
    in.add(key(RunParam::accumulation_steps), report::integer(run.accumulation_steps));
    if (run.batch_size && unknown != Unknown::sampling_rate)
      in.add("logical_batch_size", report::integer(*run.batch_size));
  }
  if (epochs_given) in.add(key(RunParam::epochs), report::number(*run.epochs));
  if (run.last_batch)
    in.add(key(RunParam::last_batch),
           report::text(std::string(choice_name(kLastBatchChoices, *run.last_batch))));
  in.add(key(RunParam::sampling), report::text(sampling_name(run.sampling)));
  if ((run.sampling == Sampling::shuffle || run.sampling == Sampling::balls_in_bins) &&
      run.dataset_size && run.batch_size && unknown != Unknown::sampling_rate) {
    in.add("steps_per_epoch", report::integer(epoch_steps(run)));
    if (unknown != Unknown::steps) in.add("accounted_epochs", report::integer(epochs_started(run)));
  }
  if (run.sampling == Sampling::balls_in_bins)
    in.add(key(RunParam::participations), report::integer(run.participations));
  if (fl) in.add("unit", report::text("one client"));
  if (run.records_per_user > 1) {
    in.add(key(RunParam::records_per_user), report::integer(run.records_per_user));
    in.add("unit", report::text("user-level, " + std::to_string(run.records_per_user) +
                                " records per user"));
  }
}

}  // namespace dpb::cli
