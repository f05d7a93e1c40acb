// A record's cells as each output shows them: as JSON (numbers on the safe
// side of a bound), as text (digits as TextStyle says, a lower end beside its
// value), and which outputs show a cell at all.
#include <cmath>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "report/internal.hpp"
#include "report/number_format.hpp"

namespace dpb::report::detail {
namespace {

/// A number as JSON, its text on the safe side of v for a bound (the JSON
/// writer's own shortest decimal, checked by directed()).
Json json_number(double v, Rounding r = Rounding::nearest) {
  if (std::isinf(v)) return v > 0 ? Json("inf") : Json("-inf");
  return Json(directed(v, r, [](double x) { return Json(x).dump(); }));
}

/// A number as text in `style`: its digits, or the shortest form on the safe side.
std::string show_number(double v, Rounding r, const TextStyle& style) {
  return style.digits > 0 ? format_number(v, style.digits, r) : format_shortest_directed(v, r);
}

}  // namespace

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

bool in_data(const Cell& cell) { return cell.show != Show::compact && cell.show != Show::text; }

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

}  // namespace dpb::report::detail
