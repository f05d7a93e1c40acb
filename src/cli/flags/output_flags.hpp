#pragma once
// --format and --precision, and writing a report to stdout (every verb).
#include <CLI/CLI.hpp>
#include <array>
#include <fstream>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/flags/choices.hpp"
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
/// The refusals of resolve(): --format, before any work.
void check_format(const OutputFlags& flags);
/// The refusals of resolve() and text_style(): --format and --precision,
/// before any work.
void check_output_flags(const OutputFlags& flags);

/// Writes `text` to `out` and flushes it; a failed or short write (a full
/// disk, a closed pipe with SIGPIPE ignored) throws WriteError naming `where`
/// and the system's reason (exit status 5). A closed pipe with SIGPIPE at its
/// default still ends the process as before (`| head`).
void write_out(std::ostream& out, std::string_view text,
               std::string_view where = "standard output");
/// `path` opened for writing (-o); one that cannot be opened is a bad -o
/// value (UsageError, exit status 2), before anything is written.
std::ofstream open_output(const std::string& path);
/// Throws WriteError naming `where` and `reason` (an errno value; 0: none
/// known).
[[noreturn]] void throw_write_error(std::string_view where, int reason);
/// Throws WriteError when `out` has failed since it was made (every verb's
/// output is checked once more after the verb returns).
void check_written(std::ostream& out, std::string_view where = "standard output");

/// Whether output in `format` to `out` is coloured: text only, to std::cout
/// on a terminal, never with NO_COLOR set non-empty or TERM=dumb.
bool colour_for(report::Format format, const std::ostream& out);

/// Renders to a buffer first, so nothing half-written reaches stdout. Text
/// output is coloured only on a terminal (std::cout to a tty) and never with
/// NO_COLOR set non-empty or TERM=dumb.
void emit(const report::Report& report, report::Format format, std::ostream& out);
/// The same with --format and --precision applied: what every verb should call.
void emit(const report::Report& report, const OutputFlags& flags, std::ostream& out);
void emit(const report::Report& report, report::Format format, std::ostream& out,
          report::TextStyle style);

}  // namespace dpb::cli
