#pragma once
#include <cstdio>
#include <optional>
#include <ostream>
#include <stdexcept>
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

/// A record's JSON and CSV cells as one compact JSON object (a record nested
/// in another's cell, report::json).
std::string record_json(const Record& record);
/// A record's text cells in one line, "key value, key value", each number as
/// text output rounds it (a record summarised in another's cell).
std::string record_text(const Record& record, const TextStyle& style = {});

/// Text or Markdown tables of results that arrive one at a time. Up to
/// `block_rows` results are held (0: all of them); a report with no more is
/// printed exactly as render() prints it. A longer one is printed in blocks
/// of `block_rows` results as they come, each block laid out alone as
/// render() lays out a table (its own header, column widths and columns
/// moved above it), the inputs above the first; footnote markers are shared
/// by the blocks and their notes follow the last block.
class TableWriter {
 public:
  /// `format`: Format::text or Format::markdown.
  TableWriter(Format format, Record inputs, TextStyle style, std::size_t block_rows = 0);
  void add(Record record, std::ostream& out);
  /// The held results, then the notes of the footnote markers and `footnotes`.
  void finish(const std::vector<std::string>& footnotes, std::ostream& out);

 private:
  void flush(std::ostream& out);
  Format format_;
  Record inputs_;
  TextStyle style_;
  std::size_t block_rows_;
  std::vector<Record> held_;
  std::vector<std::string> marked_;  ///< footnotes of marked cells, in marker order
  std::size_t blocks_ = 0;           ///< blocks printed
};

/// The JSON document of render() written as its results arrive: the same
/// bytes, in flat memory.
class JsonWriter {
 public:
  JsonWriter(std::string command, Record inputs);
  void add(const Record& record, std::ostream& out);
  void finish(const std::vector<std::string>& footnotes, std::ostream& out);

 private:
  void begin(std::ostream& out);
  std::string command_;
  Record inputs_;
  bool begun_ = false;
  std::size_t results_ = 0;
};

/// CSV rows under a header known before the first row: the same bytes as
/// render() for results whose data columns are all among `columns`.
class CsvWriter {
 public:
  explicit CsvWriter(std::vector<std::string> columns);
  void header(std::ostream& out) const;
  /// Throws std::invalid_argument (naming the column) for a record with a
  /// data cell outside the header.
  void add(const Record& record, std::ostream& out) const;
  const std::vector<std::string>& columns() const { return columns_; }

 private:
  std::vector<std::string> columns_;
};

/// A CSV spool's temporary file could not be made, written or read back;
/// `reason` is the errno value (0: none known).
class SpoolError : public std::runtime_error {
 public:
  SpoolError(const std::string& what, int error) : std::runtime_error(what), reason(error) {}
  int reason;
};

/// CSV of results that arrive one at a time, the same as render() would
/// print for them all, when the header (every column any row has) is known
/// only at the end: each row's cells are spilled to an anonymous temporary
/// file in `directory` as they come (flat memory) and written by finish().
/// Throws SpoolError, whose what() names the directory.
class CsvSpool {
 public:
  explicit CsvSpool(const std::string& directory);
  ~CsvSpool();
  CsvSpool(const CsvSpool&) = delete;
  CsvSpool& operator=(const CsvSpool&) = delete;
  void add(const Record& record);
  /// The header and every row, to `out`.
  void finish(std::ostream& out);

 private:
  [[noreturn]] void fail(int reason) const;
  std::string directory_;
  std::FILE* file_ = nullptr;
  std::vector<std::string> columns_;
  std::size_t rows_ = 0;
};

/// The data columns of `record` (every cell but Show::compact), in order.
std::vector<std::string> csv_columns(const Record& record);

}  // namespace dpb::report
