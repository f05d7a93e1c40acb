// dpbudget plan: the DP-SGD runs (B, T, σ) that meet a budget (ε, δ) for a
// dataset of N records, ranked by the noise per example σ/B
// (docs/calibration.md#plan), as a table or an SVG frontier (-o FILE).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "accounting/errors.hpp"
#include "accounting/run_plan.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/solve.hpp"
#include "cli/run/svg_output.hpp"
#include "cli/verbs.hpp"
#include "dpbudget/version.hpp"
#include "report/number_format.hpp"
#include "report/svg.hpp"

namespace dpb::cli {
namespace {

/// The epochs asked for without --compute or --epochs: three orders of
/// magnitude of training length.
const std::vector<double> kDefaultEpochs{1, 10, 100};
/// At most this many --epochs values: a plan is a table to read (each value
/// adds a row per batch size); `sweep --solve sigma` takes longer grids.
constexpr std::size_t kMaxEpochsValues = 100;
/// The skipped candidates a footnote names one by one before "and N more".
constexpr std::size_t kSkippedNamed = 5;

struct PlanFlags {
  std::vector<std::string> epsilon, delta, dataset_size, compute, max_batch_size, epochs;
  AccountantFlags accountant;
  OutputFlags output;
  std::string tolerance, max_sigma;
  std::string svg;  ///< -o: draw the frontier to this SVG file
};

std::string plan_number(double v) { return report::format_number(v, 6, report::Rounding::nearest); }

/// The question the flags ask, and the bound on its candidate batch sizes.
struct AskedPlan {
  PlanQuestion question;
  std::int64_t max_batch_size;  ///< the least of --max-batch-size, N and C
};

/// The question the flags ask; every refusal names its flag.
AskedPlan question_of(const PlanFlags& f) {
  PlanQuestion q;
  q.target_epsilon = required_real("--epsilon", f.epsilon, kPositive);
  q.delta = required_real("--delta", f.delta, kOpenUnit);
  const auto n = optional_integer("--dataset-size", f.dataset_size, 1);
  if (!n) throw UsageError("--dataset-size is required (N, the number of records: q = B/N)");
  q.dataset_size = *n;
  q.compute = optional_integer("--compute", f.compute, 1);
  if (q.compute && !f.epochs.empty())
    throw UsageError("--epochs: give either --compute or --epochs, not both");
  const auto max_batch = optional_integer("--max-batch-size", f.max_batch_size, 1);
  if (max_batch && *max_batch > q.dataset_size)
    throw UsageError("--max-batch-size: must be at most --dataset-size (" +
                     std::to_string(q.dataset_size) + "), got " + std::to_string(*max_batch));
  if (max_batch && q.compute && *q.compute < *max_batch)
    throw UsageError("--compute: must be at least --max-batch-size (" + std::to_string(*max_batch) +
                     "): each of the T = floor(C/B) steps processes B examples, got " +
                     std::to_string(*q.compute));
  if (!q.compute) {
    q.epochs = f.epochs.empty() ? kDefaultEpochs : parse_list("--epochs", f.epochs, kPositive);
    if (q.epochs.size() > kMaxEpochsValues)
      throw UsageError("--epochs: at most " + std::to_string(kMaxEpochsValues) +
                       " values (use sweep --solve sigma for a longer grid), got " +
                       std::to_string(q.epochs.size()));
  }
  const std::int64_t largest = std::min(
      {max_batch.value_or(q.dataset_size), q.compute.value_or(q.dataset_size), q.dataset_size});
  q.batch_sizes = plan_batch_sizes(largest);
  return {std::move(q), largest};
}

/// The candidates in words: "1, 2, 3, 4, 6, ..., 768" up to the largest.
std::string candidates_text(const std::vector<std::int64_t>& b) {
  std::string s;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 5 && b.size() > 7) {
      s += ", ...";
      i = b.size() - 1;
    }
    s += (s.empty() ? "" : ", ") + std::to_string(b[i]);
  }
  return s;
}

report::Record row_record(const PlanRow& row, std::size_t rank, double target_epsilon) {
  using report::Rounding;
  report::Record r;
  r.add("rank", report::integer(static_cast<std::int64_t>(rank)));
  r.add("batch_size", report::integer(*row.run.batch_size));
  r.add("sampling_rate", report::number(row.run.sampling_rate));
  r.add("steps", report::integer(row.run.steps));
  r.add("epochs", report::number(*row.run.epochs));
  r.add("noise_multiplier", report::number(row.run.noise_multiplier, Rounding::up));
  r.add("noise_per_example", report::number(row.noise_per_example, Rounding::up));
  r.add("on_frontier", report::boolean(row.on_frontier));
  for (auto& cell : guarantee_record(row.guarantee, /*solved_delta=*/false).cells)
    r.cells.push_back(std::move(cell));
  r.add("target_epsilon", report::hoisted(report::number(target_epsilon)));
  details_last(r);
  return r;
}

