#pragma once
// Reads the CSV files of tests/reference/ (copies of the public test-suite values they name):
// '#' lines are comments, the first other line names the columns, quoted
// fields may hold commas.
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpb::test {

using CsvRow = std::map<std::string, std::string>;

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
      fields.back() += line[++i];  // "" inside quotes is one quote (RFC 4180)
    else if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      fields.emplace_back();
    else if (c != '\r')
      fields.back() += c;
  }
  return fields;
}

inline std::vector<CsvRow> read_reference_csv(const std::string& name) {
  std::ifstream in(std::string(DPBUDGET_REFERENCE_DIR) + "/" + name);
  if (!in) throw std::runtime_error("cannot open reference file " + name);
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto fields = split_csv_line(line);
    if (header.empty()) {
      header = fields;
      continue;
    }
    CsvRow row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace dpb::test
