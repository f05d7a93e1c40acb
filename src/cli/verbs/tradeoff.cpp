// dpbudget tradeoff: the f-DP trade-off curve (Dong, Roth & Su 2022) of
// μ-GDP or of (ε, δ)-DP (docs/gdp.md#trade-off-functions), on an even grid of type I errors x.
#include <memory>

#include "accounting/gdp/gdp.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/run/svg_output.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct TradeoffFlags {
  std::vector<std::string> mu, epsilon, delta, points;
  std::string svg;  ///< -o: draw the curve to this SVG file instead of a table
  OutputFlags output;
};

constexpr std::int64_t kMaxPoints = 1'000'000;

int run_tradeoff(const TradeoffFlags& f, std::ostream& out, std::ostream& err) {
  const bool gdp = either("--mu", !f.mu.empty(), "--epsilon", !f.epsilon.empty());
  if (gdp && !f.delta.empty()) throw UsageError("--delta: goes with --epsilon, not --mu");
  double mu = 0, epsilon = 0, delta = 0;
  if (gdp) {
    mu = required_real("--mu", f.mu, kNonNegative);
  } else {
    epsilon = required_real("--epsilon", f.epsilon, kNonNegative);
    delta = required_real("--delta", f.delta, kDelta);
  }
  const std::int64_t n = optional_integer("--points", f.points, 2, kMaxPoints).value_or(101);
  const report::Format format = resolve(f.output);
  if (only_checking()) return kOk;

  report::Report rep;
  rep.command = "tradeoff";
  if (gdp) {
    rep.inputs.add("mu", report::number(mu));
  } else {
    rep.inputs.add("epsilon", report::number(epsilon));
    rep.inputs.add("delta", report::number(delta));
  }
  rep.inputs.add("points", report::integer(n));

  // f(x) is a lower bound on the type II error at type I error x: showing it
  // smaller claims less privacy, so it rounds down.
  report::Pairs curve;
  curve.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = i == n - 1 ? 1.0 : static_cast<double>(i) / static_cast<double>(n - 1);
    curve.push_back({x, gdp ? gdp_tradeoff(mu, x) : eps_delta_tradeoff(epsilon, delta, x)});
  }
  using report::Rounding;
  if (!f.svg.empty()) {
    report::Chart chart;
    chart.title = "f-DP trade-off curve";
    chart.x_label = "type I error";
    chart.y_label = "smallest type II error";
    report::Series series{gdp ? "mu = " + shown(mu) + " GDP"
                              : "(epsilon, delta) = (" + shown(epsilon) + ", " + shown(delta) + ")",
                          {},
                          {}};
    report::Series none{"1 - x: no information (perfect privacy)", {0, 1}, {1, 0}, true};
    for (const auto& [x, y] : curve) {
      series.x.push_back(x);
      series.y.push_back(y);
    }
    chart.series = {series, none};
    chart.caption.push_back(gdp ? "G_mu(x) = Phi(Phi^-1(1 - x) - mu), Dong, Roth & Su 2022"
                                : "f(x) = max(0, 1 - delta - e^eps x, e^-eps (1 - delta - x))");
    chart.caption.push_back(std::to_string(n) + " points");
    write_svg(chart, f.svg, out);
    return kOk;
  }
  if (format == report::Format::json) {
    // One result holding the whole curve.
    report::Record r;
    r.add("method", report::text(gdp ? "gdp" : "epsilon_delta"));
    r.add("bound", report::text("upper"));
    if (gdp) r.add("mu", report::number(mu));
    if (!gdp) r.add("epsilon", report::number(epsilon));
    if (!gdp) r.add("delta", report::number(delta));
    r.add("points", report::pairs(std::move(curve), Rounding::down));
    rep.results.push_back(std::move(r));
  } else {
    // A table: one row per point.
    for (const auto& [x, y] : curve)
      rep.results.push_back(
          report::Record{}.add("x", report::number(x)).add("f", report::number(y, Rounding::down)));
  }
  note(rep, "f(x): the smallest type II error of any test at type I error x");
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_tradeoff(CLI::App& command) {
  auto f = std::make_shared<TradeoffFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--mu", f->mu, "mu of a mu-GDP mechanism, a finite number >= 0");
  cmd->add_option("--epsilon", f->epsilon, "epsilon of an (epsilon, delta)-DP mechanism, >= 0");
  cmd->add_option("--delta", f->delta, "delta of an (epsilon, delta)-DP mechanism, in [0, 1)");
  cmd->add_option("--points", f->points,
                  "grid points x = 0, 1/(n-1), ..., 1: an integer in [2, 1000000] (default 101)");
  record_file(cmd->add_option("-o,--output", f->svg,
                              "draw the curve to this SVG file (- for stdout) instead of a table"));
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_tradeoff);
}

}  // namespace

extern const VerbDescriptor kTradeoffVerb{
    "tradeoff",
    "f-DP trade-off curve of mu-GDP or of (epsilon, delta)-DP",
    {"dpbudget tradeoff --mu 1 --points 11"},
    declare_tradeoff};

}  // namespace dpb::cli
