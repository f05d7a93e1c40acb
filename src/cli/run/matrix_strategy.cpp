#include "cli/run/matrix_strategy.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "accounting/matrix_run.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/parse.hpp"
#include "cli/input/number_list.hpp"
#include "cli/run/solve.hpp"

namespace dpb::cli {

std::optional<std::int64_t> one_integer(const char* flag, const std::vector<std::string>& texts,
                                        std::int64_t min) {
  return optional_integer(flag, texts, min);
}

/// The strategy `kind` over n steps (`bands` for banded; normalised square
/// root when `normalised`).
Built build(const MatrixFlags& f, StrategyKind kind, std::optional<std::int64_t> n,
            std::optional<std::int64_t> bands, bool normalised) {
  auto need_steps = [&]() {
    if (!n)
      throw UsageError("--steps is required with --strategy " +
                       std::string(choice_name(kStrategies, kind)));
    return *n;
  };
  const std::string name(choice_name(kStrategies, kind));
  switch (kind) {
    case StrategyKind::identity:
      return {kind, name, 1, flagged("--steps", [&] {
                return matrix::Strategy{matrix::toeplitz_strategy({1.0}, need_steps())};
              })};
    case StrategyKind::tree: {
      const auto restart = one_integer("--restart", f.restart, 1);
      return {kind, name, std::nullopt, flagged("--restart", [&] {
                return matrix::Strategy{matrix::tree_strategy(need_steps(), restart)};
              })};
    }
    case StrategyKind::sqrt: {
      const std::int64_t steps = need_steps();
      if (normalised)
        return {kind, name, steps, flagged("--steps", [&] {
                  return matrix::Strategy{matrix::banded_square_root_strategy(steps, steps)};
                })};
      return {kind, name, steps, flagged("--steps", [&] {
                return matrix::Strategy{matrix::square_root_strategy(steps)};
              })};
    }
    case StrategyKind::banded: {
      if (!bands) throw UsageError("--bands is required with --strategy banded");
      return {kind, "banded", bands, flagged("--bands", [&] {
                return matrix::Strategy{matrix::banded_square_root_strategy(need_steps(), *bands)};
              })};
    }
    case StrategyKind::toeplitz_file: {
      if (f.coefficients.empty())
        throw UsageError("--coefficients is required with --strategy toeplitz-file");
      auto rows = read_number_rows("--coefficients", f.coefficients);
      std::vector<double> c;
      for (auto& r : rows) c.insert(c.end(), r.begin(), r.end());
      const std::int64_t steps = n.value_or(static_cast<std::int64_t>(c.size()));
      auto s = flagged("--coefficients", [&] {
        return matrix::Strategy{matrix::toeplitz_strategy(std::move(c), steps)};
      });
      return {kind, name, matrix::bands_of(s), s};
    }
    case StrategyKind::matrix_file: {
      if (f.matrix.empty()) throw UsageError("--matrix is required with --strategy matrix-file");
      if (n) throw UsageError("--steps: not with --strategy matrix-file (the matrix gives them)");
      const auto rows = read_number_rows("--matrix", f.matrix);
      const auto size = static_cast<std::int64_t>(rows.size());
      std::vector<double> entries;
      for (const auto& r : rows) {
        if (static_cast<std::int64_t>(r.size()) != size)
          throw UsageError("--matrix: '" + f.matrix + "' must be square: " + std::to_string(size) +
                           " rows, but a row of " + std::to_string(r.size()) + " entries");
        entries.insert(entries.end(), r.begin(), r.end());
      }
      auto s = flagged("--matrix", [&] {
        return matrix::Strategy{matrix::dense_strategy(size, std::move(entries))};
      });
      return {kind, name, matrix::bands_of(s), s};
    }
  }
  throw UsageError("--strategy: unknown");
}

/// The flags of the strategy that do not go with `kind` are refused.
void refuse_unread(const MatrixFlags& f, const std::vector<StrategyKind>& kinds, Pattern pattern,
                   bool bands_list) {
  auto has = [&](StrategyKind k) {
    return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
  };
  if (!f.restart.empty() && !has(StrategyKind::tree))
    throw UsageError("--restart: only with --strategy tree");
  if (!f.coefficients.empty() && !has(StrategyKind::toeplitz_file))
    throw UsageError("--coefficients: only with --strategy toeplitz-file");
  if (!f.matrix.empty() && !has(StrategyKind::matrix_file))
    throw UsageError("--matrix: only with --strategy matrix-file");
  if (!f.bands.empty() && !has(StrategyKind::banded) && pattern != Pattern::cyclic_poisson &&
      !bands_list)
    throw UsageError("--bands: only with --strategy banded or --participation cyclic-poisson");
  if (pattern != Pattern::min_sep) {
    if (!f.min_sep.empty()) throw UsageError("--min-sep: only with --participation min-sep");
    if (!f.participations.empty())
      throw UsageError("--participations: only with --participation min-sep");
  }
  if (pattern != Pattern::cyclic_poisson && !f.sampling_rate.empty())
    throw UsageError(std::string(f.rate_flag) + ": only with --participation cyclic-poisson");
}

matrix::Participation participation_of(const MatrixFlags& f, Pattern pattern) {
  if (pattern == Pattern::single) return {1, 1};
  if (f.min_sep.empty()) throw UsageError("--min-sep is required with --participation min-sep");
  if (f.participations.empty())
    throw UsageError("--participations is required with --participation min-sep");
  return {*one_integer("--min-sep", f.min_sep, 1),
          *one_integer("--participations", f.participations, 1)};
}

matrix::Sensitivity sensitivity_of(const matrix::Strategy& s, const matrix::Participation& p) {
  return flagged("--participations", [&] { return matrix::sensitivity(s, p); });
}

/// The refusals of sensitivity_of(), before any work (check mode stops after).
void check_sensitivity(const matrix::Strategy& s, const matrix::Participation& p) {
  flagged("--participations", [&] { return matrix::sensitivity_method(s, p); });
}

StrategyKind one_strategy(const MatrixFlags& f) {
  if (f.strategy.size() != 1)
    throw UsageError(f.strategy.empty() ? "--strategy is required"
                                        : "--strategy: give one strategy");
  return parse_choice("--strategy", f.strategy.front(), kStrategies);
}

/// The one strategy of mf-sensitivity, mf-epsilon and mf-sigma, its flags
/// checked against `pattern`.
Built one_built(const MatrixFlags& f, Pattern pattern) {
  const StrategyKind kind = one_strategy(f);
  refuse_unread(f, {kind}, pattern, false);
  return build(f, kind, one_integer("--steps", f.steps, 1),
               kind == StrategyKind::banded ? one_integer("--bands", f.bands, 1) : std::nullopt,
               false);
}

void add_strategy_inputs(report::Record& in, const Built& b, std::int64_t n) {
  in.add("strategy", report::text(b.name));
  in.add("steps", report::integer(n));
  if (b.bands) in.add("bands", report::integer(*b.bands));
  if (const auto* t = std::get_if<matrix::Tree>(&b.strategy))
    in.add("restart", report::integer(t->restart));
}

void add_pattern_inputs(report::Record& in, Pattern pattern, const matrix::Participation& p) {
  in.add("participation", report::text(std::string(choice_name(kPatterns, pattern))));
  if (pattern == Pattern::min_sep) {
    in.add("min_sep", report::integer(p.min_separation));
    in.add("participations_given", report::integer(p.participations));
  }
}

void add_sensitivity(report::Record& r, const matrix::Sensitivity& s) {
  r.add("participations", report::integer(s.participations));
  r.add("sensitivity_squared", report::number(s.squared, report::Rounding::up));
  r.add("sensitivity", report::number(std::sqrt(s.squared), report::Rounding::up));
  r.add("sensitivity_bound", report::text(s.exact ? "exact" : "upper"));
  r.add("method", report::text(std::string(matrix::to_string(s.method))));
}

Pattern pattern_of(const MatrixFlags& f) {
  return parse_choice("--participation", f.participation, kPatterns);
}

Cyclic cyclic_of(const MatrixFlags& f, const Built& b) {
  if (f.sampling_rate.empty())
    throw UsageError("--sampling-rate is required with --participation cyclic-poisson");
  const double q =
      *optional_real("-q", f.sampling_rate, Domain{0, 1, true, false, "a number in (0, 1]"});
  auto groups = one_integer("--bands", f.bands, 1);
  if (!groups) groups = b.bands;
  if (!groups)
    throw UsageError(
        "--bands is required with --participation cyclic-poisson (the number of "
        "groups b)");
  return {q, *groups};
}

DpSgdRun amplified(const Built& b, const Cyclic& c, double sigma) {
  return flagged("--bands", [&] {
    try {
      return amplified_run(b.strategy, c.groups, c.q, sigma);
    } catch (const InvalidParameter& e) {
      if (e.field() == "strategy") {
        const std::string what = e.what();
        throw UsageError("--strategy: " + what.substr(std::min(what.size(), e.field().size() + 2)));
      }
      throw;
    }
  });
}

void check_amplified(const Built& b, const Cyclic& c) {
  // The run at σ = 0 is refused exactly as at any σ; only the refusal counts.
  static_cast<void>(amplified(b, c, 0));
}

namespace {

void add_strategy_flags(CLI::App& cmd, MatrixFlags& f, bool list) {
  record_choices(
      cmd.add_option("--strategy", f.strategy,
                     list ? "strategies, a comma list: identity (DP-SGD's) | tree | sqrt "
                            "| banded | toeplitz-file | matrix-file"
                          : "identity (DP-SGD's) | tree | sqrt | banded | "
                            "toeplitz-file | matrix-file"),
      choice_names(kStrategies));
  cmd.add_option("--steps", f.steps, "the number of steps n, an integer >= 1");
  cmd.add_option("--bands", f.bands,
                 list ? "bands of the banded square root (a list); with cyclic-poisson the groups"
                      : "bands of the banded square root; with --participation cyclic-poisson the "
                        "number of groups b");
  cmd.add_option("--restart", f.restart, "tree: restart the tree every this many steps");
  record_file(
      cmd.add_option("--coefficients", f.coefficients,
                     "toeplitz-file: the coefficients c_0, c_1, ... (CSV or a JSON array)"));
  record_file(cmd.add_option("--matrix", f.matrix,
                             "matrix-file: a lower-triangular n x n matrix (CSV rows or a JSON "
                             "array of rows)"));
  add_choice_option(cmd, "--participation", f.participation, kPatterns,
                    std::string("single (default) | min-sep (--min-sep b, --participations k) | ") +
                        (list ? "cyclic-poisson (--batch-fraction: amplified banded MF)"
                              : "cyclic-poisson (-q, --bands b: amplified banded MF)"));
  cmd.add_option("--min-sep", f.min_sep, "min-sep: steps between two participations, >= 1");
  cmd.add_option("--participations", f.participations, "min-sep: participations per record, >= 1");
  if (list) {
    f.rate_flag = "--batch-fraction";
    cmd.add_option("--batch-fraction", f.sampling_rate,
                   "cyclic-poisson: the expected batch over the dataset, B/N in (0, 1]; a "
                   "strategy of b bands samples its group at b times it");
  } else {
    cmd.add_option("-q,--sampling-rate", f.sampling_rate,
                   "cyclic-poisson: the Poisson sampling rate within a group, in (0, 1]");
  }
}

}  // namespace

Verb matrix_verb(CLI::App& cmd, MatrixVerbFlags shape, void (*add)(CLI::App&, MatrixFlags&),
                 MatrixRunner run) {
  auto f = std::make_shared<MatrixFlags>();
  add_strategy_flags(cmd, *f, shape.strategy_list);
  if (add) add(cmd, *f);
  if (shape.accountants) add_accountant_flags(cmd, f->accountant);
  if (shape.solve) add_solve_flags(cmd, f->tolerance, f->max_sigma);
  add_output_flags(cmd, f->output);
  if (shape.wide) add_wide_flag(cmd, f->output);
  return verb_of(&cmd, f, run);
}

}  // namespace dpb::cli
