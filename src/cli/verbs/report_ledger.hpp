#pragma once
// What `report --ledger` adds to the privacy statement (docs/ledger.md): the
// dataset's spending in all, not only this release's: whether the release is
// recorded in the dataset's ledger, the filter's guarantee for everything
// released adaptively, and the planned total of every release in force.
#include <string>

#include "accounting/answer.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "report/document.hpp"

namespace dpb::cli::statement {

/// The section "The dataset's budget" of the statement: `release` is the
/// statement's event, compared with the ledger's releases in force by its
/// spec JSON; `choice` the statement's accountants (asked of the planned
/// total under the ledger's relation). Throws LedgerError for a ledger that
/// cannot be used.
void dataset_budget_section(report::Document& doc, const LedgerFileFlags& ledger,
                            const DpEvent& release, AccountantChoice choice);

}  // namespace dpb::cli::statement
