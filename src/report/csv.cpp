// CSV: a header row and the data cells of each result, every number the
// exact double; written under a header known at the start (CsvWriter) or,
// when the header is known only at the end, spooled to an anonymous
// temporary file first (CsvSpool).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "report/internal.hpp"
#include "report/render.hpp"

namespace dpb::report {
namespace {

using detail::csv_row;
using detail::in_data;
using detail::to_text;

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

}  // namespace

namespace detail {

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

}  // namespace detail

std::vector<std::string> csv_columns(const Record& record) {
  std::vector<std::string> columns;
  for (const auto& [key, cell] : record.cells)
    if (in_data(cell)) columns.push_back(key);
  return columns;
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

}  // namespace dpb::report
