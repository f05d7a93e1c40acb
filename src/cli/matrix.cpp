// The matrix-mechanism verbs (docs/matrix.md): mf-sensitivity (a strategy's
// sensitivity under a participation pattern), mf-epsilon (ε of a run at noise
// σ), mf-sigma (σ for a target ε) and mf-error (the prefix-sum error of
// strategies side by side, at unit noise or at the σ of one ε; an SVG of the
// error against the number of bands). The maths is accounting/matrix/ and
// accounting/matrix_run; ε and σ come from answer() and the calibration every
// other verb uses.
#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "accounting/answer.hpp"
#include "accounting/errors.hpp"
#include "accounting/matrix/error.hpp"
#include "accounting/matrix/sensitivity.hpp"
#include "accounting/matrix/strategy.hpp"
#include "accounting/matrix_run.hpp"
#include "accounting/numerics/outward.hpp"
#include "cli/accountant_flags.hpp"
#include "cli/choices.hpp"
#include "cli/errors.hpp"
#include "cli/flag_values.hpp"
#include "cli/output_flags.hpp"
#include "cli/parse.hpp"
#include "cli/result_rows.hpp"
#include "cli/solve.hpp"
#include "cli/svg_output.hpp"
#include "cli/verbs.hpp"
#include "report/svg.hpp"

