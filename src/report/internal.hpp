#pragma once
// What the renderers of render.hpp share, one file per family of formats:
// render.cpp (the dispatch, JSON, JSON Lines, a record in one line),
// text_tables.cpp (text and Markdown tables, TableWriter) and csv.cpp (CSV,
// CsvWriter, CsvSpool), over cells.cpp (a cell as JSON or text, and the
// outputs that show it). Included only by src/report/*.cpp; not part of the
// report layer's interface.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/record.hpp"
#include "report/render.hpp"

namespace dpb::report::detail {

using Json = nlohmann::ordered_json;

// --- cells.cpp ------------------------------------------------------------

Json to_json(const Cell& cell);

/// A record's data cells (in_data) as one JSON object.
Json to_json(const Record& record);

/// Whether a cell is part of JSON and CSV output (compact text summaries are not).
bool in_data(const Cell& cell);

/// Whether a cell is part of text output in `style`.
bool in_text(const Cell& cell, const TextStyle& style);

/// A cell as text output shows it in `style` (digits, a lower end beside it).
std::string to_text(const Cell& cell, const TextStyle& style);

bool is_numeric(const Cell& cell);

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

// --- csv.cpp ----------------------------------------------------------------

/// A record's CSV fields under `columns`: each column's first cell, when it
/// is a data cell, else empty.
std::string csv_row(const Record& record, const std::vector<std::string>& columns);

}  // namespace dpb::report::detail
