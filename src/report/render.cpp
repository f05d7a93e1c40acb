#include "report/render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
bool in_data(const Cell& cell) { return cell.show != Show::compact; }

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
/// alignment, the distinct footnotes in marker order. Text and Markdown
/// print the same layout.
struct TextLayout {
  std::vector<std::pair<std::string, std::string>> block;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> right;
  std::vector<std::string> marked;
};

TextLayout layout_text(const Report& report, const TextStyle& style) {
  const auto all_columns =
      columns_of(report.results, [&](const Cell& cell) { return in_text(cell, style); });
  auto cell_at = [&](std::size_t row, std::size_t column) -> const Cell* {
    const Cell* cell = report.results[row].find(all_columns[column]);
    return cell && in_text(*cell, style) ? cell : nullptr;
  };
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> right;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    auto& row = rows.emplace_back();
    auto& align = right.emplace_back();
    for (std::size_t c = 0; c < all_columns.size(); ++c) {
      const Cell* cell = cell_at(i, c);
      row.push_back(cell ? to_text(*cell, style) : "");
      align.push_back(cell && is_numeric(*cell));
    }
  }
  TextLayout t;
  // Cells with a footnote get a marker (`*`, `**`, ...), one per distinct note.
  for (std::size_t i = 0; i < report.results.size(); ++i)
    for (std::size_t c = 0; c < all_columns.size(); ++c) {
      const Cell* cell = cell_at(i, c);
      if (!cell || cell->footnote.empty()) continue;
      auto it = std::find(t.marked.begin(), t.marked.end(), cell->footnote);
      if (it == t.marked.end()) it = t.marked.insert(t.marked.end(), cell->footnote);
      rows[i][c] += std::string(static_cast<std::size_t>(it - t.marked.begin()) + 1, '*');
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
  for (const auto& [key, cell] : report.inputs.cells)
    if (in_text(cell, style)) t.block.emplace_back(key, to_text(cell, style));
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

void render_text(const Report& report, std::ostream& out, const TextStyle& style) {
  const TextLayout t = layout_text(report, style);
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
  for (std::size_t m = 0; m < t.marked.size(); ++m)
    out << std::string(m + 1, '*') << ' ' << t.marked[m] << '\n';
  for (const auto& note : report.footnotes) out << note << '\n';
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
/// two-column table, then the results table (numbers right-aligned), then the
/// footnotes as a list; the same cells, rounding and layout as text.
void render_markdown(const Report& report, std::ostream& out, const TextStyle& style) {
  const TextLayout t = layout_text(report, style);
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
  if (!t.marked.empty() || !report.footnotes.empty()) out << '\n';
  for (std::size_t m = 0; m < t.marked.size(); ++m)
    out << "- " << markdown_escape(std::string(m + 1, '*') + " " + t.marked[m]) << '\n';
  for (const auto& note : report.footnotes) out << "- " << markdown_escape(note) << '\n';
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

void render_csv(const Report& report, std::ostream& out) {
  const auto columns = columns_of(report.results, in_data);
  const TextStyle exact = csv_style();
  write_csv_header(columns, out);
  for (const auto& r : report.results) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const Cell* cell = r.find(columns[c]);
      out << (c ? "," : "") << (cell && in_data(*cell) ? csv_field(to_text(*cell, exact)) : "");
    }
    out << '\n';
  }
}

}  // namespace

bool colour_wanted(bool is_terminal, const char* no_color, const char* term) {
  if (!is_terminal) return false;
  if (no_color && *no_color) return false;
  return !(term && std::string_view(term) == "dumb");
}

void render_json_line(const Record& record, std::ostream& out) {
  out << to_json(record).dump() << '\n';
}

namespace {

void write_u32(std::FILE* f, std::uint32_t v) {
  if (std::fwrite(&v, sizeof v, 1, f) != 1) throw std::runtime_error("CSV spool: write failed");
}
std::uint32_t read_u32(std::FILE* f) {
  std::uint32_t v = 0;
  if (std::fread(&v, sizeof v, 1, f) != 1) throw std::runtime_error("CSV spool: read failed");
  return v;
}

}  // namespace

std::vector<std::string> csv_columns(const Record& record) {
  std::vector<std::string> columns;
  for (const auto& [key, cell] : record.cells)
    if (in_data(cell)) columns.push_back(key);
  return columns;
}

CsvSpool::CsvSpool(std::optional<std::vector<std::string>> fixed) : file_(std::tmpfile()) {
  if (!file_) throw std::runtime_error("CSV spool: no temporary file");
  if (fixed) {
    columns_ = std::move(*fixed);
    fixed_ = true;
  }
}

CsvSpool::~CsvSpool() {
  if (file_) std::fclose(file_);
}

void CsvSpool::add(const Record& record) {
  // Row: its number of cells, then per cell the column's index and its text.
  const TextStyle exact = csv_style();
  std::uint32_t n = 0;
  for (const auto& [key, cell] : record.cells) n += in_data(cell);
  write_u32(file_, n);
  for (const auto& [key, cell] : record.cells) {
    if (!in_data(cell)) continue;
    auto it = std::find(columns_.begin(), columns_.end(), key);
    if (it == columns_.end()) {
      if (fixed_) throw std::invalid_argument(key);
      it = columns_.insert(columns_.end(), key);
    }
    const std::string text = csv_field(to_text(cell, exact));
    write_u32(file_, static_cast<std::uint32_t>(it - columns_.begin()));
    write_u32(file_, static_cast<std::uint32_t>(text.size()));
    if (!text.empty() && std::fwrite(text.data(), 1, text.size(), file_) != text.size())
      throw std::runtime_error("CSV spool: write failed");
  }
  ++rows_;
}

void CsvSpool::finish(std::ostream& out, bool header) {
  if (header) write_csv_header(columns_, out);
  std::rewind(file_);
  std::vector<std::string> fields(columns_.size());
  for (std::size_t r = 0; r < rows_; ++r) {
    for (auto& f : fields) f.clear();
    const std::uint32_t n = read_u32(file_);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t c = read_u32(file_), len = read_u32(file_);
      std::string& f = fields.at(c);
      f.resize(len);
      if (len && std::fread(f.data(), 1, len, file_) != len)
        throw std::runtime_error("CSV spool: read failed");
    }
    for (std::size_t c = 0; c < fields.size(); ++c) out << (c ? "," : "") << fields[c];
    out << '\n';
  }
}

void render(const Report& report, Format format, std::ostream& out, const TextStyle& style) {
  switch (format) {
    case Format::text:
      render_text(report, out, style);
      return;
    case Format::csv:
      render_csv(report, out);
      return;
    case Format::markdown:
      render_markdown(report, out, style);
      return;
    case Format::jsonl:
      for (const auto& r : report.results) render_json_line(r, out);
      return;
    case Format::json: {
      Json doc = Json::object();
      doc["version"] = kVersion;
      doc["command"] = report.command;
      doc["inputs"] = to_json(report.inputs);
      Json results = Json::array();
      for (const auto& r : report.results) results.push_back(to_json(r));
      doc["results"] = std::move(results);
      if (!report.footnotes.empty()) doc["notes"] = report.footnotes;
      out << doc.dump(2) << '\n';
      return;
    }
  }
}

}  // namespace dpb::report
