#include "cli/input/number_list.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"
#include "cli/input/input_file.hpp"

namespace dpb::cli {

std::vector<std::vector<double>> parse_number_rows(const char* flag, const std::string& path,
                                                   const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw UsageError(std::string(flag) + ": '" + path + "' is empty");
  std::vector<std::vector<double>> rows;
  if (text[first] == '[') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw UsageError(std::string(flag) + ": '" + path + "' is not valid JSON");
    }
    auto number = [&](const nlohmann::json& v) {
      if (!v.is_number())
        throw UsageError(std::string(flag) + ": '" + path + "': every entry must be a number");
      return v.get<double>();
    };
    if (!j.is_array()) throw UsageError(std::string(flag) + ": expected a JSON array");
    bool nested = !j.empty() && j.front().is_array();
    if (!nested) rows.emplace_back();
    for (const auto& v : j) {
      if (nested) {
        if (!v.is_array())
          throw UsageError(std::string(flag) + ": '" + path + "': every row must be an array");
        rows.emplace_back();
        for (const auto& x : v) rows.back().push_back(number(x));
      } else {
        rows.back().push_back(number(v));
      }
    }
    return rows;
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    for (char& ch : line)
      if (ch == ',' || ch == '\t' || ch == '\r' || ch == ';') ch = ' ';
    std::istringstream items(line);
    std::string item;
    std::vector<double> row;
    while (items >> item) {
      try {
        row.push_back(parse_real(flag, item, Domain{-kInf, kInf, true, true, "a finite number"}));
      } catch (const UsageError&) {
        throw UsageError(std::string(flag) + ": '" + path + "': '" + item +
                         "' is not a finite number");
      }
    }
    if (!row.empty()) rows.push_back(std::move(row));
  }
  if (rows.empty()) throw UsageError(std::string(flag) + ": '" + path + "' holds no numbers");
  return rows;
}

std::vector<std::vector<double>> read_number_rows(const char* flag, const std::string& path) {
  InputFile input(flag, path, "a CSV or JSON file of numbers");
  const std::string text = input.read_text(kMaxInputBytes);
  if (text.size() > kMaxInputBytes)
    throw UsageError(std::string(flag) + ": '" + path + "' is larger than " +
                     size_text(kMaxInputBytes));
  return parse_number_rows(flag, input.name(), text);
}

}  // namespace dpb::cli
