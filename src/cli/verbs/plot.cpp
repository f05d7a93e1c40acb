// dpbudget plot: ε against steps (or epochs) of a DP-SGD run, one curve per
// accountant, as a self-contained SVG (report/svg.hpp).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "accounting/dpsgd/epsilon_series.hpp"
#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/parse.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/svg_output.hpp"
#include "cli/verbs.hpp"
#include "dpbudget/version.hpp"
#include "report/number_format.hpp"
#include "report/svg.hpp"

namespace dpb::cli {
namespace {

struct PlotFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  std::vector<std::string> deltas;
  std::string points = "200";
  bool log_x = false, log_y = false, linear_y = false;
  std::string output;
};

/// The two ends of a `a:b` range flag.
std::pair<std::string, std::string> range_ends(const char* flag,
                                               const std::vector<std::string>& texts) {
  const std::string text = texts.size() == 1 ? texts.front() : "";
  const auto colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw UsageError(std::string(flag) + ": give the x axis as a range a:b, e.g. 1:10000");
  return {text.substr(0, colon), text.substr(colon + 1)};
}

/// `n` places from a to b, evenly or log-evenly spaced.
std::vector<double> places(double a, double b, int n, bool log) {
  std::vector<double> x;
  for (int i = 0; i < n; ++i) {
    const double t = n == 1 ? 1 : static_cast<double>(i) / (n - 1);
    x.push_back(log ? a * std::pow(b / a, t) : a + (b - a) * t);
  }
  x.front() = a;
  x.back() = b;
  return x;
}

std::string plot_number(double v) { return report::format_number(v, 6, report::Rounding::nearest); }

std::size_t total_points(const std::vector<report::Series>& series) {
  std::size_t n = 0;
  for (const auto& s : series) n += s.y.size();
  return n;
}

/// Chooses the ε axis (--log-y, --linear-y, or by the curves' span), states it
/// in the axis label and the caption, and says which points it cannot show:
/// ε = inf never, ε = 0 not on a log axis (both are left out, breaking the line).
void choose_y_axis(const PlotFlags& f, report::Chart& chart) {
  const double span = report::positive_span(chart.series);
  if (f.log_y && span == 0)
    throw UsageError("--log-y: no finite epsilon > 0 to draw on a log axis (drop --log-y)");
  chart.log_y = f.log_y || (!f.linear_y && report::wants_log_y(chart.series));
  const std::string why =
      f.log_y       ? "--log-y"
      : f.linear_y  ? "--linear-y"
      : chart.log_y ? "the curves span " + plot_number(span) + "x; --linear-y for a linear axis"
                    : "the curves span at most " + plot_number(report::kAutoLogSpan) + "x";
  chart.y_label += chart.log_y ? " (log scale)" : "";
  chart.caption.push_back(std::string("epsilon axis: ") + (chart.log_y ? "logarithmic" : "linear") +
                          " (" + why + ")");
  std::size_t zeros = 0, infinite = 0;
  std::string zero_names, inf_names;
  for (const auto& s : chart.series) {
    const std::string name = s.label.substr(0, s.label.find(' '));
    const auto z = static_cast<std::size_t>(
        std::count_if(s.y.begin(), s.y.end(), [](double y) { return y == 0; }));
    const auto i = static_cast<std::size_t>(
        std::count_if(s.y.begin(), s.y.end(), [](double y) { return std::isinf(y); }));
    if (chart.log_y && z) {
      zero_names += (zeros ? ", " : "") + name;
      zeros += z;
    }
    if (i) {
      inf_names += (infinite ? ", " : "") + name;
      infinite += i;
    }
  }
  auto points = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " point" : " points"); };
  if (zeros)
    chart.caption.push_back("not drawn: " + points(zeros) + " with epsilon = 0 (" + zero_names +
                            "): a log axis has no 0");
  if (infinite)
    chart.caption.push_back("not drawn: " + points(infinite) + " with epsilon = inf (" + inf_names +
                            ")");
  if (span == 0 && zeros + infinite == total_points(chart.series))
    throw UsageError("nothing to draw: epsilon is inf at every point of every curve");
}

