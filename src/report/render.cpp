#include "report/render.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dpbudget/version.hpp"
#include "report/number_format.hpp"

namespace dpb::report {
namespace {

using Json = nlohmann::ordered_json;

/// A number as JSON, its text on the safe side of v for a bound (the JSON
/// writer's own shortest decimal, checked by directed()).
Json json_number(double v, Rounding r = Rounding::nearest) {
  if (std::isinf(v)) return v > 0 ? Json("inf") : Json("-inf");
  return Json(directed(v, r, [](double x) { return Json(x).dump(); }));
}

Json to_json(const Cell& cell) {
  const Rounding r = cell.rounding;
  return std::visit(
      [r](const auto& v) -> Json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return Json(nullptr);
        } else if constexpr (std::is_same_v<T, double>) {
          return json_number(v, r);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          Json a = Json::array();
          for (double x : v) a.push_back(json_number(x, r));
          return a;
        } else if constexpr (std::is_same_v<T, Pairs>) {
          Json a = Json::array();
          for (const auto& [x, y] : v)
            a.push_back(Json::array({json_number(x), json_number(y, r)}));  // x is an input
          return a;
        } else if constexpr (std::is_same_v<T, JsonText>) {
          return Json::parse(v.text);
        } else {
          return Json(v);
        }
      },
      cell.value);
}

/// Whether a cell is part of JSON and CSV output (compact text summaries are not).
bool in_data(const Cell& cell) { return cell.show != Show::compact && cell.show != Show::text; }

/// Whether a cell is part of text output in `style`.
bool in_text(const Cell& cell, const TextStyle& style) {
  switch (cell.show) {
    case Show::always:
      return true;
    case Show::wide:
      return style.wide;
    case Show::compact:
      return !style.wide;
    case Show::data:
      return false;
    case Show::text:
      return true;
  }
  return true;
}

Json to_json(const Record& record) {
  Json o = Json::object();
  for (const auto& [key, cell] : record.cells)
    if (in_data(cell)) o[key] = to_json(cell);
  return o;
}

std::string show_number(double v, Rounding r, const TextStyle& style) {
  return style.digits > 0 ? format_number(v, style.digits, r) : format_shortest_directed(v, r);
}

std::string to_text(const Cell& cell, const TextStyle& style) {
  if (cell.lower && !style.wide && std::holds_alternative<double>(cell.value)) {
    std::string s(1, '[');
    s += show_number(*cell.lower, Rounding::down, style);
    s += ", ";
    s += show_number(std::get<double>(cell.value), cell.rounding, style);
    s += ']';
    return s;
  }
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<T, double>) {
          return show_number(v, cell.rounding, style);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, Pairs>) {
          // "(x,y) (x,y) ...": x is an input, shown to nearest; y as the cell says.
          std::string s;
          for (const auto& [x, y] : v) {
            if (!s.empty()) s += " ";
            s += '(';
            s += show_number(x, Rounding::nearest, style);
            s += ',';
            s += show_number(y, cell.rounding, style);
            s += ')';
          }
          return s;
        } else if constexpr (std::is_same_v<T, JsonText>) {
          return v.text;
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else {
          std::string s;
          for (double x : v) {
            if (!s.empty()) s += ",";
            s += show_number(x, cell.rounding, style);
          }
          return s;
        }
      },
      cell.value);
}

bool is_numeric(const Cell& cell) {
  return std::holds_alternative<double>(cell.value) ||
         std::holds_alternative<std::int64_t>(cell.value);
}

/// Column names: every key of every result whose cell `keep`s, in order of
/// first appearance.
template <typename Keep>
std::vector<std::string> columns_of(const std::vector<Record>& results, Keep keep) {
  std::vector<std::string> columns;
  for (const auto& r : results)
    for (const auto& [key, cell] : r.cells)
      if (keep(cell) && std::find(columns.begin(), columns.end(), key) == columns.end())
        columns.push_back(key);
  return columns;
}

