#include "cli/common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "accounting/errors.hpp"
#include "accounting/gaussian_mechanism.hpp"
#include "cli/choices.hpp"
#include "cli/errors.hpp"
#include "cli/parse.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {

void add_dp_sgd_flags(CLI::App& app, DpSgdFlags& f) {
  app.add_option("-q,--sampling-rate", f.sampling_rate,
                 "Poisson sampling probability of a record per step, in [0, 1]");
  app.add_option("--sigma,--noise-multiplier", f.noise_multiplier,
                 "noise standard deviation / L2 clipping norm, > 0");
  app.add_option("-T,--steps", f.steps, "number of noisy steps, an integer >= 1");
  app.add_option("--dataset-size", f.dataset_size, "N: records in the dataset (q = B/N)");
  app.add_option("--batch-size", f.batch_size, "B: expected batch size (q = B/N)");
  app.add_option("--epochs", f.epochs, "passes over the data: T = ceil(epochs * N / B)");
  add_choice_option(app, "--sampling", f.sampling, {"poisson", "without-replacement"},
                    "poisson (default; add/remove) | without-replacement (B of N; replace-one)");
  app.add_option("--group-noise-multipliers", f.group_noise_multipliers,
                 "per-layer clipping: z1,z2,... in place of --noise-multiplier; they act as "
                 "z* = 1/sqrt(sum 1/z_m^2)");
}

EventPtr dp_sgd_event(const DpSgdRun& run) {
  if (run.sampling == Sampling::without_replacement)
    return make_self_composed(
        run.steps, make_sampled_without_replacement(*run.dataset_size, *run.batch_size,
                                                    make_gaussian(run.noise_multiplier)));
  return make_dp_sgd(run.sampling_rate, run.noise_multiplier, run.steps);
}

namespace {

std::string joined(const std::vector<std::string>& texts) {
  std::string s;
  for (const auto& t : texts) s += (s.empty() ? "" : ",") + t;
  return s;
}

template <typename T, typename Parse>
std::optional<T> one(const char* flag, const std::vector<std::string>& texts, Parse parse) {
  if (texts.empty()) return std::nullopt;
  const auto values = parse(flag, texts);
  if (values.size() != 1)
    throw UsageError(std::string(flag) + ": takes one value here, got '" + joined(texts) +
                     "' (use 'dpbudget sweep' for lists)");
  return values.front();
}

std::vector<double> reals(const char* flag, const std::vector<std::string>& t, const Domain& d) {
  return parse_list(flag, t, d);
}

/// --sampling and --group-noise-multipliers, common to single runs and sweeps.
void add_sampling_and_groups(const DpSgdFlags& f, DpSgdValues& v) {
  v.sampling =
      parse_choice("--sampling", f.sampling, {"poisson", "without-replacement"}) == "poisson"
          ? Sampling::poisson
          : Sampling::without_replacement;
  if (f.group_noise_multipliers.empty()) return;
  if (!f.noise_multiplier.empty())
    throw UsageError("--group-noise-multipliers: give either it or --noise-multiplier, not both");
  v.group_noise_multipliers =
      parse_list("--group-noise-multipliers", f.group_noise_multipliers, kPositive);
  v.noise_multiplier = grouped_noise_multiplier(v.group_noise_multipliers);
}

}  // namespace

DpSgdValues single_values(const DpSgdFlags& f) {
  DpSgdValues v;
  auto real = [](const Domain& d) {
    return [&d](const char* flag, const std::vector<std::string>& t) { return reals(flag, t, d); };
  };
  auto count = [](const char* flag, const std::vector<std::string>& t) {
    return parse_integer_list(flag, t, 1);
  };
  v.sampling_rate = one<double>("--sampling-rate", f.sampling_rate, real(kProbability));
  v.noise_multiplier = one<double>("--noise-multiplier", f.noise_multiplier, real(kPositive));
  v.epochs = one<double>("--epochs", f.epochs, real(kPositive));
  v.steps = one<std::int64_t>("--steps", f.steps, count);
  v.dataset_size = one<std::int64_t>("--dataset-size", f.dataset_size, count);
  v.batch_size = one<std::int64_t>("--batch-size", f.batch_size, count);
  add_sampling_and_groups(f, v);
  return v;
}

