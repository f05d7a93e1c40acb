#include "cli/verbs/report_ledger.hpp"

#include "cli/errors.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/verbs/report_tables.hpp"

namespace dpb::cli::statement {

void dataset_budget_section(report::Document& doc, const LedgerFileFlags& file,
                            const DpEvent& release, AccountantChoice choice) {
  const ReadLedger read = read_ledger(file);
  const OpenLedger& ledger = read.ledger;
  const DatasetBudget& b = ledger.budget;
  const std::vector<store::Entry>& stored = read.stored;
  const std::vector<LedgerEntry>& entries = read.entries;
  const auto in_force = releases_in_force(entries);
  const auto text = [&](std::string t) { doc.blocks.push_back(report::Paragraph{std::move(t)}); };
  doc.blocks.push_back(report::Heading{2, "The dataset's budget"});
  const std::string unit = ledger.unit == PrivacyUnit::user ? "one user" : "one record";
  const std::string dataset =
      ledger.store->header().count("dataset") && !ledger.store->header().at("dataset").empty()
          ? " (" + ledger.store->header().at("dataset") + ")"
          : "";
  text("The dataset" + dataset + " has a budget of (epsilon, delta) = (" + plain(b.epsilon) + ", " +
       plain(b.delta) + ") for " + unit + " under the " + std::string(to_string(b.neighbouring)) +
       " relation, kept in a ledger of " + std::to_string(in_force.size()) +
       " releases in force (ledger " + ledger.path + ", " + std::to_string(stored.size()) +
       " entries).");
  const std::string json = event_to_json(release).dump();
  const LedgerEntry* own = nullptr;
  const LedgerEntry* voided = nullptr;
  for (const auto& e : entries)
    if (!e.is_void && e.event_json == json) (e.voided_by ? voided : own) = &e;
  if (!own && voided)
    doc.blocks.push_back(report::Warning{
        "This release was recorded as entry " + std::to_string(voided->stored.seq) +
        " and voided by entry " + std::to_string(*voided->voided_by) +
        " (a release that never ran): the figures below do not include it. If it is released, "
        "record it again with dpbudget ledger-add first."});
  else if (own)
    text("This release is entry " + std::to_string(own->stored.seq) + " ('" +
         own->stored.content.name + "', recorded " + own->stored.content.recorded_at + " by " +
         own->stored.content.recorded_by + ").");
  else
    doc.blocks.push_back(report::Warning{
        "This release is not recorded in the dataset's ledger: the figures below do not "
        "include it. Record it with dpbudget ledger-add before it is released."});
  if (b.mode == LedgerMode::adaptive) {
    const FilterState s = filter_state(b, contributions(in_force));
    text(
        "Releases chosen adaptively (each may depend on what earlier ones showed): through the "
        "ledger's " +
        std::string(b.filter == LedgerFilter::renyi ? "Renyi" : "Gaussian-DP") +
        " filter, every release of the dataset together satisfies (" + plain(b.epsilon) + ", " +
        plain(b.delta) + ")-differential privacy, a sound upper bound (docs/ledger.md); " +
        up(100 * s.used) + "% of the filter is used.");
  }
  choice.options.neighbouring = b.neighbouring;
  Question q;
  q.event = planned_event(in_force);
  use_ledger_pld_tolerance(choice, b, *q.event);
  q.accountants = std::move(choice);
  q.targets = {b.delta};
  const Answer answer = dpb::answer(q);
  for (const auto& r : answer.rows)
    if (r.recommended)
      text(std::string(b.mode == LedgerMode::planned
                           ? "The releases are fixed in advance: together"
                           : "If every release had been fixed in advance, together") +
           " they satisfy (epsilon, delta)-differential privacy with epsilon = " +
           up(r.guarantee.epsilon) + " at delta = " + plain(b.delta) + ", a sound upper bound (" +
           r.guarantee.accountant + " accountant, the composition of all " +
           std::to_string(in_force.size()) + " releases).");
  report::Table t{
      {"accountant", "claim", "delta", "epsilon of all releases"}, {}, {false, false, true, true}};
  for (const auto& r : answer.rows)
    t.rows.push_back({r.guarantee.accountant, claim_words(r.guarantee.bound), plain(b.delta),
                      r.guarantee.epsilon_lower ? "[" + down(*r.guarantee.epsilon_lower) + ", " +
                                                      up(r.guarantee.epsilon) + "]"
                                                : up(r.guarantee.epsilon)});
  doc.blocks.push_back(std::move(t));
}

}  // namespace dpb::cli::statement