/// A text table laid out: the block above it (inputs and the columns moved
/// up), the columns left, the rows' cells with their footnote markers and
/// alignment. Text and Markdown print the same layout.
struct TextLayout {
  std::vector<std::pair<std::string, std::string>> block;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> right;
};

/// `results` laid out as one table, `inputs` (if any) first above it; a
/// footnote not yet in `marked` is added to it, and its position gives the
/// cell's marker (`*`, `**`, ...).
TextLayout layout_text(const Record* inputs, const std::vector<Record>& results,
                       const TextStyle& style, std::vector<std::string>& marked) {
  const auto all_columns =
      columns_of(results, [&](const Cell& cell) { return in_text(cell, style); });
  auto cell_at = [&](std::size_t row, std::size_t column) -> const Cell* {
    const Cell* cell = results[row].find(all_columns[column]);
    return cell && in_text(*cell, style) ? cell : nullptr;
  };
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> right;
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& row = rows.emplace_back();
    auto& align = right.emplace_back();
    for (std::size_t c = 0; c < all_columns.size(); ++c) {
      const Cell* cell = cell_at(i, c);
      row.push_back(cell ? escape_control(to_text(*cell, style)) : "");
      align.push_back(cell && is_numeric(*cell));
    }
  }
  TextLayout t;
  // Cells with a footnote get a marker (`*`, `**`, ...), one per distinct note.
  for (std::size_t i = 0; i < results.size(); ++i)
    for (std::size_t c = 0; c < all_columns.size(); ++c) {
      const Cell* cell = cell_at(i, c);
      if (!cell || cell->footnote.empty()) continue;
      auto it = std::find(marked.begin(), marked.end(), cell->footnote);
      if (it == marked.end()) it = marked.insert(marked.end(), cell->footnote);
      rows[i][c] += std::string(static_cast<std::size_t>(it - marked.begin()) + 1, '*');
    }
  // A hoisted column that holds one value in every row moves above the table.
  std::vector<bool> moved(all_columns.size(), false);
  if (!style.wide && rows.size() > 1)
    for (std::size_t c = 0; c < all_columns.size(); ++c) {
      bool same = true;
      for (std::size_t i = 0; same && i < rows.size(); ++i) {
        const Cell* cell = cell_at(i, c);
        same = cell && cell->hoist && rows[i][c] == rows[0][c];
      }
      moved[c] = same;
    }
  if (inputs)
    for (const auto& [key, cell] : inputs->cells)
      if (in_text(cell, style)) t.block.emplace_back(key, escape_control(to_text(cell, style)));
  for (std::size_t c = 0; c < all_columns.size(); ++c)
    if (moved[c]) t.block.emplace_back(all_columns[c], rows[0][c]);
  t.rows.resize(rows.size());
  t.right.resize(rows.size());
  for (std::size_t c = 0; c < all_columns.size(); ++c) {
    if (moved[c]) continue;
    t.columns.push_back(all_columns[c]);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      t.rows[i].push_back(rows[i][c]);
      t.right[i].push_back(right[i][c]);
    }
  }
  return t;
}

/// One laid-out table as text: the block above it, a blank line, the header
/// and the rows, aligned.
void print_text_table(const TextLayout& t, std::ostream& out, const TextStyle& style) {
  std::size_t name_width = 0;
  for (const auto& [key, value] : t.block) name_width = std::max(name_width, key.size());
  for (const auto& [key, value] : t.block)
    out << key << std::string(name_width - key.size() + 2, ' ') << value << '\n';
  if (!t.block.empty()) out << '\n';

  std::vector<std::size_t> width(t.columns.size());
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    width[c] = t.columns[c].size();
    for (const auto& row : t.rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells, const std::vector<bool>& align) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (c) s += "  ";
      s += align[c] ? pad + cells[c] : cells[c] + pad;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  const std::string header = line(t.columns, std::vector<bool>(t.columns.size(), false));
  out << (style.colour ? "\033[1m" + header + "\033[0m" : header) << '\n';
  for (std::size_t i = 0; i < t.rows.size(); ++i) out << line(t.rows[i], t.right[i]) << '\n';
}

