#include "cli/run/spec_verb.hpp"

#include "accounting/dpsgd/schedule.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/input/spec_input.hpp"

namespace dpb::cli {
namespace {

void require_no_run_flags(const DpSgdFlags& f) {
  refuse_run_flags(f, "--spec", "the spec file describes the whole run");
}

void refuse_spec_with_schedule(const SpecFlags& f) {
  if (!f.file.empty() && !f.schedule.empty())
    throw UsageError(
        "--schedule: not with --spec (give the run as phases or as a spec file, not both)");
}

}  // namespace

void add_spec_flags(CLI::App& app, SpecFlags& f) {
  record_file(
      app.add_option("--spec", f.file,
                     "JSON file ('-' for stdin) describing a composition of events (every "
                     "kind of dp_accounting, listed by 'dpbudget events') instead of the DP-SGD "
                     "flags"));
  add_choice_option(app, "--neighbouring", f.neighbouring, kNeighbouringChoices,
                    "with --spec: which datasets are neighbours: add-remove (one record added "
                    "or removed) | replace-one (one replaced by another) | replace-special (one "
                    "replaced by a null record); default: the relation the spec's sampling fixes");
  add_schedule_flag(app, f.schedule);
  app.add_flag("--print-spec", f.print,
               "print the spec JSON of the DP-SGD flags given (or of --spec, or of --schedule's "
               "phases composed) and exit");
}

std::optional<Neighbouring> neighbouring_of(const SpecFlags& f) {
  if (f.neighbouring.empty()) return std::nullopt;
  const Neighbouring n = parse_choice("--neighbouring", f.neighbouring, kNeighbouringChoices);
  if (!f.schedule.empty())
    throw UsageError(
        "--neighbouring: not with --schedule (each phase's sampling fixes the relation, as the "
        "DP-SGD flags' do)");
  if (f.file.empty())
    throw UsageError(
        "--neighbouring: only with --spec (without it the DP-SGD flags' --sampling fixes the "
        "relation: poisson add-remove, without-replacement replace-one)");
  return n;
}

void print_spec(const SpecFlags& spec, const DpSgdFlags& run, std::ostream& out) {
  refuse_spec_with_schedule(spec);
  nlohmann::ordered_json json;
  if (!spec.schedule.empty()) {
    json = event_to_json(*schedule_event(load_schedule(spec.schedule, run, Unknown::none).phases));
  } else if (!spec.file.empty()) {
    require_no_run_flags(run);
    json = nlohmann::ordered_json::parse(read_spec_file(spec.file).json);
  } else {
    const DpSgdRun r = derive(single_values(run), Unknown::none);
    json = event_to_json(*dp_sgd_event(r));
  }
  write_out(out, json.dump(2) + '\n');
}

RunEvent load_run(const SpecFlags& spec, const DpSgdFlags& run) {
  refuse_spec_with_schedule(spec);
  RunEvent out;
  if (!spec.schedule.empty()) {
    const Schedule schedule = load_schedule(spec.schedule, run, Unknown::none);
    add_schedule_inputs(out.inputs, spec.schedule, schedule, Unknown::none);
    out.event = schedule_event(schedule.phases);
    out.neighbouring = run_neighbouring(schedule.phases.front());
    out.event_is_own = schedule_is_the_run(schedule.phases);
    out.schedule = schedule;
    return out;
  }
  if (spec.file.empty()) {
    const DpSgdRun r = derive(single_values(run), Unknown::none);
    add_inputs(out.inputs, r);
    out.event = dp_sgd_event(r);
    out.run = r;
    out.neighbouring = run_neighbouring(r);
    return out;
  }
  require_no_run_flags(run);
  Spec s = read_spec_file(spec.file);
  out.inputs.add("spec", report::json(std::move(s.json)));
  out.event = std::move(s.event);
  return out;
}

std::optional<LoadedRun> load_run_for_accountants(const SpecFlags& spec, const DpSgdFlags& run,
                                                  const AccountantFlags& accountants,
                                                  std::ostream& out, std::ostream& err,
                                                  bool states_epsilon) {
  const auto neighbouring = neighbouring_of(spec);
  if (spec.print) {
    print_spec(spec, run, out);
    return std::nullopt;
  }
  RunEvent event = load_run(spec, run);
  const SettingsRead read{states_epsilon,
                          states_epsilon && event.run && event.run->sampling == Sampling::shuffle};
  LoadedRun loaded{std::move(event), resolve(accountants, read)};
  if (loaded.run.run) {
    note_assumed_poisson(run, err);
    note_clipping_count(*loaded.run.run, err);
  }
  loaded.choice.options.neighbouring = neighbouring ? neighbouring : loaded.run.neighbouring;
  return loaded;
}

Question make_question(const RunEvent& run, const AccountantChoice& choice,
                       std::vector<double> targets, bool solve_delta) {
  Question q;
  q.event = run.event;
  q.run = run.run;
  q.event_is_own = run.event_is_own;
  q.accountants = choice;
  q.targets = std::move(targets);
  q.solve_delta = solve_delta;
  return q;
}

}  // namespace dpb::cli