std::vector<DpSgdValues> sweep_values(const DpSgdFlags& f) {
  auto reals_or_none = [](const char* flag, const std::vector<std::string>& t, const Domain& d) {
    std::vector<std::optional<double>> out;
    if (t.empty()) return std::vector<std::optional<double>>{std::nullopt};
    for (double x : parse_list(flag, t, d)) out.emplace_back(x);
    return out;
  };
  auto counts_or_none = [](const char* flag, const std::vector<std::string>& t) {
    std::vector<std::optional<std::int64_t>> out;
    if (t.empty()) return std::vector<std::optional<std::int64_t>>{std::nullopt};
    for (auto x : parse_integer_list(flag, t, 1)) out.emplace_back(x);
    return out;
  };
  const auto qs = reals_or_none("--sampling-rate", f.sampling_rate, kProbability);
  const auto sigmas = reals_or_none("--noise-multiplier", f.noise_multiplier, kPositive);
  const auto epochs = reals_or_none("--epochs", f.epochs, kPositive);
  const auto steps = counts_or_none("--steps", f.steps);
  const auto batches = counts_or_none("--batch-size", f.batch_size);
  const auto dataset = one<std::int64_t>("--dataset-size", f.dataset_size,
                                         [](const char* flag, const std::vector<std::string>& t) {
                                           return parse_integer_list(flag, t, 1);
                                         });
  DpSgdValues common;
  add_sampling_and_groups(f, common);
  std::vector<DpSgdValues> out;
  const double total = static_cast<double>(qs.size() * sigmas.size() * epochs.size() *
                                           steps.size() * batches.size());
  if (total > 1e7) throw UsageError("sweep: more than 10000000 combinations");
  for (const auto& q : qs)
    for (const auto& b : batches)
      for (const auto& s : sigmas)
        for (const auto& t : steps)
          for (const auto& e : epochs) {
            DpSgdValues v = common;
            v.sampling_rate = q;
            v.batch_size = b;
            v.dataset_size = dataset;
            if (!v.noise_multiplier) v.noise_multiplier = s;
            v.steps = t;
            v.epochs = e;
            out.push_back(v);
          }
  return out;
}

std::int64_t steps_for_epochs(double epochs, double sampling_rate,
                              std::optional<std::int64_t> dataset_size,
                              std::optional<std::int64_t> batch_size) {
  const double exact = dataset_size && batch_size ? epochs * static_cast<double>(*dataset_size) /
                                                        static_cast<double>(*batch_size)
                                                  : epochs / sampling_rate;
  const double nearest = std::round(exact);
  const double steps = std::abs(exact - nearest) <= 1e-9 * exact ? nearest : std::ceil(exact);
  if (!(steps <= 9007199254740992.0)) throw UsageError("--epochs: gives more than 2^53 steps");
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(steps));
}

