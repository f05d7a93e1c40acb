#pragma once
// Flags shared by several verbs, and the step from flags to events,
// accountants and reports. No maths here: that lives in src/accounting/.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "report/record.hpp"
#include "report/render.hpp"

namespace dpb::cli {

/// The DP-SGD run: q and T directly, or TF-Privacy style from N, B, epochs.
struct DpSgdFlags {
  std::string sampling_rate, noise_multiplier, steps, dataset_size, batch_size, epochs;
};

struct DpSgdRun {
  double sampling_rate = 0;
  double noise_multiplier = 0;
  std::int64_t steps = 0;
  std::optional<std::int64_t> dataset_size, batch_size;
  std::optional<double> epochs;
};

void add_dp_sgd_flags(CLI::App& app, DpSgdFlags& flags);
/// Validates the flags and derives q = B/N and T = ⌈E·N/B⌉ (SPEC §1).
DpSgdRun resolve(const DpSgdFlags& flags);
/// The inputs actually used, for the report (always q and T).
void add_inputs(report::Record& inputs, const DpSgdRun& run);

/// Which accountants, and their settings.
struct AccountantFlags {
  std::string accountant = "rdp";
  std::vector<std::string> orders;
  std::string conversion = "improved";
};

void add_accountant_flags(CLI::App& app, AccountantFlags& flags);
struct AccountantChoice {
  std::vector<std::string> names;  ///< one, or all registered for "all"
  AccountantOptions options;
};
AccountantChoice resolve(const AccountantFlags& flags);
void add_inputs(report::Record& inputs, const AccountantChoice& choice);

/// --format.
struct OutputFlags {
  std::string format = "text";
  bool allow_jsonl = false;  ///< JSON Lines for verbs that stream rows
};
void add_output_flags(CLI::App& app, OutputFlags& flags, bool allow_jsonl = false);
report::Format resolve(const OutputFlags& flags);

/// One result row from an accountant's guarantee. `solved_delta` says whether
/// δ is the computed quantity (rounded up) or the target echoed back.
report::Record guarantee_record(const Guarantee& g, bool solved_delta);

/// Footnotes and stderr warnings a guarantee calls for (best order at the
/// edge of the order set; notes), added once each.
void collect_remarks(const Guarantee& g, report::Report& report, std::ostream& err);

/// The ε/δ table of a DP-SGD run: for each accountant and each target, ε at
/// δ = target (solve_delta false) or δ at ε = target (solve_delta true).
report::Report guarantee_table(const std::string& command, const DpSgdRun& run,
                               const AccountantChoice& choice, const std::vector<double>& targets,
                               bool solve_delta, std::ostream& err);

/// Renders to a buffer first, so nothing half-written reaches stdout.
void emit(const report::Report& report, report::Format format, std::ostream& out);

}  // namespace dpb::cli
