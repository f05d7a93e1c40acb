// dpbudget mf-sensitivity: a matrix-mechanism strategy's L2 sensitivity under
// a participation pattern (docs/matrix.md), exact when a theorem gives it.
#include <algorithm>
#include <cmath>

#include "accounting/answer.hpp"
#include "accounting/matrix/sensitivity.hpp"
#include "accounting/matrix/strategy.hpp"
#include "accounting/matrix_run.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/parse.hpp"
#include "cli/run/matrix_strategy.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/solve.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

int run_mf_sensitivity(const MatrixFlags& f, std::ostream& out, std::ostream&) {
  const Pattern pattern = pattern_of(f);
  if (pattern == Pattern::cyclic_poisson)
    throw UsageError(
        "--participation cyclic-poisson: amplified banded MF uses no sensitivity (every column "
        "of norm at most 1 and b bands); see mf-epsilon");
  const Built b = one_built(f, pattern);
  const auto p = participation_of(f, pattern);
  check_format(f.output);
  check_sensitivity(b.strategy, p);
  if (only_checking()) return kOk;
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

}  // namespace

extern const VerbDescriptor kMfSensitivityVerb{
    "mf-sensitivity",
    "L2 sensitivity of a matrix-mechanism strategy under a participation pattern",
    {"dpbudget mf-sensitivity --strategy banded --steps 128 --bands 4 --participation min-sep "
     "--min-sep 4 --participations 8"},
    [](CLI::App& cmd) { return matrix_verb(cmd, {}, nullptr, run_mf_sensitivity); }};

}  // namespace dpb::cli