DpSgdRun derive(const DpSgdValues& v, Unknown unknown, const ParamNames& n) {
  auto s = [](const char* name) { return std::string(name); };
  DpSgdRun run;
  run.dataset_size = v.dataset_size;
  run.batch_size = v.batch_size;
  run.epochs = v.epochs;
  run.sampling = v.sampling;
  run.group_noise_multipliers = v.group_noise_multipliers;
  if (v.sampling == Sampling::without_replacement &&
      (!v.dataset_size || (!v.batch_size && unknown != Unknown::sampling_rate)))
    throw UsageError(
        "--sampling: without-replacement needs --dataset-size and --batch-size (B of N)");

  if (unknown == Unknown::noise_multiplier) {
    if (v.noise_multiplier)
      throw UsageError(s(n.noise_multiplier) + ": not allowed here: it is what is solved for");
  } else {
    if (!v.noise_multiplier) throw UsageError(s(n.noise_multiplier) + " is required");
    run.noise_multiplier = *v.noise_multiplier;
  }

  // Sampling: q, or B out of N.
  if (unknown == Unknown::sampling_rate) {
    if (v.sampling_rate || v.batch_size)
      throw UsageError(s(v.sampling_rate ? n.sampling_rate : n.batch_size) +
                       ": not allowed here: the sampling rate is what is solved for");
  } else if (v.batch_size) {
    if (v.sampling_rate)
      throw UsageError(s(n.sampling_rate) + ": give either " + n.sampling_rate + " or " +
                       n.dataset_size + " with " + n.batch_size + ", not both");
    if (!v.dataset_size)
      throw UsageError(s(n.batch_size) + ": needs " + n.dataset_size + " (q = batch / dataset)");
    if (*v.batch_size > *v.dataset_size)
      throw UsageError(s(n.batch_size) + ": must be <= " + n.dataset_size + " (" +
                       std::to_string(*v.dataset_size) + "), got " + std::to_string(*v.batch_size));
    run.sampling_rate = static_cast<double>(*v.batch_size) / static_cast<double>(*v.dataset_size);
  } else if (v.sampling_rate) {
    if (v.dataset_size && !v.epochs)
      throw UsageError(s(n.dataset_size) + ": goes with " + n.batch_size + " or " + n.epochs);
    run.sampling_rate = *v.sampling_rate;
  } else {
    throw UsageError(s(n.sampling_rate) + " is required (or " + n.dataset_size + " with " +
                     n.batch_size + ")");
  }

  // Length: T, or epochs.
  if (v.steps && v.epochs)
    throw UsageError(s(n.epochs) + ": give either " + n.steps + " or " + n.epochs + ", not both");
  if (unknown == Unknown::steps) {
    if (v.steps || v.epochs)
      throw UsageError(s(v.steps ? n.steps : n.epochs) +
                       ": not allowed here: the number of steps is what is solved for");
  } else if (v.steps) {
    run.steps = *v.steps;
  } else if (v.epochs) {
    if (unknown == Unknown::sampling_rate) {
      if (!v.dataset_size)
        throw UsageError(s(n.epochs) + ": needs " + n.dataset_size +
                         " when the batch size is solved for");
    } else {
      if (run.sampling_rate == 0)
        throw UsageError(s(n.epochs) + ": needs a sampling rate > 0 (steps per epoch = 1/q)");
      run.steps = steps_for_epochs(*v.epochs, run.sampling_rate, v.dataset_size, v.batch_size);
    }
  } else {
    throw UsageError(s(n.steps) + " is required (or " + n.epochs + ")");
  }
  return run;
}

void add_inputs(report::Record& in, const DpSgdRun& run, Unknown unknown) {
  const bool epochs_given = run.epochs && unknown != Unknown::steps;
  if (unknown != Unknown::sampling_rate) in.add("sampling_rate", report::number(run.sampling_rate));
  if (unknown != Unknown::noise_multiplier) {
    // z* of grouped multipliers is rounded down (smaller σ, more loss).
    in.add("noise_multiplier",
           report::number(run.noise_multiplier, run.group_noise_multipliers.empty()
                                                    ? report::Rounding::nearest
                                                    : report::Rounding::down));
    if (!run.group_noise_multipliers.empty())
      in.add("group_noise_multipliers", report::numbers(run.group_noise_multipliers));
  }
  if (unknown != Unknown::steps && !(unknown == Unknown::sampling_rate && epochs_given))
    in.add("steps", report::integer(run.steps));
  if (run.dataset_size) in.add("dataset_size", report::integer(*run.dataset_size));
  if (run.batch_size && unknown != Unknown::sampling_rate)
    in.add("batch_size", report::integer(*run.batch_size));
  if (epochs_given) in.add("epochs", report::number(*run.epochs));
  in.add("sampling",
         report::text(run.sampling == Sampling::poisson ? "poisson" : "without_replacement"));
}

namespace {

std::vector<std::string> accountant_names() {
  std::vector<std::string> names;
  for (const auto& info : accountants()) names.push_back(info.name);
  return names;
}

}  // namespace

