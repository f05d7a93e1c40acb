#include "cli/run/ledger_transfer.hpp"

#include <algorithm>
#include <array>
#include <istream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cli/errors.hpp"

namespace dpb::cli {
namespace {

using Json = nlohmann::ordered_json;

/// An export's lines nest two levels at most (the header line's "header"
/// object); a deeper line is refused as it is read, before anything
/// recursive sees it.
constexpr int kMaxExportLineDepth = 2;

/// The fields of an entry's line, in the order they are written.
constexpr std::array<std::string_view, 9> kEntryFields{
    "seq", "kind", "name", "recorded_at", "recorded_by", "body", "note", "prev_hash", "hash"};
/// The fields of the header line.
constexpr std::array<std::string_view, 4> kHeaderFields{"format", "schema_version", "header",
                                                        "header_hash"};

/// `j` as one line; text that is not UTF-8 (which JSON cannot carry) refused
/// naming `where`.
std::string export_line_text(const Json& j, const std::string& where) {
  try {
    return j.dump();
  } catch (const Json::type_error&) {
    throw LedgerError(where +
                      ": holds text that is not UTF-8, which a JSON export cannot carry byte for "
                      "byte; nothing written");
  }
}

/// Thrown inside read_ledger_export's line readers: what is wrong with the line.
struct ExportLineFault {
  std::string what;
};

/// The parser's message without its "[json.exception...] " prefix.
std::string export_parser_words(const std::string& what) {
  const auto p = what.find("] ");
  return p != std::string::npos && !what.empty() && what.front() == '[' ? what.substr(p + 2) : what;
}

Json parsed_export_line(std::string_view text) {
  try {
    return Json::parse(text, [](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxExportLineDepth)
        throw ExportLineFault{"nested deeper than an export's lines (" +
                              std::to_string(kMaxExportLineDepth) + " levels)"};
      return true;
    });
  } catch (const Json::exception& e) {
    throw ExportLineFault{"not JSON (" + export_parser_words(e.what()) + ")"};
  }
}

/// Refuses an object whose keys are not exactly `fields`.
template <std::size_t N>
void require_export_fields(const Json& j, const std::array<std::string_view, N>& fields,
                           const char* what) {
  if (!j.is_object()) throw ExportLineFault{std::string("not a JSON object (") + what + ")"};
  for (const auto& f : fields)
    if (!j.contains(f)) throw ExportLineFault{"no \"" + std::string(f) + "\" (" + what + ")"};
  for (const auto& [key, value] : j.items())
    if (std::find(fields.begin(), fields.end(), key) == fields.end())
      throw ExportLineFault{"\"" + key + "\" is no field of " + what};
}

std::string export_text_field(const Json& j, std::string_view name) {
  const Json& v = j.at(name);
  if (!v.is_string()) throw ExportLineFault{"\"" + std::string(name) + "\" must be a string"};
  return v.get<std::string>();
}

void read_header_line(const Json& j, LedgerExport& out) {
  require_export_fields(j, kHeaderFields, "a ledger export's header line");
  if (!j.at("format").is_string() || j.at("format").get<std::string>() != kLedgerExportFormat)
    throw ExportLineFault{std::string("not a ledger export (\"format\" must be \"") +
                          kLedgerExportFormat +
                          "\"; 'dpbudget ledger-export --format ledger' writes one)"};
  const Json& version = j.at("schema_version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != store::kLedgerSchemaVersion)
    throw ExportLineFault{"\"schema_version\" is " + version.dump() + "; this dpbudget reads " +
                          std::to_string(store::kLedgerSchemaVersion)};
  const Json& header = j.at("header");
  if (!header.is_object()) throw ExportLineFault{"\"header\" must be an object of texts"};
  for (const auto& [name, value] : header.items()) {
    if (!value.is_string()) throw ExportLineFault{"\"header\": \"" + name + "\" must be a string"};
    out.header[name] = value.get<std::string>();
  }
  out.header_hash = export_text_field(j, "header_hash");
}

store::Entry read_entry_line(const Json& j) {
  require_export_fields(j, kEntryFields, "a ledger export's entry line");
  store::Entry e;
  const Json& seq = j.at("seq");
  if (!seq.is_number_integer() || seq.get<std::int64_t>() < 1)
    throw ExportLineFault{"\"seq\" must be an integer from 1, got " + seq.dump()};
  e.seq = seq.get<std::int64_t>();
  e.content = {export_text_field(j, "kind"),        export_text_field(j, "name"),
               export_text_field(j, "recorded_at"), export_text_field(j, "recorded_by"),
               export_text_field(j, "body"),        export_text_field(j, "note")};
  e.prev_hash = export_text_field(j, "prev_hash");
  e.hash = export_text_field(j, "hash");
  return e;
}

/// The whole input, or one byte more than kMaxLedgerExportBytes, read a
/// block at a time (the memory it takes is the input's, not the limit's).
std::string read_export_text(InputFile& input) {
  constexpr std::size_t kReadBlockBytes = std::size_t{1} << 16;
  std::string text;
  std::array<char, kReadBlockBytes> block{};
  std::istream& in = input.stream();
  while (text.size() <= kMaxLedgerExportBytes && in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    text.append(block.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw UsageError("--from: cannot read " + input.name());
  return text;
}

}  // namespace

std::string ledger_export_lines(const store::Header& header, const std::string& header_hash,
                                const std::vector<store::Entry>& entries,
                                const std::string& ledger) {
  Json head;
  head["format"] = kLedgerExportFormat;
  head["schema_version"] = store::kLedgerSchemaVersion;
  Json names = Json::object();
  for (const auto& [name, value] : header) names[name] = value;
  head["header"] = std::move(names);
  head["header_hash"] = header_hash;
  std::string out = export_line_text(head, ledger + ": its header") + '\n';
  for (const store::Entry& e : entries) {
    Json line;
    line["seq"] = e.seq;
    line["kind"] = e.content.kind;
    line["name"] = e.content.name;
    line["recorded_at"] = e.content.recorded_at;
    line["recorded_by"] = e.content.recorded_by;
    line["body"] = e.content.body;
    line["note"] = e.content.note;
    line["prev_hash"] = e.prev_hash;
    line["hash"] = e.hash;
    out += export_line_text(line, ledger + ": entry " + std::to_string(e.seq)) + '\n';
  }
  return out;
}

LedgerExport read_ledger_export(InputFile& input) {
  LedgerExport out;
  out.source = input.name();
  const std::string text = read_export_text(input);
  if (text.size() > kMaxLedgerExportBytes)
    throw input_error("--from", {out.source, 0, ""},
                      "larger than " + size_text(kMaxLedgerExportBytes) + " (no ledger export)");
  std::size_t line = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t newline = text.find('\n', at);
    const std::size_t end = newline == std::string::npos ? text.size() : newline;
    ++line;
    const InputLocation where{out.source, line, ""};
    if (end - at > kMaxLedgerExportLineBytes)
      throw input_error(
          "--from", where,
          "longer than " + size_text(kMaxLedgerExportLineBytes) + " (no export line)");
    const std::string_view content(text.data() + at, end - at);
    at = end + 1;
    try {
      if (content.empty()) throw ExportLineFault{"empty (an export has no blank lines)"};
      const Json j = parsed_export_line(content);
      if (line == 1)
        read_header_line(j, out);
      else
        out.entries.push_back(read_entry_line(j));
    } catch (const ExportLineFault& f) {
      throw input_error("--from", where, f.what);
    }
  }
  if (line == 0)
    throw input_error(
        "--from", {out.source, 0, ""},
        "empty: no header line ('dpbudget ledger-export --format ledger' writes one)");
  return out;
}

}  // namespace dpb::cli