/// The notes under a text table: each marker's, then the footnotes.
void print_text_notes(const std::vector<std::string>& marked,
                      const std::vector<std::string>& footnotes, std::ostream& out) {
  for (std::size_t m = 0; m < marked.size(); ++m)
    out << std::string(m + 1, '*') << ' ' << marked[m] << '\n';
  for (const auto& note : footnotes) out << escape_control(note) << '\n';
}

/// Text in a Markdown table cell or paragraph: characters with a meaning in
/// GitHub-flavoured Markdown are backslash-escaped (| ends a cell, * and _
/// emphasise, ` opens code, [ ] links, < > HTML), line breaks become spaces.
std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    if (std::string_view("\\|*_`[]<>#").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

/// Markdown (GitHub-flavoured): the block above the text table as a
/// two-column table, then the results table (numbers right-aligned); the same
/// cells, rounding and layout as text.
void print_markdown_table(const TextLayout& t, std::ostream& out) {
  auto row = [&](const std::vector<std::string>& cells) {
    out << '|';
    for (const auto& c : cells) out << ' ' << markdown_escape(c) << " |";
    out << '\n';
  };
  if (!t.block.empty()) {
    row({"parameter", "value"});
    out << "|---|---|\n";
    for (const auto& [key, value] : t.block) row({key, value});
    out << '\n';
  }
  if (!t.columns.empty()) {
    row(t.columns);
    out << '|';
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      bool numeric = !t.rows.empty();
      for (std::size_t i = 0; i < t.rows.size(); ++i)
        numeric = numeric && (t.right[i][c] || t.rows[i][c].empty());
      out << (numeric ? "---:|" : "---|");
    }
    out << '\n';
    for (const auto& r : t.rows) row(r);
  }
}

