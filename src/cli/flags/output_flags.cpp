#include "cli/flags/output_flags.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"

namespace dpb::cli {

void add_output_flags(CLI::App& app, OutputFlags& f, bool allow_jsonl) {
  f.allow_jsonl = allow_jsonl;
  if (allow_jsonl)
    add_choice_option(app, "--format", f.format, kFormatChoices,
                      "output: text (default) | json | jsonl | csv | markdown (GitHub tables)");
  else
    add_choice_option(app, "--format", f.format, kFormatChoicesNoJsonl,
                      "output: text (default) | json | csv | markdown (GitHub tables)");
  app.add_option("--precision", f.precision,
                 "significant digits of numbers in text output, 1..17 (default 6); "
                 "JSON and CSV are always exact");
}

void add_wide_flag(CLI::App& app, OutputFlags& f) {
  app.add_flag("--wide", f.wide,
               "text output: every column (as in JSON and CSV) instead of the compact table "
               "with a details column");
}

report::TextStyle text_style(const OutputFlags& f) {
  report::TextStyle style;
  style.wide = f.wide;
  if (!f.precision.empty())
    style.digits = static_cast<int>(parse_integer("--precision", f.precision, 1));
  if (style.digits > 17) throw UsageError("--precision: must be an integer in [1, 17]");
  return style;
}

report::Format resolve(const OutputFlags& f) {
  return f.allow_jsonl ? parse_choice("--format", f.format, kFormatChoices)
                       : parse_choice("--format", f.format, kFormatChoicesNoJsonl);
}

void emit(const report::Report& rep, report::Format format, std::ostream& out) {
  emit(rep, format, out, report::TextStyle{});
}

void emit(const report::Report& rep, const OutputFlags& flags, std::ostream& out) {
  emit(rep, resolve(flags), out, text_style(flags));
}

void emit(const report::Report& rep, report::Format format, std::ostream& out,
          report::TextStyle style) {
  style.colour = colour_for(format, out);
  std::ostringstream buffer;
  report::render(rep, format, buffer, style);
  write_out(out, buffer.view());
}

bool colour_for(report::Format format, const std::ostream& out) {
  return format == report::Format::text && &out == &std::cout &&
         report::colour_wanted(::isatty(STDOUT_FILENO) != 0, std::getenv("NO_COLOR"),
                               std::getenv("TERM"));
}

void write_out(std::ostream& out, std::string_view text, std::string_view where) {
  // errno is cleared first so that the reason given is this write's (or,
  // for a file that could not be opened just before, the open's).
  if (out) {
    errno = 0;
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  if (out) out.flush();
  if (out) return;
  throw_write_error(where, errno);
}

std::ofstream open_output(const std::string& path) {
  std::ofstream file(path, std::ios::binary);
  if (!file) {
    const int reason = errno;
    throw UsageError("-o: cannot open '" + path + "' for writing" +
                     (reason ? std::string(": ") + std::strerror(reason) : std::string()));
  }
  return file;
}

void throw_write_error(std::string_view where, int reason) {
  throw WriteError("could not write output to " + std::string(where) +
                   (reason ? std::string(": ") + std::strerror(reason) : std::string()));
}

void check_written(std::ostream& out, std::string_view where) {
  if (out) out.flush();
  if (!out) throw WriteError("could not write output to " + std::string(where));
}

void check_format(const OutputFlags& flags) { static_cast<void>(resolve(flags)); }

void check_output_flags(const OutputFlags& flags) {
  check_format(flags);
  static_cast<void>(text_style(flags));
}

}  // namespace dpb::cli
