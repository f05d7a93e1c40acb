// Rendering results (render.hpp): render() in every format, and JSON, JSON
// Lines and a record in one line here; text and Markdown tables in
// text_tables.cpp, CSV in csv.cpp, a cell as JSON or text in cells.cpp. Also
// what makes text safe and coloured on a terminal.
#include "report/render.hpp"

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dpbudget/version.hpp"
#include "report/internal.hpp"

namespace dpb::report {
namespace {

using detail::columns_of;
using detail::csv_row;
using detail::in_data;
using detail::in_text;
using detail::Json;
using detail::to_json;
using detail::to_text;

/// A JSON value as dump(2) prints it `depth` levels deep in a document.
std::string indented(const Json& value, int depth) {
  const std::string text = value.dump(2);
  const std::size_t margin = static_cast<std::size_t>(2 * depth);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(margin, ' ');
  }
  return out;
}

}  // namespace

std::string escape_control(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto hex = [](unsigned char c) { return std::string{kHex[c >> 4], kHex[c & 15]}; };
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](std::size_t i) {
    return i < text.size() && (byte(i) & 0xC0) == 0x80;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      if (c == '\t')
        out += "\\t";
      else if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c < 0x20 || c == 0x7F)
        out += "\\x" + hex(c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    // UTF-8 (RFC 3629): the sequence's length from its lead byte.
    const std::size_t n = c >= 0xC2 && c <= 0xDF   ? 2
                          : c >= 0xE0 && c <= 0xEF ? 3
                          : c >= 0xF0 && c <= 0xF4 ? 4
                                                   : 0;
    bool whole = n > 0;
    for (std::size_t k = 1; whole && k < n; ++k) whole = continuation(i + k);
    if (!whole) {
      out += "\\x" + hex(c);
      ++i;
    } else if (n == 2 && c == 0xC2 && byte(i + 1) < 0xA0) {
      out += "\\u00" + hex(byte(i + 1));  // a C1 control, e.g. U+009B (CSI)
      i += 2;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

bool colour_wanted(bool is_terminal, const char* no_color, const char* term) {
  if (!is_terminal) return false;
  if (no_color && *no_color) return false;
  return !(term && std::string_view(term) == "dumb");
}

void render_json_line(const Record& record, std::ostream& out) {
  out << to_json(record).dump() << '\n';
}

std::string record_json(const Record& record) { return to_json(record).dump(); }

std::string record_text(const Record& record, const TextStyle& style) {
  std::string s;
  for (const auto& [key, cell] : record.cells)
    if (in_text(cell, style)) s += (s.empty() ? "" : ", ") + key + " " + to_text(cell, style);
  return s;
}

JsonWriter::JsonWriter(std::string command, Record inputs)
    : command_(std::move(command)), inputs_(std::move(inputs)) {}

// The bytes of nlohmann's dump(2) of {"version", "command", "inputs",
// "results", "notes"}, one result at a time.
void JsonWriter::begin(std::ostream& out) {
  if (begun_) return;
  begun_ = true;
  out << "{\n  \"version\": " << Json(kVersion).dump()
      << ",\n  \"command\": " << Json(command_).dump()
      << ",\n  \"inputs\": " << indented(to_json(inputs_), 1) << ",\n  \"results\": [";
}

void JsonWriter::add(const Record& record, std::ostream& out) {
  begin(out);
  out << (results_++ ? ",\n    " : "\n    ") << indented(to_json(record), 2);
}

void JsonWriter::finish(const std::vector<std::string>& footnotes, std::ostream& out) {
  begin(out);
  out << (results_ ? "\n  ]" : "]");
  if (!footnotes.empty()) out << ",\n  \"notes\": " << indented(Json(footnotes), 1);
  out << "\n}\n";
}

void render(const Report& report, Format format, std::ostream& out, const TextStyle& style) {
  switch (format) {
    case Format::text:
    case Format::markdown: {
      TableWriter table(format, report.inputs, style);
      for (const auto& r : report.results) table.add(r, out);
      table.finish(report.footnotes, out);
      return;
    }
    case Format::csv: {
      const CsvWriter csv(columns_of(report.results, in_data));
      csv.header(out);
      for (const auto& r : report.results) out << csv_row(r, csv.columns());
      return;
    }
    case Format::jsonl:
      for (const auto& r : report.results) render_json_line(r, out);
      return;
    case Format::json: {
      JsonWriter json(report.command, report.inputs);
      for (const auto& r : report.results) json.add(r, out);
      json.finish(report.footnotes, out);
      return;
    }
  }
}

}  // namespace dpb::report
