#include "report/row_stream.hpp"

#include <utility>

namespace dpb::report {

RowStream::RowStream(Format format, TextStyle text, Record inputs, std::string document,
                     std::size_t held_rows, std::ostream& out, Write write)
    : style(text),
      format_(format),
      inputs_(std::move(inputs)),
      document_(std::move(document)),
      held_rows_(held_rows),
      out_(out),
      write_(std::move(write)) {}

void RowStream::stream_csv(std::vector<std::string> columns, bool header) {
  csv_.emplace(std::move(columns));
  csv_header_ = header;
}

void RowStream::spool_csv(const std::string& directory) { spool_.emplace(directory); }

bool RowStream::csv_undecided() const { return format_ == Format::csv && !csv_ && !spool_; }

void RowStream::add(Record record) {
  ++rows_;
  switch (format_) {
    case Format::jsonl:
      render_json_line(record, pending_);
      return;
    case Format::json:
      json().add(record, pending_);
      return;
    case Format::text:
    case Format::markdown:
      table().add(std::move(record), pending_);
      return;
    case Format::csv:
      if (spool_) {
        spool_->add(record);
        return;
      }
      header();
      csv_->add(record, pending_);
      return;
  }
}

void RowStream::write(bool all) {
  if (format_ == Format::json && rows_ < held_rows_ && !all) return;
  if (pending_.view().empty()) return;
  write_(pending_.view());
  pending_.str("");
}

void RowStream::finish(const std::vector<std::string>& footnotes) {
  switch (format_) {
    case Format::json:
      json().finish(footnotes, pending_);
      break;
    case Format::text:
    case Format::markdown:
      table().finish(footnotes, pending_);
      break;
    case Format::csv:
      if (!csv_ && !spool_) stream_csv({}, true);  // no rows: the header of no columns
      if (csv_) header();
      break;
    case Format::jsonl:
      break;
  }
  write(/*all=*/true);
  // Written straight from the spool: nothing reached `out` before every row
  // was in.
  if (spool_) spool_->finish(out_);
}

TableWriter& RowStream::table() {
  if (!table_) table_.emplace(format_, inputs_, style, held_rows_);
  return *table_;
}

JsonWriter& RowStream::json() {
  if (!json_) json_.emplace(document_, inputs_);
  return *json_;
}

void RowStream::header() {
  if (!csv_header_) return;
  csv_->header(pending_);
  csv_header_ = false;
}

}  // namespace dpb::report