/// The length rule of the runs, in words, for the notes and the chart.
std::string length_text(const PlanQuestion& q) {
  if (q.compute)
    return "T = floor(C/B) steps for the compute budget C = " + std::to_string(*q.compute) +
           " examples";
  std::string list;
  for (double e : q.epochs) list += (list.empty() ? "" : ", ") + plan_number(e);
  return "T = ceil(E*N/B) steps for each E of --epochs (" + list + ")";
}

constexpr const char* kRankingNote =
    "ranking: by noise_per_example = sigma/B, the standard deviation of the noise in the averaged "
    "clipped gradient per unit clipping norm (Sander, Stock & Sablayrolles, ICML 2023; the "
    "noise-batch ratio of McKenna et al., arXiv 2501.18914), then more steps first; it assumes "
    "a model's utility depends on sigma/B and the steps T only and is better with smaller "
    "sigma/B at equal T, an approximation (learning rate, model size and data are left out). "
    "Smaller sigma/B tends to come with larger batches and fewer steps, so compare rows of "
    "similar steps; on_frontier marks the rows no other row beats on both. The ranking is "
    "advice, not a privacy claim: it passes or fails nothing, and every row meets the budget";

/// The rows as a curve: points (T, σ/B) in increasing T.
report::Series plan_curve(std::string label, std::vector<const PlanRow*> rows, bool dashed) {
  std::sort(rows.begin(), rows.end(),
            [](const PlanRow* a, const PlanRow* b) { return a->run.steps < b->run.steps; });
  report::Series s{std::move(label), {}, {}, dashed};
  for (const PlanRow* r : rows) {
    s.x.push_back(static_cast<double>(r->run.steps));
    s.y.push_back(r->noise_per_example);
  }
  return s;
}

report::Chart frontier_chart(const PlanQuestion& q, const PlanAnswer& plan) {
  report::Chart chart;
  chart.title = "Noise per example of the runs that meet epsilon " + plan_number(q.target_epsilon) +
                " at delta " + plan_number(q.delta);
  chart.x_label = "steps T";
  chart.y_label = "noise per example sigma/B";
  chart.log_x = true;
  // One curve per length (the compute budget, or each epochs value).
  std::map<double, std::vector<const PlanRow*>> curves;
  for (const PlanRow& r : plan.rows) curves[q.compute ? 0.0 : *r.run.epochs].push_back(&r);
  for (const auto& [epochs, rows] : curves) {
    // With a compute budget, T = floor(C/B) falls as B grows: the largest B
    // is at the left.
    const auto [small, large] = std::minmax_element(
        rows.begin(), rows.end(),
        [](const PlanRow* a, const PlanRow* b) { return *a->run.batch_size < *b->run.batch_size; });
    chart.series.push_back(
        plan_curve(q.compute ? "compute " + std::to_string(*q.compute) + " examples (B " +
                                   std::to_string(*(*large)->run.batch_size) + " at the left to " +
                                   std::to_string(*(*small)->run.batch_size) + " at the right)"
                             : plan_number(epochs) + (epochs == 1 ? " epoch" : " epochs"),
                   rows, false));
  }
  if (!q.compute) {
    std::vector<const PlanRow*> rows;
    for (const PlanRow& r : plan.rows)
      if (r.on_frontier) rows.push_back(&r);
    chart.series.push_back(
        plan_curve("frontier: no row has more steps and less noise", std::move(rows), true));
  }
  chart.log_y = report::wants_log_y(chart.series);
  if (chart.log_y) chart.y_label += " (log scale)";
  chart.caption.push_back("N = " + std::to_string(q.dataset_size) + ", q = B/N (Poisson), " +
                          length_text(q));
  chart.caption.push_back("sigma: the smallest meeting the budget under " + q.accountant +
                          ", rounded up (as 'dpbudget sigma' solves it)");
  chart.caption.push_back(
      "ranked by sigma/B: assumes utility depends on sigma/B and T only (an approximation); "
      "every point meets the budget");
  chart.caption.push_back(std::string("dpbudget ") + kVersion);
  return chart;
}

