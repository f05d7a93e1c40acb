#include "cli/flags/flag_values.hpp"

#include <algorithm>
#include <cmath>

#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {
namespace {

[[noreturn]] void one_value_only(const char* flag, const std::vector<std::string>& texts) {
  throw UsageError(std::string(flag) + ": takes one value, got '" + comma_joined(texts) + "'");
}

/// One number written with a comma ("0,01", "1,000"): refused as such before
/// its parts are read as a list (whose first part may fail on its own).
void refuse_comma_number(const char* flag, const std::vector<std::string>& texts,
                         bool whole_number) {
  const std::string hint = comma_number_hint(texts, whole_number);
  if (!hint.empty())
    throw UsageError(std::string(flag) + ": takes one value, got '" + comma_joined(texts) + "'" +
                     hint);
}

}  // namespace

std::optional<double> optional_real(const char* flag, const std::vector<std::string>& texts,
                                    const Domain& domain) {
  if (texts.empty()) return std::nullopt;
  refuse_comma_number(flag, texts, false);
  const auto values = parse_list(flag, texts, domain);
  if (values.size() != 1) one_value_only(flag, texts);
  return values.front();
}

std::optional<std::int64_t> optional_integer(const char* flag,
                                             const std::vector<std::string>& texts,
                                             std::int64_t min, std::int64_t max) {
  if (texts.empty()) return std::nullopt;
  refuse_comma_number(flag, texts, true);
  if (max >= (std::int64_t{1} << 53)) {  // as lists of counts read it, 2^53 named when passed
    const auto values = parse_integer_list(flag, texts, min);
    if (values.size() != 1) one_value_only(flag, texts);
    return values.front();
  }
  const std::string range =
      max < (std::int64_t{1} << 53)
          ? "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]"
          : "an integer >= " + std::to_string(min);
  const Domain any{-kInf, kInf, true, true, range.c_str()};
  const auto values = parse_list(flag, texts, any);
  if (values.size() != 1) one_value_only(flag, texts);
  const double v = values.front();
  if (v != std::floor(v) || v < static_cast<double>(min) || v > static_cast<double>(max))
    throw UsageError(std::string(flag) + ": must be " + range + ", got '" + comma_joined(texts) +
                     "'");
  return static_cast<std::int64_t>(v);
}

double required_real(const char* flag, const std::vector<std::string>& texts,
                     const Domain& domain) {
  const auto v = optional_real(flag, texts, domain);
  if (!v) throw UsageError(std::string(flag) + " is required");
  return *v;
}

bool either(const char* a, bool has_a, const char* b, bool has_b) {
  if (has_a && has_b)
    throw UsageError(std::string(b) + ": give either " + a + " or " + b + ", not both");
  if (!has_a && !has_b) throw UsageError(std::string(a) + " is required (or " + b + ")");
  return has_a;
}

void note(report::Report& report, const std::string& text) {
  const std::string line = "note: " + text;
  auto& f = report.footnotes;
  if (std::find(f.begin(), f.end(), line) == f.end()) f.push_back(line);
}

void warn(report::Report& report, const std::string& warning) {
  const std::string line = "warning: " + warning;
  auto& f = report.footnotes;
  if (std::find(f.begin(), f.end(), line) == f.end()) f.push_back(line);
}

void finish(const report::Report& report, const OutputFlags& output, std::ostream& out,
            std::ostream& err) {
  for (const auto& line : report.footnotes)
    if (line.rfind("warning: ", 0) == 0) err << "dpbudget: " << line << '\n';
  emit(report, output, out);
}

std::string shown(double v) { return report::format_shortest(v); }

}  // namespace dpb::cli
