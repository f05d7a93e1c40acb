#include "cli/run/sweep_jobs.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "accounting/dpsgd/schedule.hpp"
#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/input/config_input.hpp"
#include "cli/input/input_file.hpp"
#include "cli/input/schedule.hpp"
#include "cli/input/spec_input.hpp"
#include "report/number_format.hpp"
#include "report/render.hpp"

namespace dpb::cli {
namespace {

std::string describe(const SweepJob& job) {
  if (job.line) {
    // An input line: where it is, and its name (docs/guide.md#sweeps-and-the-budget-gate).
    std::string s = job.source + ":" + std::to_string(job.line);
    if (job.name) s += " '" + report::escape_control(*job.name) + "'";
    return s;
  }
  auto n = [](double v) { return report::format_number(v, 6, report::Rounding::nearest); };
  std::string s = "q=" + n(job.run.sampling_rate);
  if (job.unknown != Unknown::noise_multiplier) s += " sigma=" + n(job.run.noise_multiplier);
  if (job.unknown != Unknown::steps) s += " steps=" + std::to_string(job.run.steps);
  return s;
}

/// The run's parameters, first in each row; in text, those that hold one
/// value in every row move above the table.
void add_run_columns(report::Record& r, const SweepJob& job) {
  const std::size_t first = r.cells.size();
  if (job.name) r.add("name", report::text(*job.name));
  if (job.spec)
    r.add("spec", report::json(job.spec_json));
  else
    add_inputs(r, job.run, job.unknown);
  for (std::size_t i = first; i < r.cells.size(); ++i) r.cells[i].second.hoist = true;
}

/// `"solve": "<key>"`, as messages suggest it.
std::string solve_key_text(Unknown unknown) {
  return "\"solve\": \"" + std::string(run_parameter(solved_parameter(unknown)).key) + "\"";
}

/// Why line `c` cannot be computed as it stands: its "solve" disagrees with
/// --solve (`unknown`), it solves beside a budget gate, or it lacks a run
/// parameter it does not solve for. Keys named as on the line.
std::optional<std::string> solve_refusal(const ConfigLine& c, Unknown unknown, bool gate) {
  if (c.solve && unknown != Unknown::none && *c.solve != unknown)
    return "solve: \"" + std::string(run_parameter(solved_parameter(*c.solve)).key) +
           "\" on the line, but --solve " + std::string(choice_name(kSolveChoices, unknown)) +
           " on the command line (give one of them)";
  const Unknown solving = c.solve.value_or(unknown);
  if (c.solve && gate)
    return "solve: not with --max-epsilon (a solved row meets its own target epsilon; give "
           "the parameter to gate the line)";
  const DpSgdValues& v = c.values;
  if (solving != Unknown::sampling_rate && !v.sampling_rate && !v.batch_size &&
      !v.clients_per_round)
    return v.sampling == Sampling::poisson
               ? "sampling_rate: missing (give it, or dataset_size and batch_size, or " +
                     solve_key_text(Unknown::sampling_rate) + ")"
               : "batch_size: missing (give it and dataset_size, or " +
                     solve_key_text(Unknown::sampling_rate) + ")";
  if (solving != Unknown::noise_multiplier && !v.noise_multiplier && !v.noise_std)
    return "noise_multiplier: missing (give it, or noise_std with clipping_norm, or " +
           solve_key_text(Unknown::noise_multiplier) + ")";
  if (solving != Unknown::steps && !v.steps && !v.epochs && !v.rounds)
    return "steps: missing (give it or epochs, or " + solve_key_text(Unknown::steps) + ")";
  return std::nullopt;
}

}  // namespace

std::vector<SweepRow> compute(const SweepJob& job, const SweepSettings& s) {
  std::vector<SweepRow> rows;
  if (job.unknown == Unknown::none) {
    // The same question `epsilon` asks (the run's rows, its companions, the
    // recommended row), and the same gate on its smallest sound upper bound.
    Question q;
    q.event = job.spec ? job.spec : dp_sgd_event(job.run);
    if (!job.spec) q.run = job.run;
    q.event_is_own = job.event_is_own;
    q.accountants = s.choice;
    if (job.neighbouring) q.accountants.options.neighbouring = job.neighbouring;
    q.targets = job.deltas;
    q.what = describe(job);
    const Answer a = answer(q);
    std::optional<double> budget = s.max_epsilon;
    for (double b : job.epsilons) budget = budget ? std::min(*budget, b) : b;
    std::optional<BudgetCheck> check;
    if (budget) check = check_budget(q, a, *budget);
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
      SweepRow row;
      row.subject = q.what;
      add_run_columns(row.record, job);
      // The row's own cells; its `sampling` (the Poisson estimate's scheme
      // beside a shuffled run) replaces the run's column of that name.
      for (auto& added : answer_record(q, a, i).cells) {
        const std::string& key = added.first;  // (clang 14: no captured structured bindings)
        auto same = std::find_if(row.record.cells.begin(), row.record.cells.end(),
                                 [&key](const auto& c) { return c.first == key; });
        if (same != row.record.cells.end())
          same->second = std::move(added.second);
        else
          row.record.cells.push_back(std::move(added));
      }
      if (check) {
        // The run's verdict at the row's δ: its smallest sound upper bound
        // against the budget (every row of the run says the same).
        row.record.add("budget", report::hoisted(report::number(*budget)));
        row.record.add("over_budget",
                       report::visible(report::boolean(check->row_over[i]), report::Show::data));
        details_last(row.record);
      }
      row.notes = a.rows[i].guarantee.notes;
      if (auto w = order_edge_warning(a.rows[i].guarantee)) row.warnings.push_back(std::move(*w));
      if (rows.empty()) {
        // The job's first row carries what concerns the whole run: skipped
        // accountants, warnings, and the gate's verdict.
        for (const auto& why : a.skipped) row.warnings.push_back("skipped " + why);
        row.warnings.insert(row.warnings.end(), a.warnings.begin(), a.warnings.end());
        row.advice = a.notes;
        row.partial = !a.skipped.empty() || !a.warnings.empty();
        if (check) {
          row.gate = budget_lines(a, *check, *budget, "budget", s.choice.names);
          row.status = budget_status(*check);
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }
  for (const auto& accountant : s.choice.names) {
    for (double target : job.epsilons)
      for (double delta : job.deltas) {
        SweepRow row;
        row.subject = describe(job);
        add_run_columns(row.record, job);
        try {
          const Solved solved =
              solve_run(job.run, job.unknown, accountant, s.choice.options, target, delta, s.solve);
          for (auto& cell : solved_record(solved, job.unknown, target).cells)
            row.record.cells.push_back(cell);
          row.notes = solved.guarantee.notes;
        } catch (const NoSolution& e) {
          row.record.add("accountant", report::hoisted(report::text(accountant)));
          row.record.add("delta", report::hoisted(report::number(delta)));
          row.record.add("target_epsilon", report::hoisted(report::number(target)));
          row.record.add("error", report::text(std::string("no solution: ") + e.what()));
          row.no_solution = true;
        }
        rows.push_back(std::move(row));
      }
  }
  return rows;
}

SweepJobSource jobs_from_flags(const DpSgdFlags& run, Unknown unknown,
                               const std::vector<double>& deltas,
                               const std::vector<double>& epsilons) {
  auto grid = std::make_shared<const SweepGrid>(run);
  SweepJobSource source;
  source.same_run_columns = true;
  std::optional<bool> accumulates;
  for (std::size_t i = 0; i < grid->size(); ++i) {
    // add_inputs() gives the run columns; of the values a sweep varies, only
    // an accumulation of several micro-batches adds columns
    // (accumulation_steps, logical_batch_size) that a row without lacks.
    const bool several = derive(grid->at(i), unknown).accumulation_steps > 1;
    if (accumulates && *accumulates != several) source.same_run_columns = false;
    accumulates = several;
  }
  source.count = grid->size();
  source.at = [grid, unknown, deltas, epsilons](std::size_t i) {
    SweepJob job;
    job.run = derive(grid->at(i), unknown);
    job.neighbouring = run_neighbouring(job.run);
    job.unknown = unknown;
    job.deltas = deltas;
    job.epsilons = epsilons;
    return job;
  };
  return source;
}

std::variant<SweepJob, InputError> job_of_line(ConfigLine c, const LineDefaults& d) {
  const auto refuse = [&c](std::string why) {
    return InputError{c.line, std::move(why), c.name.value_or("")};
  };
  SweepJob job;
  job.name = c.name;
  job.line = c.line;
  job.source = d.source;
  if (!c.phases.empty()) {
    // A run in phases (docs/sampling.md#schedules): each phase over the
    // line's own run keys, composed as --schedule composes them.
    if (d.unknown != Unknown::none)
      return refuse(
          "phases: not with --solve (solve a run in phases with sigma or steps --schedule)");
    std::vector<DpSgdRun> phases;
    for (std::size_t i = 0; i < c.phases.size(); ++i) {
      try {
        phases.push_back(derive_phase(c.phases[i], c.given, Unknown::none));
      } catch (const UsageError& e) {
        return refuse("phases: phase " + std::to_string(i + 1) + ": " + e.what());
      }
    }
    if (const auto why = mixed_relation(phases)) return refuse("phases: " + *why);
    c.spec = schedule_event(phases);
    c.spec_json = event_to_json(*c.spec).dump();
    c.neighbouring = run_neighbouring(phases.front());
    job.event_is_own = schedule_is_the_run(phases);
  }
  if (c.spec) {
    if (d.unknown != Unknown::none)
      return refuse("spec: not with --solve (give the DP-SGD keys to solve)");
    job.spec = c.spec;
    job.spec_json = c.spec_json;
    job.neighbouring = c.neighbouring;
  } else {
    // A line solves for a parameter only when it says so (its "solve", or
    // --solve); a parameter it neither gives nor solves for is refused, never
    // taken as a question of another kind.
    if (auto why = solve_refusal(c, d.unknown, d.gate)) return refuse(*why);
    job.unknown = c.solve.value_or(d.unknown);
    try {
      job.run = derive(c.values, job.unknown, Naming::keys);
      job.neighbouring = run_neighbouring(job.run);
    } catch (const UsageError& e) {
      return refuse(e.what());
    }
  }
  job.deltas = c.delta ? std::vector<double>{*c.delta} : d.deltas;
  job.epsilons = c.epsilon ? std::vector<double>{*c.epsilon} : d.epsilons;
  if (job.deltas.empty()) return refuse("delta: missing (give it on the line or with --delta)");
  if (job.unknown != Unknown::none && job.epsilons.empty())
    return refuse("epsilon: missing target (on the line or with --epsilon)");
  return job;
}

void refuse_empty_input(const std::string& path) {
  throw NoConfigurations(
      "--input: " + (path == "-" ? std::string("standard input") : "'" + path + "'") +
      " holds no configuration (it is empty or has only blank lines)");
}

bool jobs_from_input(const InputJobs& how, Unknown unknown, const std::vector<double>& deltas,
                     const std::vector<double>& epsilons, std::vector<SweepJob>& jobs,
                     std::ostream& err) {
  InputFile file("--input", how.path, "a JSON Lines file");
  const std::string& source = file.name();
  ConfigInput input;
  try {
    input = read_configs(file.stream(), source);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {  // the stream's own failure, e.g. a read error
    throw UsageError("--input: cannot read '" + source + "': " + e.what());
  }
  // A gate over nothing must not pass: an empty input (a failed step before
  // dpbudget, a wrong path) has its own exit status.
  if (input.configs.empty() && input.errors.empty()) refuse_empty_input(how.path);
  std::vector<InputError> errors = std::move(input.errors);
  const LineDefaults defaults{unknown, deltas, epsilons, how.gate, source};
  for (auto& c : input.configs) {
    auto made = job_of_line(std::move(c), defaults);
    if (auto* job = std::get_if<SweepJob>(&made))
      jobs.push_back(std::move(*job));
    else
      errors.push_back(std::get<InputError>(std::move(made)));
  }
  std::sort(errors.begin(), errors.end(),
            [](const InputError& a, const InputError& b) { return a.line < b.line; });
  for (const auto& e : errors) {
    const UsageError bad = input_error("--input", {source, e.line, "", e.name}, e.message);
    if (!how.keep_going) throw bad;
    err << "dpbudget: error: " << report::escape_control(bad.what()) << '\n';
  }
  return !errors.empty();
}

}  // namespace dpb::cli
