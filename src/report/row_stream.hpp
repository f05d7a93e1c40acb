#pragma once
// A long series of rows on its way out, in flat memory in every format: JSON
// Lines, and CSV with a known header, as each batch of rows comes; JSON as one
// document written row by row once `held_rows` rows are in (a shorter one is
// written whole at the end); text and Markdown in tables of `held_rows` rows;
// CSV whose header is known only at the end through a spool file. `sweep`
// streams its rows through it.
#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "report/record.hpp"
#include "report/render.hpp"

namespace dpb::report {

class RowStream {
 public:
  /// Writes text to the destination, throwing when it cannot.
  using Write = std::function<void(std::string_view)>;

  /// `document` names the JSON document ({"DOCUMENT": ..., "inputs": ...}).
  /// The spool's CSV is copied straight to `out` at finish(); everything
  /// else goes through `write`.
  RowStream(Format format, TextStyle text, Record inputs, std::string document,
            std::size_t held_rows, std::ostream& out, Write write);

  TextStyle style;  ///< text and Markdown (set before the first row)

  /// CSV under `columns`, the header first unless `header` is false.
  void stream_csv(std::vector<std::string> columns, bool header);
  /// CSV through a spool file in `directory` (throws SpoolError).
  void spool_csv(const std::string& directory);
  /// CSV whose columns are not decided yet (no stream_csv or spool_csv).
  bool csv_undecided() const;

  /// Throws std::invalid_argument (naming the column) for a CSV row with a
  /// column outside a streamed header, SpoolError when the spool fails.
  void add(Record record);
  /// Writes what is ready (JSON: once held_rows rows are in, or `all`).
  void write(bool all = false);
  /// The end of the document: held rows and the notes (text, Markdown,
  /// JSON), the CSV header of a stream with no rows, or the spool's CSV
  /// (copied to `out`, which the caller then checks; throws SpoolError).
  void finish(const std::vector<std::string>& footnotes);

 private:
  TableWriter& table();
  JsonWriter& json();
  void header();

  Format format_;
  Record inputs_;
  std::string document_;
  std::size_t held_rows_;
  std::ostream& out_;
  Write write_;
  std::ostringstream pending_;
  std::size_t rows_ = 0;
  std::optional<TableWriter> table_;
  std::optional<JsonWriter> json_;
  std::optional<CsvWriter> csv_;
  bool csv_header_ = false;
  std::optional<CsvSpool> spool_;
};

}  // namespace dpb::report
