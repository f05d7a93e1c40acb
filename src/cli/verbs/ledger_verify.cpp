// dpbudget ledger-verify: the ledger's hash chain checked entry by entry
// (docs/ledger.md#verify): an entry edited, removed, inserted or swapped
// breaks it and is named; with --head, the chain must also end at the head
// kept elsewhere (which finds the last entries removed). Exit 8 when altered.
#include <cctype>
#include <memory>

#include "cli/errors.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct LedgerVerifyFlags {
  LedgerFileFlags file;
  std::string head;
  OutputFlags output;
};

std::string lower_case(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// A head as ledger-add prints it: 64 hex digits (lower case once read).
bool is_head(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

int run_ledger_verify(const LedgerVerifyFlags& f, std::ostream& out, std::ostream& err) {
  const std::string expected_head = lower_case(f.head);
  if (!expected_head.empty() && !is_head(expected_head))
    throw UsageError("--head: 64 hex digits, as ledger-add prints the head (got '" + f.head + "')");
  check_output_flags(f.output);
  if (only_checking()) return kOk;
  OpenLedger ledger = open_ledger(f.file, false);
  require_key(ledger);
  std::vector<store::Entry> stored;
  try {
    stored = ledger.store->entries();
  } catch (const store::StoreError& e) {
    throw_ledger_error(e);
  }
  std::vector<store::ChainProblem> problems = store::verify_chain(*ledger.store, stored);
  const std::string head = stored.empty() ? ledger.store->header_hash() : stored.back().hash;
  // --head: the chain must contain the head kept elsewhere; entries after it
  // were added since (said, not a fault), none of those up to it removed.
  std::optional<std::int64_t> after_head;
  if (!expected_head.empty()) {
    if (expected_head == ledger.store->header_hash())
      after_head = static_cast<std::int64_t>(stored.size());
    for (const auto& e : stored)
      if (e.hash == expected_head) after_head = stored.back().seq - e.seq;
    if (!after_head)
      problems.push_back({stored.empty() ? 0 : stored.back().seq,
                          "the chain does not contain --head (entries at its end removed, or "
                          "another ledger)"});
  }
  // An entry whose chain holds but whose body does not read is named too.
  try {
    (void)read_entries(stored);
  } catch (const LedgerError& e) {
    problems.push_back({0, e.what()});
  }
  report::Report rep;
  rep.command = "ledger-verify";
  report::Record r;
  r.add("ledger", report::text(ledger_label(f.file)));
  r.add("entries", report::integer(static_cast<std::int64_t>(stored.size())));
  r.add("keyed", report::boolean(ledger.store->keyed()));
  r.add("verified", report::boolean(problems.empty()));
  r.add("head", report::text(head));
  if (after_head) r.add("entries_after_head", report::integer(*after_head));
  rep.results.push_back(std::move(r));
  finish(rep, f.output, out, err);
  for (const auto& p : problems) {
    std::string where = "header";
    for (const auto& e : stored)
      if (e.seq == p.seq && p.seq > 0)
        where = "entry " + std::to_string(e.seq) + " ('" + e.content.name + "')";
    err << "dpbudget: ledger altered: " << report::escape_control(where + ": " + p.what) << '\n';
  }
  return problems.empty() ? kOk : kLedgerAltered;
}

Verb declare_ledger_verify(CLI::App& command) {
  auto f = std::make_shared<LedgerVerifyFlags>();
  add_ledger_file_flags(command, f->file);
  command.add_option(
      "--head", f->head,
      "a head kept elsewhere (ledger-add and ledger-init print it): the chain must contain it");
  add_output_flags(command, f->output);
  return verb_of(&command, f, run_ledger_verify);
}

}  // namespace

extern const VerbDescriptor kLedgerVerifyVerb{
    "ledger-verify",
    "check a ledger's hash chain: names each entry edited, removed or swapped; exit 8 if altered",
    {"dpbudget ledger-verify --ledger census.ledger"},
    declare_ledger_verify};

}  // namespace dpb::cli
