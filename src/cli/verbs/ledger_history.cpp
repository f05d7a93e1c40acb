// dpbudget ledger-history: every entry of a ledger in order, each release
// with its own ε and the running total (both from the release's RDP curve at
// the filter's orders, converted at the budget's δ: valid for releases fixed
// in advance), the filter's share used after it, and voids with their reason.
#include <memory>

#include "cli/errors.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct LedgerHistoryFlags {
  LedgerFileFlags file;
  OutputFlags output;
};

using report::Rounding;

int run_ledger_history(const LedgerHistoryFlags& f, std::ostream& out, std::ostream& err) {
  check_output_flags(f.output);
  if (only_checking()) return kOk;
  const ReadLedger read = read_ledger(f.file);
  const DatasetBudget& b = read.ledger.budget;
  const std::vector<LedgerEntry>& entries = read.entries;
  report::Report rep;
  rep.command = "ledger-history";
  rep.inputs.add("ledger", report::text(ledger_label(f.file)));
  rep.inputs.add("budget_epsilon", report::number(b.epsilon));
  rep.inputs.add("budget_delta", report::number(b.delta));
  // Running sums over the releases in force as of each entry: a release
  // voided later still counts until its void.
  std::vector<Contribution> so_far;
  std::vector<std::int64_t> seqs;
  bool curves = true;
  for (const auto& e : entries) {
    report::Record r;
    r.add("entry", report::integer(e.stored.seq));
    r.add("kind", report::text(e.stored.content.kind));
    r.add("name", report::text(e.stored.content.name));
    r.add("recorded_at", report::text(e.stored.content.recorded_at));
    r.add("recorded_by", report::text(e.stored.content.recorded_by));
    if (e.is_void) {
      r.add("voids", report::integer(e.voids));
      r.add("reason", report::text(e.reason));
      for (std::size_t i = 0; i < seqs.size(); ++i)
        if (seqs[i] == e.voids) {
          seqs.erase(seqs.begin() + static_cast<std::ptrdiff_t>(i));
          so_far.erase(so_far.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
    } else {
      const bool usable = !e.contribution.rdp.empty() && !e.contribution.rdp_unusable;
      if (usable)
        r.add("epsilon", report::number(curve_epsilon(b, e.contribution.rdp), Rounding::up));
      seqs.push_back(e.stored.seq);
      so_far.push_back(e.contribution);
      curves = curves && usable;
      if (e.voided_by) r.add("voided_by", report::integer(*e.voided_by));
    }
    if (curves) {
      r.add("running_epsilon",
            report::number(curve_epsilon(b, total_curve(b, so_far)), Rounding::up));
      if (b.mode == LedgerMode::adaptive)
        r.add("filter_used", report::number(filter_state(b, so_far).used, Rounding::up));
    }
    if (!e.stored.content.note.empty()) r.add("note", report::text(e.stored.content.note));
    rep.results.push_back(std::move(r));
  }
  note(rep, "epsilon and running_epsilon: rdp at the filter's orders, delta " + shown(b.delta) +
                "; valid for releases fixed in advance (ledger-status has every accountant and the "
                "adaptive guarantee)");
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_ledger_history(CLI::App& command) {
  auto f = std::make_shared<LedgerHistoryFlags>();
  add_ledger_file_flags(command, f->file);
  add_output_flags(command, f->output);
  return verb_of(&command, f, run_ledger_history);
}

}  // namespace

extern const VerbDescriptor kLedgerHistoryVerb{
    "ledger-history",
    "every entry of a ledger: each release's own epsilon and the running total, voids with their "
    "reason",
    {"dpbudget ledger-history --ledger census.ledger --format csv"},
    declare_ledger_history};

}  // namespace dpb::cli
