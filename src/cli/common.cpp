#include "cli/common.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

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
}

DpSgdRun resolve(const DpSgdFlags& f) {
  DpSgdRun run;
  if (f.noise_multiplier.empty()) throw UsageError("--noise-multiplier (--sigma) is required");
  run.noise_multiplier = parse_real("--noise-multiplier", f.noise_multiplier, kPositive);

  if (!f.batch_size.empty() || !f.dataset_size.empty()) {
    if (!f.sampling_rate.empty())
      throw UsageError(
          "--sampling-rate: give either --sampling-rate or --dataset-size with --batch-size, "
          "not both");
    if (f.batch_size.empty() || f.dataset_size.empty())
      throw UsageError("--dataset-size and --batch-size go together (q = batch / dataset size)");
    run.dataset_size = parse_integer("--dataset-size", f.dataset_size, 1);
    run.batch_size = parse_integer("--batch-size", f.batch_size, 1);
    if (*run.batch_size > *run.dataset_size)
      throw UsageError("--batch-size: must be <= --dataset-size (" +
                       std::to_string(*run.dataset_size) + "), got " + f.batch_size);
    run.sampling_rate =
        static_cast<double>(*run.batch_size) / static_cast<double>(*run.dataset_size);
  } else if (!f.sampling_rate.empty()) {
    run.sampling_rate = parse_real("--sampling-rate", f.sampling_rate, kProbability);
  } else {
    throw UsageError("--sampling-rate (-q) is required (or --dataset-size with --batch-size)");
  }

  if (!f.steps.empty() && !f.epochs.empty())
    throw UsageError("--steps: give either --steps or --epochs, not both");
  if (!f.steps.empty()) {
    run.steps = parse_integer("--steps", f.steps, 1);
  } else if (!f.epochs.empty()) {
    run.epochs = parse_real("--epochs", f.epochs, kPositive);
    if (run.sampling_rate == 0)
      throw UsageError("--epochs: needs a sampling rate > 0 (steps per epoch = 1/q)");
    // T = ⌈E·N/B⌉ (= ⌈E/q⌉); an exact integer up to rounding is not bumped up.
    const double exact = run.dataset_size ? *run.epochs * static_cast<double>(*run.dataset_size) /
                                                static_cast<double>(*run.batch_size)
                                          : *run.epochs / run.sampling_rate;
    const double nearest = std::round(exact);
    const double steps = std::abs(exact - nearest) <= 1e-9 * exact ? nearest : std::ceil(exact);
    if (steps > 9007199254740992.0) throw UsageError("--epochs: gives more than 2^53 steps");
    run.steps = std::max<std::int64_t>(1, static_cast<std::int64_t>(steps));
  } else {
    throw UsageError("--steps (-T) is required (or --epochs)");
  }
  return run;
}

void add_inputs(report::Record& in, const DpSgdRun& run) {
  in.add("sampling_rate", report::number(run.sampling_rate));
  in.add("noise_multiplier", report::number(run.noise_multiplier));
  in.add("steps", report::integer(run.steps));
  if (run.dataset_size) in.add("dataset_size", report::integer(*run.dataset_size));
  if (run.batch_size) in.add("batch_size", report::integer(*run.batch_size));
  if (run.epochs) in.add("epochs", report::number(*run.epochs));
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
  for (const auto& n : accountant_names()) names += n + "|";
  app.add_option("--accountant", f.accountant, "which accountant: " + names + "all (default rdp)");
  app.add_option("--orders", f.orders,
                 "Renyi orders > 1: comma list and start:stop:step ranges (default: "
                 "dp_accounting's orders plus every integer 2..64)");
  app.add_option("--conversion", f.conversion,
                 "RDP to (epsilon, delta): improved (Balle et al. 2020, default) | classic");
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
  return c;
}

void add_inputs(report::Record& in, const AccountantChoice& c) {
  const bool rdp = std::find(c.names.begin(), c.names.end(), "rdp") != c.names.end();
  if (rdp)
    in.add("conversion",
           report::text(c.options.conversion == RdpConversion::classic ? "classic" : "improved"));
  if (rdp && !c.options.orders.empty()) in.add("orders", report::numbers(c.options.orders));
}

void add_output_flags(CLI::App& app, OutputFlags& f, bool allow_jsonl) {
  f.allow_jsonl = allow_jsonl;
  app.add_option("--format", f.format,
                 allow_jsonl ? "output: text (default) | json | jsonl | csv"
                             : "output: text (default) | json | csv");
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
  r.add("bound", report::text(std::string(to_string(g.bound))));
  r.add("delta", report::number(g.delta, solved_delta ? Rounding::up : Rounding::nearest));
  if (g.delta_lower) r.add("delta_lower", report::number(*g.delta_lower, Rounding::down));
  r.add("epsilon", report::number(g.epsilon, solved_delta ? Rounding::nearest : Rounding::up));
  if (g.epsilon_lower) r.add("epsilon_lower", report::number(*g.epsilon_lower, Rounding::down));
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

report::Report guarantee_table(const std::string& command, const DpSgdRun& run,
                               const AccountantChoice& choice, const std::vector<double>& targets,
                               bool solve_delta, std::ostream& err) {
  report::Report rep;
  rep.command = command;
  add_inputs(rep.inputs, run);
  add_inputs(rep.inputs, choice);
  const auto event = make_dp_sgd(run.sampling_rate, run.noise_multiplier, run.steps);
  for (const auto& name : choice.names) {
    auto accountant = make_accountant(name, choice.options);
    accountant->compose(*event);
    for (double target : targets) {
      const Guarantee g = solve_delta ? accountant->delta(target) : accountant->epsilon(target);
      rep.results.push_back(guarantee_record(g, solve_delta));
      collect_remarks(g, rep, err);
    }
  }
  return rep;
}

void emit(const report::Report& rep, report::Format format, std::ostream& out) {
  std::ostringstream buffer;
  report::render(rep, format, buffer);
  out << buffer.str();
  out.flush();
}

}  // namespace dpb::cli
