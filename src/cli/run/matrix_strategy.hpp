#pragma once
// What the matrix-mechanism verbs share (docs/matrix.md): their flags, the
// strategy and participation pattern the flags describe (built and checked,
// refusals naming the flag), the inputs they report, and the declaration of
// a matrix verb's flags.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/errors.hpp"
#include "accounting/matrix/sensitivity.hpp"
#include "accounting/matrix/strategy.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/verbs.hpp"
#include "report/record.hpp"

namespace dpb::cli {

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
            std::optional<std::int64_t> bands, bool normalised);

/// The flags of the strategy that do not go with `kinds` (and `pattern`) are
/// refused; `bands_list`: --bands is a list of strategies (mf-error).
void refuse_unread(const MatrixFlags& f, const std::vector<StrategyKind>& kinds, Pattern pattern,
                   bool bands_list);

/// One integer flag's value (nullopt when not given), at least `min`.
std::optional<std::int64_t> one_integer(const char* flag, const std::vector<std::string>& texts,
                                        std::int64_t min);

matrix::Participation participation_of(const MatrixFlags& f, Pattern pattern);
matrix::Sensitivity sensitivity_of(const matrix::Strategy& s, const matrix::Participation& p);
/// The refusals of sensitivity_of(), before any work.
void check_sensitivity(const matrix::Strategy& s, const matrix::Participation& p);

/// The one strategy of mf-sensitivity, mf-epsilon and mf-sigma, its flags
/// checked against `pattern`.
Built one_built(const MatrixFlags& f, Pattern pattern);

void add_strategy_inputs(report::Record& in, const Built& b, std::int64_t n);
void add_pattern_inputs(report::Record& in, Pattern pattern, const matrix::Participation& p);
void add_sensitivity(report::Record& r, const matrix::Sensitivity& s);

inline constexpr const char* kSensitivityNote =
    "sensitivity_bound: exact (the largest change of C x over the pattern, rounded up) or "
    "upper (a sound upper bound: an epsilon computed from it is still an upper bound); "
    "docs/matrix.md in the source";

Pattern pattern_of(const MatrixFlags& f);

/// Cyclic Poisson: q and the number of groups b.
struct Cyclic {
  double q;
  std::int64_t groups;
};
Cyclic cyclic_of(const MatrixFlags& f, const Built& b);

/// The DP-SGD run of amplified banded MF (accounting/matrix_run.hpp), its
/// refusals naming --bands or --strategy.
DpSgdRun amplified(const Built& b, const Cyclic& c, double sigma);
/// The refusals of amplified(), before any work: a strategy of column norm
/// above 1, more bands than the strategy allows.
void check_amplified(const Built& b, const Cyclic& c);

/// The flags every matrix verb declares beside the strategy's.
struct MatrixVerbFlags {
  bool strategy_list = false;  ///< --strategy and --bands take lists (mf-error)
  bool accountants = false;    ///< --accountant and its settings
  bool solve = false;          ///< the σ search's --tolerance and --max-sigma
  bool wide = false;           ///< --wide
};

/// Declares a matrix verb on `cmd`: the strategy flags, the flags `add`
/// declares (between the strategy's and the accountants'), then `shape`'s,
/// then the output flags; runs as `run`.
using MatrixRunner = int (*)(const MatrixFlags&, std::ostream&, std::ostream&);
Verb matrix_verb(CLI::App& cmd, MatrixVerbFlags shape, void (*add)(CLI::App&, MatrixFlags&),
                 MatrixRunner run);

}  // namespace dpb::cli