namespace dpb::cli {
namespace {

enum class StrategyKind { identity, tree, sqrt, banded, toeplitz_file, matrix_file };
constexpr std::array<Choice<StrategyKind>, 6> kStrategies{{
    {"identity", StrategyKind::identity},
    {"tree", StrategyKind::tree},
    {"sqrt", StrategyKind::sqrt},
    {"banded", StrategyKind::banded},
    {"toeplitz-file", StrategyKind::toeplitz_file},
    {"matrix-file", StrategyKind::matrix_file},
}};

enum class Pattern { single, min_sep, cyclic_poisson };
constexpr std::array<Choice<Pattern>, 3> kPatterns{{
    {"single", Pattern::single},
    {"min-sep", Pattern::min_sep},
    {"cyclic-poisson", Pattern::cyclic_poisson},
}};

struct MatrixFlags {
  std::vector<std::string> strategy;
  std::vector<std::string> steps, bands, restart, min_sep, participations, sampling_rate;
  std::string coefficients, matrix;
  std::string participation = "single";
  /// The flag of `sampling_rate`: -q (the rate within a group) or, in
  /// mf-error, --batch-fraction (B/N; a group of b bands sampled at b times it).
  const char* rate_flag = "--sampling-rate";
  std::vector<std::string> sigma, epsilon, delta;
  std::string max_epsilon, tolerance, max_sigma, svg;
  AccountantFlags accountant;
  OutputFlags output;
};

// --- reading --coefficients and --matrix -----------------------------------

std::string read_text(const char* flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(std::string(flag) + ": cannot open '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A JSON array of numbers (or of rows), or CSV: numbers separated by commas
/// or white space, one matrix row per line.
std::vector<std::vector<double>> read_numbers(const char* flag, const std::string& path) {
  const std::string text = read_text(flag, path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw UsageError(std::string(flag) + ": '" + path + "' is empty");
  std::vector<std::vector<double>> rows;
  if (text[first] == '[') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw UsageError(std::string(flag) + ": '" + path + "' is not valid JSON");
    }
    auto number = [&](const nlohmann::json& v) {
      if (!v.is_number())
        throw UsageError(std::string(flag) + ": '" + path + "': every entry must be a number");
      return v.get<double>();
    };
    if (!j.is_array()) throw UsageError(std::string(flag) + ": expected a JSON array");
    bool nested = !j.empty() && j.front().is_array();
    if (!nested) rows.emplace_back();
    for (const auto& v : j) {
      if (nested) {
        if (!v.is_array())
          throw UsageError(std::string(flag) + ": '" + path + "': every row must be an array");
        rows.emplace_back();
        for (const auto& x : v) rows.back().push_back(number(x));
      } else {
        rows.back().push_back(number(v));
      }
    }
    return rows;
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    for (char& ch : line)
      if (ch == ',' || ch == '\t' || ch == '\r' || ch == ';') ch = ' ';
    std::istringstream items(line);
    std::string item;
    std::vector<double> row;
    while (items >> item) {
      try {
        row.push_back(parse_real(flag, item, Domain{-kInf, kInf, true, true, "a finite number"}));
      } catch (const UsageError&) {
        throw UsageError(std::string(flag) + ": '" + path + "': '" + item +
                         "' is not a finite number");
      }
    }
    if (!row.empty()) rows.push_back(std::move(row));
  }
  if (rows.empty()) throw UsageError(std::string(flag) + ": '" + path + "' holds no numbers");
  return rows;
}

// --- the strategy ----------------------------------------------------------

std::optional<std::int64_t> one_integer(const char* flag, const std::vector<std::string>& texts,
                                        std::int64_t min) {
  return optional_integer(flag, texts, min);
}

/// Rethrows an accounting refusal of a strategy as a UsageError naming the flag.
template <typename F>
auto flagged(const char* flag, F&& f) {
  try {
    return f();
  } catch (const InvalidParameter& e) {
    const std::string what = e.what();
    throw UsageError(std::string(flag) + ": " +
                     what.substr(std::min(what.size(), e.field().size() + 2)));
  }
}

struct Built {
  StrategyKind kind;
  std::string name;  ///< as the table shows it
  std::optional<std::int64_t> bands;
  matrix::Strategy strategy;
};

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
      auto rows = read_numbers("--coefficients", f.coefficients);
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
      const auto rows = read_numbers("--matrix", f.matrix);
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

const char* const kSensitivityNote =
    "sensitivity_bound: exact (the largest change of C x over the pattern, rounded up) or "
    "upper (a sound upper bound: an epsilon computed from it is still an upper bound); "
    "docs/matrix.md in the source";

Pattern pattern_of(const MatrixFlags& f) {
  return parse_choice("--participation", f.participation, kPatterns);
}

/// Cyclic Poisson: q and the number of groups b.
struct Cyclic {
  double q;
  std::int64_t groups;
};
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

// --- mf-sensitivity --------------------------------------------------------

int run_sensitivity(const MatrixFlags& f, std::ostream& out, std::ostream&) {
  const Pattern pattern = pattern_of(f);
  if (pattern == Pattern::cyclic_poisson)
    throw UsageError(
        "--participation cyclic-poisson: amplified banded MF uses no sensitivity (every column "
        "of norm at most 1 and b bands); see mf-epsilon");
  const Built b = one_built(f, pattern);
  const auto p = participation_of(f, pattern);
  resolve(f.output);
  check_sensitivity(b.strategy, p);
  flags_checked();
  const auto s = sensitivity_of(b.strategy, p);
  report::Report rep;
  rep.command = "mf-sensitivity";
  add_strategy_inputs(rep.inputs, b, matrix::steps(b.strategy));
  add_pattern_inputs(rep.inputs, pattern, p);
  report::Record r;
  add_sensitivity(r, s);
  const auto norms = matrix::column_norms_squared(b.strategy);
  r.add("max_column_norm",
        report::number(std::sqrt(*std::max_element(norms.begin(), norms.end()))));
  rep.results.push_back(std::move(r));
  note(rep, kSensitivityNote);
  emit(rep, f.output, out);
  return kOk;
}

// --- mf-epsilon ------------------------------------------------------------

int run_epsilon(const MatrixFlags& f, std::ostream& out, std::ostream& err) {
  const Pattern pattern = pattern_of(f);
  const Built b = one_built(f, pattern);
  const double sigma = required_real("--sigma", f.sigma, kPositive);
  if (f.delta.empty()) throw UsageError("--delta is required");
  const auto deltas = parse_list("--delta", f.delta, kOpenUnit);
  std::optional<double> budget;
  if (!f.max_epsilon.empty()) budget = parse_real("--max-epsilon", f.max_epsilon, kNonNegative);
  const AccountantChoice choice = resolve(f.accountant);
  resolve(f.output);
  text_style(f.output);

  report::Record inputs;
  add_strategy_inputs(inputs, b, matrix::steps(b.strategy));
  Question question;
  question.accountants = choice;
  question.targets = deltas;
  if (pattern == Pattern::cyclic_poisson) {
    const Cyclic c = cyclic_of(f, b);
    const DpSgdRun run = amplified(b, c, sigma);
    flags_checked();
    inputs.add("participation", report::text("cyclic-poisson"));
    inputs.add("groups", report::integer(c.groups));
    inputs.add("sampling_rate", report::number(c.q));
    inputs.add("noise_sd", report::number(sigma));
    inputs.add("dp_sgd_steps", report::integer(run.steps));
    question.event = amplified_event(run.sampling_rate, run.noise_multiplier,
                                     matrix::steps(b.strategy), c.groups);
    question.attained = amplified_attained_event(b.strategy, c.groups, c.q, sigma);
    question.run = run;
  } else {
    const auto p = participation_of(f, pattern);
    check_sensitivity(b.strategy, p);
    flags_checked();
    const auto s = sensitivity_of(b.strategy, p);
    add_pattern_inputs(inputs, pattern, p);
    inputs.add("noise_sd", report::number(sigma));
    add_sensitivity(inputs, s);
    const double z = matrix_noise_multiplier(sigma, s.squared);
    inputs.add("noise_multiplier", report::number(z, report::Rounding::down));
    question.event = matrix_release_event(z);
    // A sensitivity that is only an upper bound gives a Gaussian that dominates
    // the release without being attained by it (docs/matrix.md#privacy-of-one-release).
    question.event_is_own = s.exact;
  }
  const Answer answer = dpb::answer(question);
  auto rep = answer_report("mf-epsilon", std::move(inputs), question, answer, err);
  if (pattern == Pattern::cyclic_poisson)
    note(rep,
         "amplified banded MF: the DP-SGD run of ceil(steps / bands) Poisson-sampled rounds "
         "at sampling_rate and noise_sd (Choquette-Choo et al. 2023, arXiv 2306.08153); pld's "
         "lower end: one group's steps, each at noise_sd / its column's norm, a pair the run "
         "attains");
  else
    note(rep,
         "one Gaussian release at noise_multiplier = noise_sd / sensitivity (the noise on "
         "each entry of C x, per unit of clipping norm)");
  std::optional<BudgetCheck> check;
  if (budget) check = check_budget(question, answer, *budget);
  emit(rep, f.output, out);
  return report_budget(answer, check, budget.value_or(0), choice.names, err);
}

// --- mf-sigma --------------------------------------------------------------

/// σ per entry for a target ε at δ under one accountant, and the guarantee
/// the solved run or release achieves.
struct SolvedNoise {
  double noise_multiplier;  ///< the release's σ/Δ, or the DP-SGD σ
  double noise_sd;          ///< σ on each entry of C x
  Guarantee guarantee;
};

SolvedNoise solve_noise(const Built& b, Pattern pattern, const std::optional<Cyclic>& cyclic,
                        const matrix::Sensitivity& s, const std::string& accountant,
                        const AccountantChoice& choice, double target, double delta,
                        const SolveSettings& settings) {
  const RunTarget what{Measure::epsilon, delta, 0};
  if (pattern == Pattern::cyclic_poisson) {
    const SigmaSolution z = calibrate_amplified(b.strategy, cyclic->q, cyclic->groups, accountant,
                                                choice.options, target, what, settings);
    return {z.noise_multiplier, z.noise_multiplier, z.guarantee};
  }
  const SigmaSolution z =
      calibrate_release(accountant, choice.options, target, what, settings, s.exact);
  return {z.noise_multiplier, matrix_noise(z.noise_multiplier, s.squared), z.guarantee};
}

int run_sigma(const MatrixFlags& f, std::ostream& out, std::ostream& err) {
  const Pattern pattern = pattern_of(f);
  const Built b = one_built(f, pattern);
  if (f.epsilon.empty()) throw UsageError("--epsilon is required (the target)");
  if (f.delta.empty()) throw UsageError("--delta is required");
  const auto targets = parse_list("--epsilon", f.epsilon, kNonNegative);
  const auto deltas = parse_list("--delta", f.delta, kOpenUnit);
  const AccountantChoice choice = resolve(f.accountant);
  resolve(f.output);
  text_style(f.output);
  const SolveSettings settings = resolve_solve_flags(f.tolerance, f.max_sigma);
  report::Report rep;
  rep.command = "mf-sigma";
  add_strategy_inputs(rep.inputs, b, matrix::steps(b.strategy));
  std::optional<Cyclic> cyclic;
  matrix::Sensitivity s;
  if (pattern == Pattern::cyclic_poisson) {
    cyclic = cyclic_of(f, b);
    (void)amplified(b, *cyclic, 0);  // the refusals, before any work
    flags_checked();
    rep.inputs.add("participation", report::text("cyclic-poisson"));
    rep.inputs.add("groups", report::integer(cyclic->groups));
    rep.inputs.add("sampling_rate", report::number(cyclic->q));
  } else {
    const auto p = participation_of(f, pattern);
    check_sensitivity(b.strategy, p);
    flags_checked();
    s = sensitivity_of(b.strategy, p);
    add_pattern_inputs(rep.inputs, pattern, p);
    add_sensitivity(rep.inputs, s);
  }
  add_inputs(rep.inputs, choice);
  for (const auto& accountant : choice.names)
    for (double target : targets)
      for (double delta : deltas) {
        const SolvedNoise solved =
            solve_noise(b, pattern, cyclic, s, accountant, choice, target, delta, settings);
        report::Record r = guarantee_record(solved.guarantee, false);
        r.add("target_epsilon", report::hoisted(report::number(target)));
        r.add("noise_multiplier", report::number(solved.noise_multiplier, report::Rounding::up));
        r.add("noise_sd", report::number(solved.noise_sd, report::Rounding::up));
        details_last(r);
        rep.results.push_back(std::move(r));
        collect_remarks(solved.guarantee, rep, err);
      }
  note(rep, pattern == Pattern::cyclic_poisson
                ? "noise_sd: the noise on each entry of C x per unit of clipping norm, the "
                  "DP-SGD noise multiplier of ceil(steps / bands) rounds (rounded up)"
                : "noise_sd = noise_multiplier x sensitivity: the noise on each entry of C x "
                  "per unit of clipping norm (rounded up)");
  emit(rep, f.output, out);
  return kOk;
}

// --- mf-error --------------------------------------------------------------

int run_error(const MatrixFlags& f, std::ostream& out, std::ostream& err) {
  if (f.strategy.empty()) throw UsageError("--strategy is required");
  std::vector<StrategyKind> kinds;
  for (const auto& text : f.strategy) {
    std::istringstream items(text);
    std::string item;
    while (std::getline(items, item, ','))
      kinds.push_back(parse_choice("--strategy", item, kStrategies));
  }
  const Pattern pattern = pattern_of(f);
  refuse_unread(f, kinds, pattern, true);
  const auto n = one_integer("--steps", f.steps, 1);
  std::vector<std::int64_t> bands;
  if (!f.bands.empty()) bands = parse_integer_list("--bands", f.bands, 1);
  const bool has_banded =
      std::find(kinds.begin(), kinds.end(), StrategyKind::banded) != kinds.end();
  if (has_banded && bands.empty()) throw UsageError("--bands is required with --strategy banded");
  if (!f.svg.empty() && !has_banded)
    throw UsageError(
        "-o: the chart draws the error against the number of bands: give --strategy banded with "
        "--bands");
  if (!has_banded && !bands.empty() && pattern != Pattern::cyclic_poisson)
    throw UsageError("--bands: only with --strategy banded");
  const bool calibrated = !f.epsilon.empty();
  if (!calibrated && !f.delta.empty()) throw UsageError("--delta: goes with --epsilon");
  if (calibrated && f.delta.empty()) throw UsageError("--delta is required with --epsilon");
  const double target = calibrated ? *optional_real("--epsilon", f.epsilon, kNonNegative) : 0;
  const double delta = calibrated ? *optional_real("--delta", f.delta, kOpenUnit) : 0;
  if (pattern == Pattern::cyclic_poisson && !calibrated)
    throw UsageError(
        "--epsilon is required with --participation cyclic-poisson (each strategy's "
        "noise is calibrated to it)");
  const AccountantChoice choice = resolve(f.accountant);
  resolve(f.output);
  text_style(f.output);
  const SolveSettings settings = resolve_solve_flags(f.tolerance, f.max_sigma);
  matrix::Participation p{1, 1};
  if (pattern == Pattern::min_sep) p = participation_of(f, pattern);
  std::optional<double> q;
  if (pattern == Pattern::cyclic_poisson) {
    if (f.sampling_rate.empty())
      throw UsageError("--batch-fraction is required with --participation cyclic-poisson");
    q = *optional_real("--batch-fraction", f.sampling_rate,
                       Domain{0, 1, true, false, "a number in (0, 1]"});
  }
  const bool amplify = pattern == Pattern::cyclic_poisson;
  std::vector<Built> built;
  for (StrategyKind kind : kinds) {
    if (kind == StrategyKind::banded) {
      for (std::int64_t b : bands) built.push_back(build(f, kind, n, b, false));
    } else {
      built.push_back(build(f, kind, n, std::nullopt, amplify));
    }
  }
  // A strategy of column norm above 1 is refused before any work; one that
  // is not banded (the tree) is skipped with a warning below.
  if (amplify)
    for (const Built& b : built)
      if (b.bands) (void)amplified(b, Cyclic{*q, *b.bands}, 0);
  if (!amplify)
    for (const Built& b : built) check_sensitivity(b.strategy, p);
  flags_checked();

  report::Report rep;
  rep.command = "mf-error";
  if (n) rep.inputs.add("steps", report::integer(*n));
  add_pattern_inputs(rep.inputs, pattern, p);
  if (q) rep.inputs.add("batch_fraction", report::number(*q));
  if (calibrated) {
    rep.inputs.add("epsilon", report::number(target));
    rep.inputs.add("delta", report::number(delta));
  }
  add_inputs(rep.inputs, choice);

  // The smallest noise multiplier among the chosen accountants' sound upper
  // bounds (their recommended row), for the release of every strategy alike.
  auto best = [&](auto&& solve) -> std::optional<std::pair<double, std::string>> {
    std::optional<std::pair<double, std::string>> out_best;
    for (const auto& accountant : choice.names) {
      try {
        const auto [z, g] = solve(accountant);
        if (g.bound != BoundKind::upper) continue;
        if (!out_best || z < out_best->first) out_best = {{z, accountant}};
      } catch (const UnsupportedEvent&) {
        if (choice.names.size() == 1) throw;
      }
    }
    return out_best;
  };
  std::optional<std::pair<double, std::string>> release_z;
  if (calibrated && !amplify) {
    release_z = best([&](const std::string& a) {
      // Only the noise is shown (no lower end): the release is the same for
      // every strategy, each with its own sensitivity.
      const SigmaSolution z =
          calibrate_release(a, choice.options, target, RunTarget{Measure::epsilon, delta, 0},
                            settings, /*sensitivity_exact=*/false);
      return std::pair{z.noise_multiplier, z.guarantee};
    });
    if (!release_z) throw NoSolution("no chosen accountant gives a sound upper bound here");
  }
  report::Series banded_series{"banded", {}, {}};
  std::vector<report::Series> flat;
  for (const Built& b : built) {
    report::Record r;
    r.add("strategy", report::text(b.name));
    if (b.bands) r.add("bands", report::integer(*b.bands));
    const matrix::PrefixSumError e =
        flagged("--strategy", [&] { return matrix::prefix_sum_error(b.strategy); });
    double scale = 1;  // σ² per entry
    if (amplify) {
      const std::int64_t groups = b.kind == StrategyKind::identity ? 1 : b.bands.value_or(0);
      if (!b.bands) {
        warn(rep, b.name +
                      ": no amplified analysis (not a banded lower-triangular strategy): "
                      "row skipped");
        continue;
      }
      // The same expected batch q·N at every step: the group of N/b records
      // is sampled at q·b (docs/matrix.md#error), rounded up.
      const double group_rate = outward::product_up(*q, static_cast<double>(groups));
      if (group_rate > 1) {
        warn(rep, b.name + " with " + std::to_string(groups) +
                      " bands: --batch-fraction times the bands exceeds 1 (a group smaller than "
                      "the batch): row skipped");
        continue;
      }
      const Cyclic c{group_rate, groups};
      const auto solved = best([&](const std::string& a) {
        const SigmaSolution s =
            calibrate_amplified(b.strategy, c.q, c.groups, a, choice.options, target,
                                RunTarget{Measure::epsilon, delta, 0}, settings);
        return std::pair{s.noise_multiplier, s.guarantee};
      });
      if (!solved) throw NoSolution("no chosen accountant gives a sound upper bound here");
      r.add("group_sampling_rate", report::number(group_rate));
      r.add("dp_sgd_steps", report::integer((matrix::steps(b.strategy) + groups - 1) / groups));
      r.add("accountant", report::text(solved->second));
      r.add("noise_sd", report::number(solved->first, report::Rounding::up));
      scale = solved->first * solved->first;
    } else {
      const auto s = sensitivity_of(b.strategy, p);
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
    if (calibrated) {
      r.add("max_error", report::number(e.max * scale));
      r.add("mean_error", report::number(e.mean * scale));
    }
    const double shown_error = calibrated ? e.max * scale : e.max;
    if (b.kind == StrategyKind::banded) {
      banded_series.x.push_back(static_cast<double>(*b.bands));
      banded_series.y.push_back(shown_error);
    } else {
      flat.push_back(report::Series{b.name, {}, {shown_error}});
    }
    rep.results.push_back(std::move(r));
  }
  note(rep, calibrated
                ? "max_error, mean_error: the largest and the mean variance of the prefix-sum "
                  "estimates at noise_sd (each strategy calibrated to epsilon at delta); *_unit: "
                  "at unit noise"
                : "max_error_unit, mean_error_unit: the largest and the mean variance of the "
                  "prefix-sum estimates at unit noise on each entry of C x");
  if (!f.svg.empty()) {
    report::Chart chart;
    chart.title = calibrated ? "prefix-sum error at one epsilon" : "prefix-sum error at unit noise";
    chart.x_label = "bands";
    chart.y_label = "max squared error";
    if (!banded_series.x.empty()) {
      const double lo = banded_series.x.front(), hi = banded_series.x.back();
      for (auto& s : flat) {
        const double y = s.y.front();
        s.x = {std::min(lo, hi), std::max(lo, hi)};
        s.y = {y, y};
        s.dashed = true;
      }
      chart.series.push_back(banded_series);
    } else {
      throw UsageError("-o: no banded row to draw (every one was skipped, see the warnings)");
    }
    for (auto& s : flat) chart.series.push_back(s);
    chart.log_y = report::wants_log_y(chart.series);
    chart.y_from_zero = !chart.log_y;
    if (n) chart.caption.push_back("steps " + std::to_string(*n));
    if (calibrated) chart.caption.push_back("epsilon " + shown(target) + ", delta " + shown(delta));
    write_svg(chart, f.svg, out);
    if (f.svg == "-") return kOk;
  }
  finish(rep, f.output, out, err);
  return kOk;
}

// --- declarations ----------------------------------------------------------

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

namespace {

using MatrixRunner = int (*)(const MatrixFlags&, std::ostream&, std::ostream&);

/// A matrix verb: its subcommand, the strategy flags, the flags `add` declares
/// (between the strategy's and the accountants'), the accountant flags when
/// it asks accountants, and the output flags.
Verb matrix_verb(CLI::App& app, const char* name, const std::string& description, bool list,
                 bool accountants, bool solve, bool wide, void (*add)(CLI::App&, MatrixFlags&),
                 MatrixRunner run) {
  auto f = std::make_shared<MatrixFlags>();
  CLI::App* cmd = app.add_subcommand(name, description);
  add_strategy_flags(*cmd, *f, list);
  if (add) add(*cmd, *f);
  if (accountants) add_accountant_flags(*cmd, f->accountant);
  if (solve) add_solve_flags(*cmd, f->tolerance, f->max_sigma);
  add_output_flags(*cmd, f->output);
  if (wide) add_wide_flag(*cmd, f->output);
  return verb_of(cmd, f, run);
}

}  // namespace

Verb setup_mf_sensitivity(CLI::App& app) {
  return matrix_verb(app, "mf-sensitivity",
                     "L2 sensitivity of a matrix-mechanism strategy under a participation pattern\n"
                     "  example: dpbudget mf-sensitivity --strategy banded --steps 128 --bands 4 "
                     "--participation min-sep --min-sep 4 --participations 8",
                     false, false, false, false, nullptr, run_sensitivity);
}

Verb setup_mf_epsilon(CLI::App& app) {
  return matrix_verb(
      app, "mf-epsilon",
      "epsilon of a matrix-mechanism run (DP-FTRL, banded MF) at noise --sigma\n"
      "  example: dpbudget mf-epsilon --strategy sqrt --steps 1000 --sigma 5 --delta 1e-6",
      false, true, false, true,
      [](CLI::App& cmd, MatrixFlags& f) {
        cmd.add_option("--sigma", f.sigma,
                       "noise standard deviation on each entry of C x per unit of clipping norm, "
                       "> 0");
        cmd.add_option("--delta", f.delta, "delta(s) in (0, 1)");
        cmd.add_option(
            "--max-epsilon", f.max_epsilon,
            "budget gate: the recommended row above it is named on stderr; exit status 1");
      },
      run_epsilon);
}

Verb setup_mf_sigma(CLI::App& app) {
  return matrix_verb(
      app, "mf-sigma",
      "noise of a matrix-mechanism run (DP-FTRL, banded MF) for a target epsilon\n"
      "  example: dpbudget mf-sigma --strategy tree --steps 1000 --epsilon 8 --delta 1e-6",
      false, true, true, true,
      [](CLI::App& cmd, MatrixFlags& f) {
        cmd.add_option("--epsilon", f.epsilon, "target epsilon(s) >= 0");
        cmd.add_option("--delta", f.delta, "delta(s) in (0, 1)");
      },
      run_sigma);
}

Verb setup_mf_error(CLI::App& app) {
  return matrix_verb(
      app, "mf-error",
      "prefix-sum error of matrix-mechanism strategies side by side, at unit noise or each "
      "calibrated to one epsilon\n"
      "  example: dpbudget mf-error --strategy identity,tree,sqrt,banded --steps 2000 "
      "--bands 1,2,4,8 --epsilon 8 --delta 1e-6",
      true, true, true, false,
      [](CLI::App& cmd, MatrixFlags& f) {
        cmd.add_option("--epsilon", f.epsilon, "calibrate every strategy's noise to this epsilon");
        cmd.add_option("--delta", f.delta, "the delta of --epsilon, in (0, 1)");
        record_file(cmd.add_option("-o,--output", f.svg,
                                   "also draw the max error against the bands as SVG to this file "
                                   "(- for stdout, instead of the table)"));
      },
      run_error);
}

}  // namespace dpb::cli
