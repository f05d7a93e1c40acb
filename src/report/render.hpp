#pragma once
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "report/record.hpp"

namespace dpb::report {

enum class Format { text, json, jsonl, csv, markdown };

struct TextStyle {
  int digits = 6;       ///< significant digits; 0 = the exact double (shortest round-trip form)
  bool colour = false;  ///< bold table header (ANSI); only for a terminal
  /// Every column (Show::wide cells, not the compact summaries), none moved
  /// above the table; default: the compact table (Show::compact cells) with
  /// constant hoisted columns moved to the block above it.
  bool wide = false;
};

/// Whether to colour output (after ninja's LinePrinter): only on a terminal,
/// never when NO_COLOR is set and non-empty (no-color.org) or TERM is "dumb".
/// `no_color` and `term` are the environment values, nullptr when unset.
bool colour_wanted(bool is_terminal, const char* no_color, const char* term);

/// `text` safe to show on a terminal: C0 controls and DEL as `\t`, `\n`, `\r`
/// or `\xHH`, C1 controls (U+0080..U+009F) as `\u00HH`, and bytes that are
/// not UTF-8 as `\xHH`; other text unchanged. Input echoed into text output
/// and messages (a name, a scores line) cannot move the cursor, retitle the
/// window or colour the terminal. JSON escapes by itself; CSV stays exact.
std::string escape_control(std::string_view text);

/// Text: the inputs as `name  value` lines (then, with several rows, each
/// `hoist` column that holds one value in every row), a blank line, an
/// aligned table with a header, then footnotes; compact or wide (TextStyle).
/// Markdown: the text layout as GitHub-flavoured tables (the block above the
/// table as parameter/value rows, numbers right-aligned), footnotes as a
/// list, every cell escaped; for CI job summaries.
/// CSV: a header row and the result columns (every cell but Show::compact).
/// JSON: {"version", "command", "inputs", "results", "notes" (the footnotes,
/// when there are any)}. JSON Lines: one result
/// object per line. JSON numbers are the exact doubles (shortest round-trip
/// form); infinities are the string "inf".
void render(const Report& report, Format format, std::ostream& out, const TextStyle& style = {});

/// One result as a single JSON line (for streaming JSON Lines).
void render_json_line(const Record& record, std::ostream& out);

/// CSV of results that arrive one at a time, the same as render() would
/// print for them all, in flat memory: each row's cells are spilled to an
/// anonymous temporary file as they come (the header, every column any row
/// has, is known only at the end) and written by finish().
class CsvSpool {
 public:
  /// `fixed`: the header is these columns, and add() throws
  /// std::invalid_argument (naming the column) for a row with another.
  explicit CsvSpool(std::optional<std::vector<std::string>> fixed = std::nullopt);
  ~CsvSpool();
  CsvSpool(const CsvSpool&) = delete;
  CsvSpool& operator=(const CsvSpool&) = delete;
  void add(const Record& record);
  /// The header (unless `header` is false) and every row, to `out`.
  void finish(std::ostream& out, bool header = true);

 private:
  std::FILE* file_ = nullptr;
  std::vector<std::string> columns_;
  bool fixed_ = false;
  std::size_t rows_ = 0;
};

/// The data columns of `record` (every cell but Show::compact), in order.
std::vector<std::string> csv_columns(const Record& record);

}  // namespace dpb::report
