#pragma once
// --format and --precision, and writing a report to stdout (every verb).
#include <CLI/CLI.hpp>
#include <array>
#include <ostream>
#include <string>

#include "cli/choices.hpp"
#include "report/record.hpp"
#include "report/render.hpp"

namespace dpb::cli {

/// --format's values; JSON Lines only for verbs that stream rows (sweep).
inline constexpr std::array<Choice<report::Format>, 5> kFormatChoices{{
    {"text", report::Format::text},
    {"json", report::Format::json},
    {"jsonl", report::Format::jsonl},
    {"csv", report::Format::csv},
    {"markdown", report::Format::markdown},
}};
inline constexpr std::array<Choice<report::Format>, 4> kFormatChoicesNoJsonl{{
    {"text", report::Format::text},
    {"json", report::Format::json},
    {"csv", report::Format::csv},
    {"markdown", report::Format::markdown},
}};

/// --format and --precision.
struct OutputFlags {
  std::string format = "text";
  std::string precision;     ///< significant digits in text output; empty = 6
  bool allow_jsonl = false;  ///< JSON Lines for verbs that stream rows
  bool wide = false;         ///< --wide: every column in text output
};
void add_output_flags(CLI::App& app, OutputFlags& flags, bool allow_jsonl = false);
/// --wide, for verbs whose text table is compact (accountants' rows): every
/// column of JSON/CSV in text too, none moved above the table.
void add_wide_flag(CLI::App& app, OutputFlags& flags);
report::Format resolve(const OutputFlags& flags);
/// --precision and --wide as a text style (colour is decided by emit()).
report::TextStyle text_style(const OutputFlags& flags);

/// Renders to a buffer first, so nothing half-written reaches stdout. Text
/// output is coloured only on a terminal (std::cout to a tty) and never with
/// NO_COLOR set non-empty or TERM=dumb.
void emit(const report::Report& report, report::Format format, std::ostream& out);
/// The same with --format and --precision applied: what every verb should call.
void emit(const report::Report& report, const OutputFlags& flags, std::ostream& out);
void emit(const report::Report& report, report::Format format, std::ostream& out,
          report::TextStyle style);

}  // namespace dpb::cli
