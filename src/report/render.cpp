#include "report/render.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpbudget/version.hpp"
#include "report/number_format.hpp"

namespace dpb::report {
namespace {

using Json = nlohmann::ordered_json;

Json json_number(double v) {
  if (std::isinf(v)) return v > 0 ? Json("inf") : Json("-inf");
  return Json(v);
}

Json to_json(const Cell& cell) {
  return std::visit(
      [](const auto& v) -> Json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return Json(nullptr);
        } else if constexpr (std::is_same_v<T, double>) {
          return json_number(v);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          Json a = Json::array();
          for (double x : v) a.push_back(json_number(x));
          return a;
        } else if constexpr (std::is_same_v<T, Pairs>) {
          Json a = Json::array();
          for (const auto& [x, y] : v) a.push_back(Json::array({json_number(x), json_number(y)}));
          return a;
        } else if constexpr (std::is_same_v<T, JsonText>) {
          return Json::parse(v.text);
        } else {
          return Json(v);
        }
      },
      cell.value);
}

Json to_json(const Record& record) {
  Json o = Json::object();
  for (const auto& [key, cell] : record.cells) o[key] = to_json(cell);
  return o;
}

std::string to_text(const Cell& cell, const TextStyle& style) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<T, double>) {
          return style.digits > 0 ? format_number(v, style.digits, cell.rounding)
                                  : format_shortest(v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, Pairs>) {
          // "(x,y) (x,y) ...": x is an input, shown to nearest; y as the cell says.
          auto show = [&](double x, Rounding r) {
            return style.digits > 0 ? format_number(x, style.digits, r) : format_shortest(x);
          };
          std::string s;
          for (const auto& [x, y] : v) {
            if (!s.empty()) s += " ";
            s += '(';
            s += show(x, Rounding::nearest);
            s += ',';
            s += show(y, cell.rounding);
            s += ')';
          }
          return s;
        } else if constexpr (std::is_same_v<T, JsonText>) {
          return v.text;
        } else {
          std::string s;
          for (double x : v) {
            if (!s.empty()) s += ",";
            s += style.digits > 0 ? format_number(x, style.digits, cell.rounding)
                                  : format_shortest(x);
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

/// Column names: every key of every result, in order of first appearance.
std::vector<std::string> columns_of(const std::vector<Record>& results) {
  std::vector<std::string> columns;
  for (const auto& r : results)
    for (const auto& [key, cell] : r.cells)
      if (std::find(columns.begin(), columns.end(), key) == columns.end()) columns.push_back(key);
  return columns;
}

void render_text(const Report& report, std::ostream& out, const TextStyle& style) {
  std::size_t name_width = 0;
  for (const auto& [key, cell] : report.inputs.cells) name_width = std::max(name_width, key.size());
  for (const auto& [key, cell] : report.inputs.cells)
    out << key << std::string(name_width - key.size() + 2, ' ') << to_text(cell, style) << '\n';
  if (!report.inputs.cells.empty()) out << '\n';

  const auto columns = columns_of(report.results);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> right;
  std::vector<std::size_t> width(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].size();
  for (const auto& r : report.results) {
    auto& row = rows.emplace_back();
    auto& align = right.emplace_back();
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const Cell* cell = r.find(columns[c]);
      row.push_back(cell ? to_text(*cell, style) : "");
      align.push_back(cell && is_numeric(*cell));
      width[c] = std::max(width[c], row.back().size());
    }
  }
  // Cells with a footnote get a marker (`*`, `**`, ...), one per distinct note.
  std::vector<std::string> marked;
  for (std::size_t i = 0; i < report.results.size(); ++i)
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const Cell* cell = report.results[i].find(columns[c]);
      if (!cell || cell->footnote.empty()) continue;
      auto it = std::find(marked.begin(), marked.end(), cell->footnote);
      if (it == marked.end()) it = marked.insert(marked.end(), cell->footnote);
      rows[i][c] += std::string(static_cast<std::size_t>(it - marked.begin()) + 1, '*');
      width[c] = std::max(width[c], rows[i][c].size());
    }
  auto line = [&](const std::vector<std::string>& cells, const std::vector<bool>& align) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      s += align[c] ? pad + cells[c] : cells[c] + pad;
      if (c + 1 < cells.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  const std::string header = line(columns, std::vector<bool>(columns.size(), false));
  out << (style.colour ? "\033[1m" + header + "\033[0m" : header) << '\n';
  for (std::size_t i = 0; i < rows.size(); ++i) out << line(rows[i], right[i]) << '\n';
  for (std::size_t m = 0; m < marked.size(); ++m)
    out << std::string(m + 1, '*') << ' ' << marked[m] << '\n';
  for (const auto& note : report.footnotes) out << note << '\n';
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void render_csv(const Report& report, std::ostream& out) {
  const auto columns = columns_of(report.results);
  // CSV is for machines: every number is the exact double, as in JSON.
  const TextStyle exact{0};
  for (std::size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << csv_field(columns[c]);
  out << '\n';
  for (const auto& r : report.results) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const Cell* cell = r.find(columns[c]);
      out << (c ? "," : "") << (cell ? csv_field(to_text(*cell, exact)) : "");
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

void render(const Report& report, Format format, std::ostream& out, const TextStyle& style) {
  switch (format) {
    case Format::text:
      render_text(report, out, style);
      return;
    case Format::csv:
      render_csv(report, out);
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