/// The footnotes under Markdown tables, as a list.
void print_markdown_notes(const std::vector<std::string>& marked,
                          const std::vector<std::string>& footnotes, std::ostream& out) {
  if (!marked.empty() || !footnotes.empty()) out << '\n';
  for (std::size_t m = 0; m < marked.size(); ++m)
    out << "- " << markdown_escape(std::string(m + 1, '*') + " " + marked[m]) << '\n';
  for (const auto& note : footnotes) out << "- " << markdown_escape(escape_control(note)) << '\n';
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

/// CSV is for machines: every number is the exact double, as in JSON.
TextStyle csv_style() {
  TextStyle exact{0};
  exact.wide = true;
  return exact;
}

void write_csv_header(const std::vector<std::string>& columns, std::ostream& out) {
  for (std::size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << csv_field(columns[c]);
  out << '\n';
}

/// A record's CSV fields under `columns`: each column's first cell, when it
/// is a data cell, else empty.
std::string csv_row(const Record& record, const std::vector<std::string>& columns) {
  const TextStyle exact = csv_style();
  std::string line;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const Cell* cell = record.find(columns[c]);
    if (c) line += ',';
    if (cell && in_data(*cell)) line += csv_field(to_text(*cell, exact));
  }
  line += '\n';
  return line;
}

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

std::vector<std::string> csv_columns(const Record& record) {
  std::vector<std::string> columns;
  for (const auto& [key, cell] : record.cells)
    if (in_data(cell)) columns.push_back(key);
  return columns;
}

TableWriter::TableWriter(Format format, Record inputs, TextStyle style, std::size_t block_rows)
    : format_(format), inputs_(std::move(inputs)), style_(style), block_rows_(block_rows) {
  if (format != Format::text && format != Format::markdown)
    throw std::invalid_argument("TableWriter: text or markdown only");
}

void TableWriter::add(Record record, std::ostream& out) {
  held_.push_back(std::move(record));
  if (block_rows_ > 0 && held_.size() == block_rows_) flush(out);
}

void TableWriter::flush(std::ostream& out) {
  const TextLayout t = layout_text(blocks_ == 0 ? &inputs_ : nullptr, held_, style_, marked_);
  if (blocks_ > 0) out << '\n';  // a blank line between blocks
  if (format_ == Format::text)
    print_text_table(t, out, style_);
  else
    print_markdown_table(t, out);
  held_.clear();
  ++blocks_;
}

void TableWriter::finish(const std::vector<std::string>& footnotes, std::ostream& out) {
  if (blocks_ == 0 || !held_.empty()) flush(out);
  if (format_ == Format::text)
    print_text_notes(marked_, footnotes, out);
  else
    print_markdown_notes(marked_, footnotes, out);
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

CsvWriter::CsvWriter(std::vector<std::string> columns) : columns_(std::move(columns)) {}

void CsvWriter::header(std::ostream& out) const { write_csv_header(columns_, out); }

void CsvWriter::add(const Record& record, std::ostream& out) const {
  for (const auto& [key, cell] : record.cells)
    if (in_data(cell) && std::find(columns_.begin(), columns_.end(), key) == columns_.end())
      throw std::invalid_argument(key);
  out << csv_row(record, columns_);
}

CsvSpool::CsvSpool(const std::string& directory) : directory_(directory) {
  // An anonymous file: made with a unique name (mkstemp), then unlinked, so
  // that nothing is left behind however dpbudget ends.
  std::string path = directory_ + "/dpbudget-csv-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) fail(errno);
  ::unlink(path.c_str());
  file_ = ::fdopen(fd, "w+b");
  if (!file_) {
    const int reason = errno;
    ::close(fd);
    fail(reason);
  }
}

CsvSpool::~CsvSpool() {
  if (file_) std::fclose(file_);
}

void CsvSpool::fail(int reason) const {
  throw SpoolError("a temporary file in '" + directory_ + "'", reason);
}

void CsvSpool::add(const Record& record) {
  // Row: its number of cells, then per cell the column's index and its text.
  const TextStyle exact = csv_style();
  auto put = [this](const void* data, std::size_t size) {
    errno = 0;
    if (size && std::fwrite(data, 1, size, file_) != size) fail(errno);
  };
  auto put_u32 = [&](std::uint32_t v) { put(&v, sizeof v); };
  std::uint32_t n = 0;
  for (const auto& [key, cell] : record.cells) n += in_data(cell);
  put_u32(n);
  for (const auto& [key, cell] : record.cells) {
    if (!in_data(cell)) continue;
    auto it = std::find(columns_.begin(), columns_.end(), key);
    if (it == columns_.end()) it = columns_.insert(columns_.end(), key);
    const std::string text = csv_field(to_text(cell, exact));
    put_u32(static_cast<std::uint32_t>(it - columns_.begin()));
    put_u32(static_cast<std::uint32_t>(text.size()));
    put(text.data(), text.size());
  }
  ++rows_;
}

void CsvSpool::finish(std::ostream& out) {
  // A write the buffer held fails here at the latest (a full disk).
  errno = 0;
  if (std::fflush(file_) != 0) fail(errno);
  std::rewind(file_);
  auto get = [this](void* data, std::size_t size) {
    errno = 0;
    if (size && std::fread(data, 1, size, file_) != size) fail(errno);
  };
  auto get_u32 = [&] {
    std::uint32_t v = 0;
    get(&v, sizeof v);
    return v;
  };
  write_csv_header(columns_, out);
  std::vector<std::string> fields(columns_.size());
  for (std::size_t r = 0; r < rows_ && out; ++r) {  // a failed write stops
    for (auto& f : fields) f.clear();
    const std::uint32_t n = get_u32();
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t c = get_u32(), len = get_u32();
      std::string& f = fields.at(c);
      f.resize(len);
      get(f.data(), len);
    }
    for (std::size_t c = 0; c < fields.size(); ++c) out << (c ? "," : "") << fields[c];
    out << '\n';
  }
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