void add_accountant_flags(CLI::App& app, AccountantFlags& f) {
  std::string names;
  auto choices = accountant_names();
  for (const auto& n : choices) names += n + "|";
  choices.push_back("all");
  add_choice_option(app, "--accountant", f.accountant, choices,
                    "which accountant: " + names + "all (default rdp)");
  app.add_option("--orders", f.orders,
                 "Renyi orders > 1: comma list and start:stop:step ranges (default: "
                 "dp_accounting's orders plus every integer 2..64)");
  add_choice_option(app, "--conversion", f.conversion, {"improved", "classic"},
                    "RDP to (epsilon, delta): improved (Balle et al. 2020, default) | classic");
  add_choice_option(app, "--composition", f.composition, {"basic", "advanced", "optimal"},
                    "composition accountant's theorem: optimal (Kairouz et al., default) | "
                    "advanced (Dwork-Rothblum-Vadhan) | basic");
  app.add_option("--pld-interval", f.pld_interval,
                 "PLD: first discretisation step of the loss grid, > 0 (default automatic)");
  app.add_option("--pld-tolerance", f.pld_tolerance,
                 "PLD: refine the grid until the epsilon interval is narrower than this, "
                 "relative to its upper end, in (0, 1) (default 1e-3)");
}

AccountantChoice resolve(const AccountantFlags& f) {
  AccountantChoice c;
  auto names = accountant_names();
  auto allowed = names;
  allowed.push_back("all");
  const auto chosen = parse_choice("--accountant", f.accountant, allowed);
  c.names = chosen == "all" ? names : std::vector<std::string>{chosen};
  if (!f.orders.empty()) c.options.orders = parse_list("--orders", f.orders, kOrder);
  const auto conv = parse_choice("--conversion", f.conversion, {"improved", "classic"});
  c.options.conversion = conv == "classic" ? RdpConversion::classic : RdpConversion::improved;
  const auto theorem =
      parse_choice("--composition", f.composition, {"basic", "advanced", "optimal"});
  c.options.composition = theorem == "basic"      ? CompositionMethod::basic
                          : theorem == "advanced" ? CompositionMethod::advanced
                                                  : CompositionMethod::optimal;
  if (!f.pld_interval.empty())
    c.options.pld_interval = parse_real("--pld-interval", f.pld_interval, kPositive);
  if (!f.pld_tolerance.empty())
    c.options.pld_tolerance = parse_real("--pld-tolerance", f.pld_tolerance, kOpenUnit);
  return c;
}

void add_inputs(report::Record& in, const AccountantChoice& c) {
  const bool rdp = std::find(c.names.begin(), c.names.end(), "rdp") != c.names.end();
  if (rdp)
    in.add("conversion",
           report::text(c.options.conversion == RdpConversion::classic ? "classic" : "improved"));
  if (rdp && !c.options.orders.empty()) in.add("orders", report::numbers(c.options.orders));
  if (std::find(c.names.begin(), c.names.end(), "composition") != c.names.end())
    in.add("composition", report::text(std::string(to_string(c.options.composition))));
  if (std::find(c.names.begin(), c.names.end(), "pld") != c.names.end()) {
    in.add("pld_tolerance", report::number(c.options.pld_tolerance));
    if (c.options.pld_interval > 0) in.add("pld_interval", report::number(c.options.pld_interval));
  }
}

void add_output_flags(CLI::App& app, OutputFlags& f, bool allow_jsonl) {
  f.allow_jsonl = allow_jsonl;
  add_choice_option(app, "--format", f.format,
                    allow_jsonl ? std::vector<std::string>{"text", "json", "jsonl", "csv"}
                                : std::vector<std::string>{"text", "json", "csv"},
                    allow_jsonl ? "output: text (default) | json | jsonl | csv"
                                : "output: text (default) | json | csv");
  app.add_option("--precision", f.precision,
                 "significant digits of numbers in text output, 1..17 (default 6); "
                 "JSON and CSV are always exact");
}

report::TextStyle text_style(const OutputFlags& f) {
  report::TextStyle style;
  if (!f.precision.empty())
    style.digits = static_cast<int>(parse_integer("--precision", f.precision, 1));
  if (style.digits > 17) throw UsageError("--precision: must be an integer in [1, 17]");
  return style;
}