int run_plan(const PlanFlags& f, std::ostream& out, std::ostream& err) {
  auto [q, max_batch_size] = question_of(f);
  const AccountantChoice choice = resolve(f.accountant);
  if (choice.names.size() != 1) {
    std::string names;
    for (const auto& n : choice.names) names += (names.empty() ? "" : ",") + n;
    throw UsageError("--accountant: plan takes one accountant (run it once per accountant), got " +
                     names);
  }
  q.accountant = choice.names.front();
  q.options = choice.options;
  q.settings = resolve_solve_flags(f.tolerance, f.max_sigma);
  check_output_flags(f.output);
  if (only_checking()) return kOk;

  PlanAnswer plan;
  try {
    plan = plan_runs(q);
  } catch (const RunParameterError& e) {
    throw UsageError(message_of(e, Naming::flags));
  }
  if (!f.svg.empty()) {
    write_svg(frontier_chart(q, plan), f.svg, out);
    return kOk;
  }

  report::Report rep;
  rep.command = "plan";
  // The target and delta are every row's (hoisted above the table in text).
  rep.inputs.add("dataset_size", report::integer(q.dataset_size));
  if (q.compute)
    rep.inputs.add("compute", report::integer(*q.compute));
  else
    rep.inputs.add("epochs", report::numbers(q.epochs));
  rep.inputs.add("max_batch_size", report::integer(max_batch_size));
  rep.inputs.add("sampling", report::text("poisson"));
  add_inputs(rep.inputs, choice);
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    rep.results.push_back(row_record(plan.rows[i], i + 1, q.target_epsilon));
    collect_remarks(plan.rows[i].guarantee, rep, err);
  }
  note(rep, "candidates: B = the powers of two and their midpoints up to max_batch_size " +
                std::to_string(max_batch_size) +
                " (the least of --max-batch-size, --dataset-size and --compute): " +
                candidates_text(q.batch_sizes));
  note(rep, "each run: q = B/N (Poisson sampling), " + length_text(q) +
                "; noise_multiplier: the smallest sigma with epsilon <= " +
                plan_number(q.target_epsilon) + " at delta " + plan_number(q.delta) + " under " +
                q.accountant + ", rounded up within --tolerance, as 'dpbudget sigma' solves it");
  if (!plan.skipped.empty()) {
    std::string list;
    for (std::size_t i = 0; i < plan.skipped.size() && i < kSkippedNamed; ++i) {
      const PlanSkipped& s = plan.skipped[i];
      list += (list.empty() ? "" : ", ") + std::string("B ") + std::to_string(s.batch_size) +
              " (T " + std::to_string(s.steps) + ")";
    }
    if (plan.skipped.size() > kSkippedNamed)
      list += " and " + std::to_string(plan.skipped.size() - kSkippedNamed) + " more";
    note(rep, std::to_string(plan.skipped.size()) +
                  " candidate(s) not listed: no noise multiplier up to --max-sigma " +
                  plan_number(q.settings.max_sigma) + " meets the budget: " + list);
  }
  note(rep, kRankingNote);
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_plan(CLI::App& command) {
  auto f = std::make_shared<PlanFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--epsilon", f->epsilon, "the budget: epsilon > 0 every run must meet");
  cmd->add_option("--delta", f->delta, "delta in (0, 1)");
  cmd->add_option("--dataset-size", f->dataset_size,
                  "N, the number of records (required): q = B/N");
  cmd->add_option("--compute", f->compute,
                  "examples processed in training, C: T = floor(C/B) steps for batch size B");
  cmd->add_option("--epochs", f->epochs,
                  "without --compute: epochs E (a list), T = ceil(E*N/B) (default 1,10,100)");
  cmd->add_option("--max-batch-size", f->max_batch_size,
                  "largest batch size considered (default: N, or C when smaller)");
  add_accountant_flags(*cmd, f->accountant);
  add_solve_flags(*cmd, f->tolerance, f->max_sigma);
  record_file(cmd->add_option("-o,--output", f->svg,
                              "draw sigma/B against the steps to this SVG file (- for stdout) "
                              "instead of a table"));
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_plan);
}

}  // namespace

extern const VerbDescriptor kPlanVerb{
    "plan",
    "DP-SGD runs (batch size, steps, sigma) that meet --epsilon at --delta for --dataset-size\n  "
    "records, ranked by the noise per example sigma/B",
    {"dpbudget plan --epsilon 8 --delta 1e-5 --dataset-size 60000 --compute 600000 "
     "--max-batch-size 4096"},
    declare_plan};

}  // namespace dpb::cli
