#include "cli/flags/parse.hpp"

#include <algorithm>
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
      fail(flag, parts.size() == 1 ? std::string("must be ") + domain.description + ", got " +
                                         quoted(item) + look_alike_hint(item)
                                   : "malformed range " + quoted(item) + " (use start:stop:step)" +
                                         look_alike_hint(item));
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

std::string look_alike_hint(std::string_view text) {
  struct LookAlike {
    std::string_view utf8, name, instead;
  };
  // Characters that word processors, chat tools and PDFs put where a number's
  // ASCII characters belong.
  static constexpr LookAlike kLookAlikes[] = {
      {"\xE2\x88\x92", "U+2212 MINUS SIGN", "-"},
      {"\xE2\x80\x93", "U+2013 EN DASH", "-"},
      {"\xE2\x80\x94", "U+2014 EM DASH", "-"},
      {"\xE2\x80\x90", "U+2010 HYPHEN", "-"},
      {"\xE2\x80\x91", "U+2011 NON-BREAKING HYPHEN", "-"},
      {"\xEF\xBC\x8D", "U+FF0D FULLWIDTH HYPHEN-MINUS", "-"},
      {"\xC2\xA0", "U+00A0 NO-BREAK SPACE", ""},
      {"\xE2\x80\xAF", "U+202F NARROW NO-BREAK SPACE", ""},
      {"\xE2\x80\x89", "U+2009 THIN SPACE", ""},
      {"\xC3\x97", "U+00D7 MULTIPLICATION SIGN", "e, as in 1e-5"},
  };
  for (const auto& c : kLookAlikes)
    if (text.find(c.utf8) != std::string_view::npos)
      return " (it holds " + std::string(c.name) + ": " +
             (c.instead.empty()      ? std::string("remove it")
              : c.instead.size() > 1 ? "type " + std::string(c.instead)
                                     : "type '" + std::string(c.instead) + "'") +
             ")";
  return "";
}

std::string comma_number_hint(const std::vector<std::string>& texts, bool whole_number) {
  const std::string joined = comma_joined(texts);
  const auto comma = joined.find(',');
  if (comma == std::string::npos || joined.find(',', comma + 1) != std::string::npos) return "";
  const std::string whole = joined.substr(0, comma), fraction = joined.substr(comma + 1);
  auto digits = [](const std::string& s, std::size_t from) {
    return s.size() > from && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(),
                                          [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(whole, whole.starts_with('-') ? 1 : 0) || !digits(fraction, 0)) return "";
  const bool thousands = fraction.size() == 3 && whole != "0" && whole != "-0";
  if (whole_number)
    return thousands ? " (a thousands separator? write '" + whole + fraction + "')" : "";
  if (thousands)
    return " (a decimal comma or a thousands separator? write '" + whole + "." + fraction +
           "' or '" + whole + fraction + "')";
  return " (a decimal comma? write '" + whole + "." + fraction + "')";
}

double parse_real(std::string_view flag, const std::string& text, const Domain& domain) {
  double v = 0;
  if (!to_double(text, v) || !domain.contains(v))
    fail(flag, std::string("must be ") + domain.description + ", got " + quoted(text) +
                   look_alike_hint(text));
  return v;
}

std::int64_t parse_integer(std::string_view flag, const std::string& text, std::int64_t min) {
  if (above_integer_limit(text)) fail_integer_limit(flag, text);
  double v = 0;
  if (!to_double(text, v) || v != std::floor(v) || v < static_cast<double>(min))
    fail(flag, "must be an integer >= " + std::to_string(min) + ", got " + quoted(text) +
                   look_alike_hint(text));
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
        if (!domain.contains(out[i])) {
          // A part of what reads as one number with a comma ("0,00001"): say so.
          const std::string comma = comma_number_hint({text}, false);
          fail(flag, std::string("must be ") + domain.description + ", got " + quoted(item) +
                         (comma.empty() ? "" : " in " + quoted(text) + comma));
        }
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
