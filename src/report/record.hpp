#pragma once
// What a verb hands to a renderer: named cells, in order. A number carries the
// direction it may be rounded in when shown with fewer digits, so that a
// printed ε stays an upper bound and a printed largest q stays attainable.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace dpb::report {

enum class Rounding {
  nearest,  ///< an input echoed back, or a value with no safe side
  up,       ///< an upper bound (ε, δ, σ): never shown smaller than it is
  down,     ///< a largest allowed value (q, steps): never shown larger
};

/// A list of (x, y) pairs, e.g. the points of a trade-off curve: a JSON array
/// of two-element arrays.
using Pairs = std::vector<std::array<double, 2>>;

/// A JSON value, serialised: nested as JSON in JSON output, shown as this
/// compact text elsewhere (e.g. a spec file's event).
struct JsonText {
  std::string text;
};

/// Where a cell shows. Text output is for people: by default a compact table
/// (`always` and `compact` cells); `--wide` (TextStyle::wide) restores every
/// column (`always` and `wide` cells). JSON and CSV carry `always`, `wide`
/// and `data` cells, never `compact` ones.
enum class Show {
  always,   ///< every format
  wide,     ///< JSON, CSV and wide text; summarised by a `compact` cell
  compact,  ///< compact text only (a summary of `wide` cells)
  data,     ///< JSON and CSV only (text says it another way, e.g. a footnote marker)
  text,     ///< text only, compact and wide (JSON and CSV say it another way)
};

struct Cell {
  std::variant<std::monostate, double, std::int64_t, std::string, std::vector<double>, Pairs,
               JsonText, bool>
      value;
  Rounding rounding = Rounding::nearest;
  /// Text output marks the cell (`*`, `**`, ...) and prints this under the
  /// table once; JSON and CSV ignore it.
  std::string footnote = {};
  Show show = Show::always;
  /// Compact text shows a number as the interval "[lower, value]", `lower`
  /// rounded down (and the value as its rounding says); elsewhere ignored.
  std::optional<double> lower = {};
  /// Text, several rows, not wide: when every row holds this column with the
  /// same text, it is shown once in the block above the table instead.
  bool hoist = false;
};

inline Cell number(double v, Rounding r = Rounding::nearest) { return Cell{v, r}; }
inline Cell integer(std::int64_t v) { return Cell{v, Rounding::nearest}; }
inline Cell text(std::string v) { return Cell{std::move(v), Rounding::nearest}; }
inline Cell numbers(std::vector<double> v) { return Cell{std::move(v), Rounding::nearest}; }
/// `rounding` applies to the second number of each pair (x is an input).
inline Cell pairs(Pairs v, Rounding r = Rounding::nearest) { return Cell{std::move(v), r}; }
inline Cell with_footnote(Cell c, std::string note) {
  c.footnote = std::move(note);
  return c;
}
inline Cell json(std::string compact) {
  return Cell{JsonText{std::move(compact)}, Rounding::nearest};
}
inline Cell boolean(bool v) { return Cell{v, Rounding::nearest}; }
inline Cell visible(Cell c, Show show) {
  c.show = show;
  return c;
}
inline Cell hoisted(Cell c) {
  c.hoist = true;
  return c;
}

/// An ordered list of named cells: one row of a table, one JSON object.
struct Record {
  std::vector<std::pair<std::string, Cell>> cells;
  Record& add(std::string key, Cell cell) {
    cells.emplace_back(std::move(key), std::move(cell));
    return *this;
  }
  const Cell* find(const std::string& key) const {
    for (const auto& [k, c] : cells)
      if (k == key) return &c;
    return nullptr;
  }
};

/// A verb's whole answer: the inputs it used, one record per result, and
/// footnotes for the reader (under text tables; `notes` in a JSON document).
struct Report {
  std::string command;
  Record inputs;
  std::vector<Record> results;
  std::vector<std::string> footnotes;
};

}  // namespace dpb::report