report::Format resolve(const OutputFlags& f) {
  const auto s =
      parse_choice("--format", f.format,
                   f.allow_jsonl ? std::vector<std::string>{"text", "json", "jsonl", "csv"}
                                 : std::vector<std::string>{"text", "json", "csv"});
  if (s == "json") return report::Format::json;
  if (s == "jsonl") return report::Format::jsonl;
  if (s == "csv") return report::Format::csv;
  return report::Format::text;
}

report::Record guarantee_record(const Guarantee& g, bool solved_delta) {
  using report::Rounding;
  report::Record r;
  r.add("accountant", report::text(g.accountant));
  r.add("neighbouring", report::text(std::string(to_string(g.neighbouring))));
  report::Cell bound = report::text(std::string(to_string(g.bound)));
  if (g.bound == BoundKind::approximate)
    bound = report::with_footnote(std::move(bound), "an approximation, not an upper bound");
  r.add("bound", std::move(bound));
  r.add("delta", report::number(g.delta, solved_delta ? Rounding::up : Rounding::nearest));
  if (g.delta_lower) {
    r.add("delta_lower", report::number(*g.delta_lower, Rounding::down));
    r.add("delta_upper", report::number(g.delta, Rounding::up));
  }
  r.add("epsilon", report::number(g.epsilon, solved_delta ? Rounding::nearest : Rounding::up));
  if (g.epsilon_lower) {
    r.add("epsilon_lower", report::number(*g.epsilon_lower, Rounding::down));
    r.add("epsilon_upper", report::number(g.epsilon, Rounding::up));
  }
  if (g.order) r.add("order", report::number(*g.order));
  for (const auto& [key, value] : g.details) r.add(key, report::number(value));
  return r;
}

void collect_remarks(const Guarantee& g, report::Report& rep, std::ostream& err) {
  auto add_once = [&](const std::string& note) {
    if (std::find(rep.footnotes.begin(), rep.footnotes.end(), note) == rep.footnotes.end()) {
      rep.footnotes.push_back(note);
      return true;
    }
    return false;
  };
  for (const auto& note : g.notes) add_once("note: " + note);
  if (g.order_at_edge && g.order) {
    const std::string w = "best Renyi order " +
                          report::format_number(*g.order, 6, report::Rounding::nearest) +
                          " is at the edge of the order set; widen --orders";
    if (add_once("warning: " + w)) err << "dpbudget: warning: " << w << '\n';
  }
}

report::Report event_table(const std::string& command, report::Record inputs, const DpEvent& event,
                           const AccountantChoice& choice, const std::vector<double>& targets,
                           bool solve_delta, std::ostream& err) {
  report::Report rep;
  rep.command = command;
  rep.inputs = std::move(inputs);
  add_inputs(rep.inputs, choice);
  bool any = false;
  for (const auto& name : choice.names) {
    auto accountant = make_accountant(name, choice.options);
    if (auto why = accountant->unsupported_reason(event)) {
      if (choice.names.size() == 1) throw UnsupportedEvent(*why);
      rep.footnotes.push_back("warning: skipped " + *why);
      err << "dpbudget: warning: skipped " << *why << '\n';
      continue;
    }
    any = true;
    accountant->compose(event);
    for (double target : targets) {
      const Guarantee g = solve_delta ? accountant->delta(target) : accountant->epsilon(target);
      rep.results.push_back(guarantee_record(g, solve_delta));
      collect_remarks(g, rep, err);
    }
  }
  if (!any) throw UnsupportedEvent("no accountant supports this event");
  return rep;
}

void emit(const report::Report& rep, report::Format format, std::ostream& out) {
  emit(rep, format, out, report::TextStyle{});
}

void emit(const report::Report& rep, const OutputFlags& flags, std::ostream& out) {
  emit(rep, resolve(flags), out, text_style(flags));
}

void emit(const report::Report& rep, report::Format format, std::ostream& out,
          report::TextStyle style) {
  style.colour = format == report::Format::text && &out == &std::cout &&
                 report::colour_wanted(::isatty(STDOUT_FILENO) != 0, std::getenv("NO_COLOR"),
                                       std::getenv("TERM"));
  std::ostringstream buffer;
  report::render(rep, format, buffer, style);
  out << buffer.str();
  out.flush();
}

}  // namespace dpb::cli
