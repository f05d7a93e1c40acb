// dpbudget mf-error: the prefix-sum error of matrix-mechanism strategies side
// by side (docs/matrix.md#error), at unit noise or each calibrated to one ε;
// an SVG of the error against the number of bands.
#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "accounting/answer.hpp"
#include "accounting/matrix/error.hpp"
#include "accounting/matrix/sensitivity.hpp"
#include "accounting/matrix/strategy.hpp"
#include "accounting/matrix_run.hpp"
#include "accounting/numerics/outward.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/parse.hpp"
#include "cli/run/matrix_strategy.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/solve.hpp"
#include "cli/run/svg_output.hpp"
#include "cli/verbs.hpp"
#include "report/svg.hpp"

namespace dpb::cli {
namespace {

/// mf-error's flags, checked: the strategies built, the pattern, and the ε
/// each strategy's noise is calibrated to (when --epsilon is given).
struct CheckedError {
  std::vector<Built> built;
  Pattern pattern = Pattern::single;
  matrix::Participation participation{1, 1};
  std::optional<std::int64_t> steps;
  std::optional<double> batch_fraction;  ///< cyclic-poisson: B/N
  bool calibrated = false;
  double target = 0, delta = 0;
  AccountantChoice choice;
  SolveSettings settings;
  bool amplify() const { return pattern == Pattern::cyclic_poisson; }
};

/// The strategies of --strategy (a comma list); banded once per --bands.
std::vector<StrategyKind> strategy_kinds(const MatrixFlags& f) {
  if (f.strategy.empty()) throw UsageError("--strategy is required");
  std::vector<StrategyKind> kinds;
  for (const auto& text : f.strategy) {
    std::istringstream items(text);
    std::string item;
    while (std::getline(items, item, ','))
      kinds.push_back(parse_choice("--strategy", item, kStrategies));
  }
  return kinds;
}

CheckedError check_mf_error(const MatrixFlags& f) {
  CheckedError c;
  const std::vector<StrategyKind> kinds = strategy_kinds(f);
  c.pattern = pattern_of(f);
  refuse_unread(f, kinds, c.pattern, true);
  c.steps = one_integer("--steps", f.steps, 1);
  std::vector<std::int64_t> bands;
  if (!f.bands.empty()) bands = parse_integer_list("--bands", f.bands, 1);
  const bool has_banded =
      std::find(kinds.begin(), kinds.end(), StrategyKind::banded) != kinds.end();
  if (has_banded && bands.empty()) throw UsageError("--bands is required with --strategy banded");
  if (!f.svg.empty() && !has_banded)
    throw UsageError(
        "-o: the chart draws the error against the number of bands: give --strategy banded with "
        "--bands");
  if (!has_banded && !bands.empty() && !c.amplify())
    throw UsageError("--bands: only with --strategy banded");
  c.calibrated = !f.epsilon.empty();
  if (!c.calibrated && !f.delta.empty()) throw UsageError("--delta: goes with --epsilon");
  if (c.calibrated && f.delta.empty()) throw UsageError("--delta is required with --epsilon");
  c.target = c.calibrated ? *optional_real("--epsilon", f.epsilon, kNonNegative) : 0;
  c.delta = c.calibrated ? *optional_real("--delta", f.delta, kOpenUnit) : 0;
  if (c.amplify() && !c.calibrated)
    throw UsageError(
        "--epsilon is required with --participation cyclic-poisson (each strategy's "
        "noise is calibrated to it)");
  c.choice = resolve(f.accountant);
  check_output_flags(f.output);
  c.settings = resolve_solve_flags(f.tolerance, f.max_sigma);
  if (c.pattern == Pattern::min_sep) c.participation = participation_of(f, c.pattern);
  if (c.amplify()) {
    if (f.sampling_rate.empty())
      throw UsageError("--batch-fraction is required with --participation cyclic-poisson");
    c.batch_fraction = *optional_real("--batch-fraction", f.sampling_rate,
                                      Domain{0, 1, true, false, "a number in (0, 1]"});
  }
  for (StrategyKind kind : kinds) {
    if (kind == StrategyKind::banded) {
      for (std::int64_t b : bands) c.built.push_back(build(f, kind, c.steps, b, false));
    } else {
      c.built.push_back(build(f, kind, c.steps, std::nullopt, c.amplify()));
    }
  }
  // A strategy of column norm above 1 is refused before any work; one that
  // is not banded (the tree) is skipped with a warning when computed.
  for (const Built& b : c.built) {
    if (!c.amplify())
      check_sensitivity(b.strategy, c.participation);
    else if (b.bands)
      check_amplified(b, Cyclic{*c.batch_fraction, *b.bands});
  }
  return c;
}

/// The smallest noise multiplier among the chosen accountants' sound upper
/// bounds (their recommended row) and the accountant that gives it; none when
/// no accountant gives a sound upper bound. `solve(accountant)` returns the
/// noise multiplier and its guarantee.
template <typename Solve>
std::optional<std::pair<double, std::string>> smallest_noise(const AccountantChoice& choice,
                                                             Solve&& solve) {
  std::optional<std::pair<double, std::string>> best;
  for (const auto& accountant : choice.names) {
    try {
      const auto [z, g] = solve(accountant);
      if (g.bound != BoundKind::upper) continue;
      if (!best || z < best->first) best = {{z, accountant}};
    } catch (const UnsupportedEvent&) {
      if (choice.names.size() == 1) throw;
    }
  }
  return best;
}

/// The noise of the release every strategy shares (calibrated, not amplified).
std::optional<std::pair<double, std::string>> release_noise(const CheckedError& c) {
  if (!c.calibrated || c.amplify()) return std::nullopt;
  auto z = smallest_noise(c.choice, [&](const std::string& a) {
    // Only the noise is shown (no lower end): the release is the same for
    // every strategy, each with its own sensitivity.
    const SigmaSolution s =
        calibrate_release(a, c.choice.options, c.target, RunTarget{Measure::epsilon, c.delta, 0},
                          c.settings, /*sensitivity_exact=*/false);
    return std::pair{s.noise_multiplier, s.guarantee};
  });
  if (!z) throw NoSolution("no chosen accountant gives a sound upper bound here");
  return z;
}

/// Adds strategy `b`'s amplified noise to `r`; returns σ² per entry, or none
/// (with a warning in `rep`) when the row is skipped.
std::optional<double> add_amplified_noise(report::Record& r, report::Report& rep, const Built& b,
                                          const CheckedError& c) {
  const std::int64_t groups = b.kind == StrategyKind::identity ? 1 : b.bands.value_or(0);
  if (!b.bands) {
    warn(rep,
         b.name + ": no amplified analysis (not a banded lower-triangular strategy): row skipped");
    return std::nullopt;
  }
  // The same expected batch q·N at every step: the group of N/b records
  // is sampled at q·b (docs/matrix.md#error), rounded up.
  const double group_rate = outward::product_up(*c.batch_fraction, static_cast<double>(groups));
  if (group_rate > 1) {
    warn(rep, b.name + " with " + std::to_string(groups) +
                  " bands: --batch-fraction times the bands exceeds 1 (a group smaller than "
                  "the batch): row skipped");
    return std::nullopt;
  }
  const auto solved = smallest_noise(c.choice, [&](const std::string& a) {
    const SigmaSolution s =
        calibrate_amplified(b.strategy, group_rate, groups, a, c.choice.options, c.target,
                            RunTarget{Measure::epsilon, c.delta, 0}, c.settings);
    return std::pair{s.noise_multiplier, s.guarantee};
  });
  if (!solved) throw NoSolution("no chosen accountant gives a sound upper bound here");
  r.add("group_sampling_rate", report::number(group_rate));
  r.add("dp_sgd_steps", report::integer((matrix::steps(b.strategy) + groups - 1) / groups));
  r.add("accountant", report::text(solved->second));
  r.add("noise_sd", report::number(solved->first, report::Rounding::up));
  return solved->first * solved->first;
}

/// The chart of the max error against the bands: the banded strategies as
/// one curve, every other strategy as a dashed level line across it.
report::Chart error_chart(const CheckedError& c, report::Series banded,
                          std::vector<report::Series> flat) {
  if (banded.x.empty())
    throw UsageError("-o: no banded row to draw (every one was skipped, see the warnings)");
  report::Chart chart;
  chart.title = c.calibrated ? "prefix-sum error at one epsilon" : "prefix-sum error at unit noise";
  chart.x_label = "bands";
  chart.y_label = "max squared error";
  const double lo = banded.x.front(), hi = banded.x.back();
  for (auto& s : flat) {
    const double y = s.y.front();
    s.x = {std::min(lo, hi), std::max(lo, hi)};
    s.y = {y, y};
    s.dashed = true;
  }
  chart.series.push_back(std::move(banded));
  for (auto& s : flat) chart.series.push_back(std::move(s));
  chart.log_y = report::wants_log_y(chart.series);
  chart.y_from_zero = !chart.log_y;
  if (c.steps) chart.caption.push_back("steps " + std::to_string(*c.steps));
  if (c.calibrated)
    chart.caption.push_back("epsilon " + shown(c.target) + ", delta " + shown(c.delta));
  return chart;
}

int run_mf_error(const MatrixFlags& f, std::ostream& out, std::ostream& err) {
  const CheckedError c = check_mf_error(f);
  if (only_checking()) return kOk;

  report::Report rep;
  rep.command = "mf-error";
  if (c.steps) rep.inputs.add("steps", report::integer(*c.steps));
  add_pattern_inputs(rep.inputs, c.pattern, c.participation);
  if (c.batch_fraction) rep.inputs.add("batch_fraction", report::number(*c.batch_fraction));
  if (c.calibrated) {
    rep.inputs.add("epsilon", report::number(c.target));
    rep.inputs.add("delta", report::number(c.delta));
  }
  add_inputs(rep.inputs, c.choice);
  const auto release_z = release_noise(c);
  report::Series banded_series{"banded", {}, {}};
  std::vector<report::Series> flat;
  for (const Built& b : c.built) {
    report::Record r;
    r.add("strategy", report::text(b.name));
    if (b.bands) r.add("bands", report::integer(*b.bands));
    const matrix::PrefixSumError e =
        flagged("--strategy", [&] { return matrix::prefix_sum_error(b.strategy); });
    double scale = 1;  // σ² per entry
    if (c.amplify()) {
      const auto amplified_scale = add_amplified_noise(r, rep, b, c);
      if (!amplified_scale) continue;
      scale = *amplified_scale;
    } else {
      const auto s = sensitivity_of(b.strategy, c.participation);
      r.add("sensitivity_squared", report::number(s.squared, report::Rounding::up));
      r.add("sensitivity_bound", report::text(s.exact ? "exact" : "upper"));
      if (release_z) {
        const double sd = matrix_noise(release_z->first, s.squared);
        r.add("accountant", report::text(release_z->second));
        r.add("noise_multiplier", report::number(release_z->first, report::Rounding::up));
        r.add("noise_sd", report::number(sd, report::Rounding::up));
        scale = sd * sd;
      }
    }
    r.add("max_error_unit", report::number(e.max));
    r.add("mean_error_unit", report::number(e.mean));
    if (c.calibrated) {
      r.add("max_error", report::number(e.max * scale));
      r.add("mean_error", report::number(e.mean * scale));
    }
    const double shown_error = c.calibrated ? e.max * scale : e.max;
    if (b.kind == StrategyKind::banded) {
      banded_series.x.push_back(static_cast<double>(*b.bands));
      banded_series.y.push_back(shown_error);
    } else {
      flat.push_back(report::Series{b.name, {}, {shown_error}});
    }
    rep.results.push_back(std::move(r));
  }
  note(rep, c.calibrated
                ? "max_error, mean_error: the largest and the mean variance of the prefix-sum "
                  "estimates at noise_sd (each strategy calibrated to epsilon at delta); *_unit: "
                  "at unit noise"
                : "max_error_unit, mean_error_unit: the largest and the mean variance of the "
                  "prefix-sum estimates at unit noise on each entry of C x");
  if (!f.svg.empty()) {
    write_svg(error_chart(c, std::move(banded_series), std::move(flat)), f.svg, out);
    if (f.svg == "-") return kOk;
  }
  finish(rep, f.output, out, err);
  return kOk;
}

void add_mf_error_flags(CLI::App& cmd, MatrixFlags& f) {
  cmd.add_option("--epsilon", f.epsilon, "calibrate every strategy's noise to this epsilon");
  cmd.add_option("--delta", f.delta, "the delta of --epsilon, in (0, 1)");
  record_file(cmd.add_option("-o,--output", f.svg,
                             "also draw the max error against the bands as SVG to this file "
                             "(- for stdout, instead of the table)"));
}

}  // namespace

extern const VerbDescriptor kMfErrorVerb{
    "mf-error",
    "prefix-sum error of matrix-mechanism strategies side by side, at unit noise or each "
    "calibrated to one epsilon",
    {"dpbudget mf-error --strategy identity,tree,sqrt,banded --steps 2000 --bands 1,2,4,8 "
     "--epsilon 8 --delta 1e-6"},
    [](CLI::App& cmd) {
      return matrix_verb(cmd, {.strategy_list = true, .accountants = true, .solve = true},
                         add_mf_error_flags, run_mf_error);
    }};

}  // namespace dpb::cli
