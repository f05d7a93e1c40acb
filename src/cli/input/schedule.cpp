#include "cli/input/schedule.hpp"

#include <array>
#include <fstream>
#include <iostream>
#include <utility>

#include "accounting/dpsgd/schedule.hpp"
#include "cli/errors.hpp"
#include "cli/input/config_input.hpp"
#include "cli/input/input_file.hpp"
#include "report/render.hpp"

namespace dpb::cli {
namespace {

using P = RunParam;

/// Keys that say one thing in two ways (docs/sampling.md#schedules): a phase
/// that sets the first does not inherit the second from the command line
/// (a phase's batch size replaces the flags' -q, its epochs their --steps),
/// so that a phase never holds both by inheritance. --dataset-size stays
/// shared beside a phase's batch size; a phase's own -q drops it.
constexpr std::array<std::pair<P, P>, 11> kInheritShadows{{
    {P::sampling_rate, P::batch_size},
    {P::sampling_rate, P::dataset_size},
    {P::sampling_rate, P::accumulation_steps},
    {P::batch_size, P::sampling_rate},
    {P::dataset_size, P::sampling_rate},
    {P::steps, P::epochs},
    {P::steps, P::last_batch},
    {P::epochs, P::steps},
    {P::noise_multiplier, P::group_noise_multipliers},
    {P::group_noise_multipliers, P::noise_multiplier},
    {P::sampling, P::participations},
}};

/// The phase's values over the flags': a flag's value where the phase sets
/// neither that key nor one that shadows it.
GivenValues inherited(const GivenValues& phase, const GivenValues& flags) {
  GivenValues out = phase;
  for (const auto& p : kRunParameters) {
    const std::size_t i = index_of(p.id);
    if (out[i] || !flags[i]) continue;
    bool shadowed = false;
    for (const auto& [set, dropped] : kInheritShadows)
      shadowed = shadowed || (dropped == p.id && phase[index_of(set)]);
    if (!shadowed) out[i] = flags[i];
  }
  return out;
}

/// Which phase `text` names: a phase's name, else its number from 1.
std::size_t phase_named(const std::string& text, const std::vector<std::string>& names,
                        const std::vector<bool>& named) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (named[i] && names[i] == text) return i;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
      text.size() < 8) {
    const std::size_t n = std::stoul(text);
    if (n >= 1 && n <= names.size()) return n - 1;
  }
  std::string known;
  for (std::size_t i = 0; i < names.size(); ++i)
    known += (known.empty() ? "" : ", ") + (named[i] ? names[i] : std::to_string(i + 1));
  throw UsageError("--phase: no phase '" + text + "' in the schedule (its phases: " + known +
                   "; a phase is named by its name or its number from 1)");
}

std::vector<PhaseInput> read_file(const std::string& file) {
  InputFile input("--schedule", file, "a JSON array of phases, or JSON Lines");
  return read_schedule(input.stream(), input.name());
}

}  // namespace

CLI::Option* add_schedule_flag(CLI::App& app, std::string& file) {
  return record_file(app.add_option(
      "--schedule", file,
      "JSON or JSON Lines file ('-' for stdin): a run in phases, each an object with the run "
      "parameters' keys (as sweep --input lines) and a name; a phase inherits the run flags "
      "for the keys it does not set"));
}

Schedule load_schedule(const std::string& file, const DpSgdFlags& flags, Unknown unknown,
                       const std::string& phase) {
  if (!phase.empty() && unknown != Unknown::noise_multiplier)
    throw UsageError("--phase: only with sigma --schedule (the phase whose sigma is solved for)");
  const GivenValues from_flags = single_given(flags);
  // What the solver finds is not given on the command line: the phases give
  // the σ it scales, or the steps of the phases before the last.
  auto refuse_flag = [&](P p, const std::string& why) {
    if (from_flags[index_of(p)])
      throw UsageError(name_of(p, Naming::flags) + ": not with --schedule here (" + why + ")");
  };
  if (unknown == Unknown::noise_multiplier) {
    const std::string why =
        "each phase gives its sigma in the file, which are scaled by one factor; --phase solves "
        "one phase's";
    refuse_flag(P::noise_multiplier, why);
    refuse_flag(P::group_noise_multipliers, why);
  }
  if (unknown == Unknown::steps) {
    const std::string why =
        "the last phase's steps are solved for; the other phases give theirs in the file";
    refuse_flag(P::steps, why);
    refuse_flag(P::epochs, why);
  }
  const std::vector<PhaseInput> inputs = read_file(file);
  Schedule out;
  std::vector<bool> named;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& name = inputs[i].name;
    for (std::size_t j = 0; name && j < i; ++j)
      if (named[j] && out.names[j] == *name)
        throw UsageError("--schedule: phase " + std::to_string(i + 1) + ": name: '" + *name +
                         "' is also phase " + std::to_string(j + 1) +
                         "'s name (give each phase its own)");
    out.names.push_back(name ? *name : std::to_string(i + 1));
    named.push_back(name.has_value());
  }
  if (!phase.empty()) out.solved = phase_named(phase, out.names, named);
  if (unknown == Unknown::steps) out.solved = inputs.size() - 1;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string where = "--schedule: phase " + std::to_string(i + 1) +
                              (named[i] ? " (" + out.names[i] + ")" : std::string()) + ": ";
    const Unknown mine = out.solved == i ? unknown : Unknown::none;
    try {
      out.phases.push_back(derive_phase(inputs[i], from_flags, mine));
    } catch (const UsageError& e) {
      throw UsageError(where + e.what());
    }
  }
  if (const auto why = mixed_relation(out.phases)) throw UsageError("--schedule: " + *why);
  return out;
}

DpSgdRun derive_phase(const PhaseInput& phase, const GivenValues& base, Unknown unknown) {
  return derive(values_of(inherited(phase.values, base), Naming::keys), unknown, Naming::keys);
}

std::optional<std::string> mixed_relation(const std::vector<DpSgdRun>& phases) {
  const auto other = phase_of_other_relation(phases);
  if (!other) return std::nullopt;
  const std::size_t i = *other;
  return "phase " + std::to_string(i + 1) + ": sampling: its scheme is analysed under " +
         std::string(to_string(run_relation(phases[i]))) + " neighbouring, phase 1's under " +
         std::string(to_string(run_relation(phases.front()))) +
         "; the phases of one run must share one relation (poisson and balls-in-bins: "
         "add_remove; without-replacement: replace_one; shuffle: replace_special)";
}

void add_schedule_inputs(report::Record& inputs, const std::string& file, const Schedule& schedule,
                         Unknown unknown) {
  inputs.add("schedule", report::text(file == "-" ? "stdin" : file));
  std::string phases = "[";
  std::vector<report::Record> records;
  for (std::size_t i = 0; i < schedule.phases.size(); ++i) {
    report::Record r;
    r.add("phase", report::text(schedule.names[i]));
    add_inputs(r, schedule.phases[i], schedule.solved == i ? unknown : Unknown::none);
    phases += (i == 0 ? "" : ",") + report::record_json(r);
    records.push_back(std::move(r));
  }
  inputs.add("phases", report::visible(report::json(phases + "]"), report::Show::data));
  for (std::size_t i = 0; i < records.size(); ++i) {
    auto& cells = records[i].cells;
    cells.erase(cells.begin());  // the name is the line's label
    inputs.add("phase " + schedule.names[i],
               report::visible(report::text(report::record_text(records[i])), report::Show::text));
  }
  if (unknown != Unknown::steps)
    inputs.add("total_steps", report::integer(schedule_steps(schedule.phases)));
}

}  // namespace dpb::cli