int run_plot(const PlotFlags& f, std::ostream& out, std::ostream& err) {
  if (f.output.empty()) throw UsageError("-o/--output is required (a .svg file, or - for stdout)");
  const bool by_epochs = !f.run.epochs.empty();
  if (by_epochs && !f.run.steps.empty())
    throw UsageError("--epochs: give either --steps or --epochs as the x axis, not both");
  if (!by_epochs && f.run.steps.empty())
    throw UsageError("--steps is required as a range a:b (or --epochs a:b)");
  const auto [lo_text, hi_text] =
      range_ends(by_epochs ? "--epochs" : "--steps", by_epochs ? f.run.epochs : f.run.steps);
  const double lo = by_epochs ? parse_real("--epochs", lo_text, kPositive)
                              : static_cast<double>(parse_integer("--steps", lo_text, 1));
  const double hi = by_epochs ? parse_real("--epochs", hi_text, kPositive)
                              : static_cast<double>(parse_integer("--steps", hi_text, 1));
  if (!(hi > lo))
    throw UsageError(std::string(by_epochs ? "--epochs" : "--steps") +
                     ": the range a:b needs a < b, got " + lo_text + ":" + hi_text);
  const auto points = parse_integer("--points", f.points, 2);
  if (points > 100000) throw UsageError("--points: must be an integer in [2, 100000]");
  if (f.log_y && f.linear_y) throw UsageError("--linear-y: give either --log-y or --linear-y");
  if (f.deltas.empty()) throw UsageError("--delta is required");
  const double delta =
      parse_real("--delta", f.deltas.size() == 1 ? f.deltas.front() : "", kOpenUnit);

  // The run without its length: derive() checks q (or N and B) and σ.
  DpSgdFlags fixed = f.run;
  fixed.steps = {"1"};
  fixed.epochs.clear();
  const DpSgdRun base = derive(single_values(fixed), Unknown::none);
  note_assumed_poisson(f.run, err);
  const AccountantChoice choice = resolve(f.accountant);

  // x values: whole steps, each once; with --epochs the steps they give.
  std::vector<double> xs;
  std::vector<std::int64_t> steps;
  for (double x : places(lo, hi, static_cast<int>(points), f.log_x)) {
    const std::int64_t t =
        by_epochs
            ? steps_for_epochs_named(x, base.sampling_rate, base.dataset_size, base.batch_size,
                                     Naming::flags, base.last_batch, base.sampling)
            : static_cast<std::int64_t>(std::llround(x));
    if (!by_epochs && !steps.empty() && t == steps.back()) continue;
    xs.push_back(by_epochs ? x : static_cast<double>(t));
    steps.push_back(t);
  }

  if (only_checking()) return kOk;
  report::Chart chart;
  chart.title = "privacy loss of a DP-SGD run";
  chart.x_label = by_epochs ? "epochs" : "steps";
  chart.y_label = "epsilon at delta = " + plot_number(delta);
  chart.log_x = f.log_x;
  report::Report remarks;
  for (const auto& name : choice.names) {
    report::Series s;
    s.x = xs;
    bool approximate = false;
    AccountantOptions options = choice.options;
    options.neighbouring = run_neighbouring(base);
    // As `epsilon` does: an accountant that cannot handle the run is an error
    // when named alone, else skipped with its reason.
    {
      DpSgdRun last = base;
      last.steps = steps.back();
      if (auto why = make_accountant(name, options)->unsupported_reason(*dp_sgd_event(last))) {
        if (choice.names.size() == 1) throw UnsupportedEvent(*why);
        err << "dpbudget: warning: skipped " << *why << '\n';
        continue;
      }
    }
    const auto series = epsilon_series(
        name, options,
        [&base](std::int64_t t) {
          DpSgdRun run = base;
          run.steps = t;
          return dp_sgd_event(run);
        },
        steps, delta);
    for (const Guarantee& g : series) {
      s.y.push_back(g.epsilon);
      approximate = approximate || g.bound == BoundKind::approximate;
      if (!g.order_at_edge) collect_remarks(g, remarks, err);
    }
    s.label = name + (approximate ? " (approximation, not an upper bound)" : " (upper bound)");
    s.dashed = approximate;
    chart.series.push_back(std::move(s));
  }
  if (chart.series.empty()) throw UnsupportedEvent("no accountant supports this run");
  std::string run_text = "q = " + plot_number(base.sampling_rate);
  if (base.dataset_size && base.batch_size)
    run_text += " (batch " + std::to_string(*base.batch_size) + " of " +
                std::to_string(*base.dataset_size) + ")";
  run_text += ", sigma = " + plot_number(base.noise_multiplier) +
              ", delta = " + plot_number(delta) + ", " + chart.x_label + " " + lo_text + " to " +
              hi_text;
  chart.caption.push_back(run_text);
  const bool rdp = std::find(choice.names.begin(), choice.names.end(), "rdp") != choice.names.end();
  chart.caption.push_back(
      std::string("dpbudget ") + kVersion +
      (rdp ? std::string(", RDP conversion ") +
                 (choice.options.rdp.conversion == RdpConversion::classic ? "classic" : "improved")
           : std::string()) +
      (base.sampling == Sampling::poisson
           ? ", Poisson sampling, add/remove neighbours"
           : ", sampling without replacement, replace-one neighbours"));
  choose_y_axis(f, chart);

  write_svg(chart, f.output, out);
  return kOk;
}

Verb declare_plot(CLI::App& command) {
  auto f = std::make_shared<PlotFlags>();
  CLI::App* cmd = &command;
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--delta", f->deltas, "delta in (0, 1) at which epsilon is drawn");
  add_accountant_flags(*cmd, f->accountant);
  cmd->add_option("--points", f->points,
                  "places along the x axis where the curve is evaluated (default 200)");
  cmd->add_flag("--log-x", f->log_x, "logarithmic x axis, points spaced evenly on it");
  cmd->add_flag("--log-y", f->log_y,
                "logarithmic epsilon axis (the default when the curves span more than " +
                    plot_number(report::kAutoLogSpan) + "x)");
  cmd->add_flag("--linear-y", f->linear_y, "linear epsilon axis, however far the curves span");
  record_file(cmd->add_option("-o,--output", f->output, "SVG file to write; - for stdout"));
  return verb_of(cmd, f, run_plot);
}

}  // namespace

extern const VerbDescriptor kPlotVerb{
    "plot",
    "SVG chart of epsilon against steps (or epochs) of a DP-SGD run, one curve per accountant",
    {"dpbudget plot -q 0.01 --sigma 1 --steps 1:10000 --delta 1e-5 --accountant all -o curve.svg"},
    declare_plot};

}  // namespace dpb::cli
