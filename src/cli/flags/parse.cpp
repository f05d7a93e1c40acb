#include "cli/flags/parse.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli/errors.hpp"

namespace dpb::cli {
namespace {

[[noreturn]] void fail(std::string_view flag, const std::string& what) {
  throw UsageError(std::string(flag) + ": " + what);
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

/// A finite double spelled in full by `text` (no trailing junk, no nan/inf).
bool to_double(const std::string& text, double& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (end != begin + text.size() || !std::isfinite(v)) return false;
  // strtod accepts hex floats and "infinity"; keep to plain decimals.
  for (char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-'))
      return false;
  out = v;
  return true;
}

/// Whether `text`, a plain decimal, is above kMaxInteger. Read in long
/// double: 9007199254740993 would round to 2^53 as a double (accepted, a
/// silent clamp) and 1e400 overflow it (refused as no number), where the
/// fault is the limit.
bool above_integer_limit(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-'))
      return false;
  char* end = nullptr;
  const long double v = std::strtold(text.c_str(), &end);
  return end == text.c_str() + text.size() && v > static_cast<long double>(kMaxInteger);
}

[[noreturn]] void fail_integer_limit(std::string_view flag, const std::string& text) {
  fail(flag, "must be at most 2^53 = 9007199254740992, got " + quoted(text));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

/// Expands one list item (a number or a range) into `out`.
void expand_item(std::string_view flag, const std::string& item, const Domain& domain,
                 std::vector<double>& out) {
  const auto parts = split(item, ':');
  if (parts.size() > 3) fail(flag, "malformed range " + quoted(item) + " (use start:stop:step)");
  std::vector<double> v(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!to_double(parts[i], v[i]))
      fail(flag, parts.size() == 1
                     ? std::string("must be ") + domain.description + ", got " + quoted(item)
                     : "malformed range " + quoted(item) + " (use start:stop:step)");
  if (parts.size() == 1) {
    out.push_back(v[0]);
    return;
  }
  const double start = v[0], stop = v[1], step = parts.size() == 3 ? v[2] : 1.0;
  if (!(step > 0)) fail(flag, "range " + quoted(item) + " needs a step > 0");
  if (stop < start) fail(flag, "range " + quoted(item) + " has stop < start");
  // Stop is included when it lies on the grid up to rounding.
  const double span = (stop - start) / step;
  if (span > static_cast<double>(kMaxListItems))
    fail(flag, "range " + quoted(item) + " has more than 1000000 values");
  const auto count = static_cast<std::size_t>(std::floor(span + 1e-9)) + 1;
  for (std::size_t i = 0; i < count; ++i) {
    double x = start + static_cast<double>(i) * step;
    // Snap to 12 significant digits so 1.1:2:0.1 gives 1.2, not 1.2000000000000002.
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.12g", x);
    x = std::strtod(buf, nullptr);
    out.push_back(std::min(x, std::max(stop, start)));
  }
}

}  // namespace

bool Domain::contains(double v) const {
  if (!std::isfinite(v)) return false;
  const bool above = lo_open ? v > lo : v >= lo;
  const bool below = hi_open ? v < hi : v <= hi;
  return above && below;
}

std::string comma_joined(const std::vector<std::string>& texts) {
  std::string s;
  for (const auto& t : texts) s += (s.empty() ? "" : ",") + t;
  return s;
}

double parse_real(std::string_view flag, const std::string& text, const Domain& domain) {
  double v = 0;
  if (!to_double(text, v) || !domain.contains(v))
    fail(flag, std::string("must be ") + domain.description + ", got " + quoted(text));
  return v;
}

std::int64_t parse_integer(std::string_view flag, const std::string& text, std::int64_t min) {
  if (above_integer_limit(text)) fail_integer_limit(flag, text);
  double v = 0;
  if (!to_double(text, v) || v != std::floor(v) || v < static_cast<double>(min))
    fail(flag, "must be an integer >= " + std::to_string(min) + ", got " + quoted(text));
  return static_cast<std::int64_t>(v);
}

std::vector<double> parse_list(std::string_view flag, const std::vector<std::string>& texts,
                               const Domain& domain) {
  std::vector<double> out;
  for (const auto& text : texts) {
    if (text.empty()) fail(flag, "empty list");
    for (const auto& item : split(text, ',')) {
      if (item.empty()) fail(flag, "empty item in list " + quoted(text));
      const std::size_t before = out.size();
      expand_item(flag, item, domain, out);
      for (std::size_t i = before; i < out.size(); ++i)
        if (!domain.contains(out[i]))
          fail(flag, std::string("must be ") + domain.description + ", got " + quoted(item));
      if (out.size() > kMaxListItems) fail(flag, "more than 1000000 values");
    }
  }
  if (out.empty()) fail(flag, "empty list");
  return out;
}

std::vector<std::int64_t> parse_integer_list(std::string_view flag,
                                             const std::vector<std::string>& texts,
                                             std::int64_t min) {
  const Domain any{-kInf, kInf, true, true, "a number"};
  std::vector<std::int64_t> out;
  for (const auto& text : texts) {
    if (text.empty()) fail(flag, "empty list");
    for (const auto& item : split(text, ',')) {
      if (item.empty()) fail(flag, "empty item in list " + quoted(text));
      // A range's ends and step: each past the limit is that, not "no number".
      for (const auto& part : split(item, ':'))
        if (above_integer_limit(part)) fail_integer_limit(flag, item);
      std::vector<double> values;
      expand_item(flag, item, any, values);
      for (double v : values) {
        if (v != std::floor(v) || v < static_cast<double>(min))
          fail(flag, "must be an integer >= " + std::to_string(min) + ", got " + quoted(item));
        if (v > kMaxInteger) fail_integer_limit(flag, item);
        out.push_back(static_cast<std::int64_t>(v));
      }
      if (out.size() > kMaxListItems) fail(flag, "more than 1000000 values");
    }
  }
  if (out.empty()) fail(flag, "empty list");
  return out;
}

void check_table_rows(std::string_view flag, std::size_t rows) {
  if (rows > kMaxTableRows)
    fail(flag, "with the other lists' values this makes " + std::to_string(rows) +
                   " rows (one for each combination); at most 1000000");
}

std::string parse_choice(std::string_view flag, const std::string& text,
                         const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) {
    if (a == text) return text;
    list += (list.empty() ? "" : ", ") + a;
  }
  fail(flag, "must be one of " + list + ", got " + quoted(text));
}

}  // namespace dpb::cli
