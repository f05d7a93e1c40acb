#include "report/number_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace dpb::report {
namespace {

std::string printf_g(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace

std::string format_number(double v, int digits, Rounding r) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  std::string s = printf_g(v, digits);
  if (r == Rounding::nearest) return s;
  // Step the last shown digit until the decimal lies on the safe side of v.
  // One step always suffices; the loop guards against exotic rounding.
  for (int guard = 0; guard < 4; ++guard) {
    const double shown = std::strtod(s.c_str(), nullptr);
    if ((r == Rounding::up && shown >= v) || (r == Rounding::down && shown <= v)) return s;
    const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(shown))));
    const double unit = std::pow(10.0, exponent - digits + 1);
    s = printf_g(r == Rounding::up ? shown + unit : shown - unit, digits);
  }
  return printf_g(v, 17);
}

namespace {

/// A finite decimal as sign, significant digits (no leading or trailing
/// zeros) and the power of ten of the first digit: value = 0.DIGITS × 10^(point).
struct Decimal {
  bool negative = false;
  std::string digits;  ///< empty for zero
  long point = 0;
};

/// Reads "[-]ddd[.ddd][e[+-]xx]".
Decimal parse_decimal(std::string_view s) {
  Decimal d;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) d.negative = s[i++] == '-';
  long point = 0;
  bool seen_point = false;
  std::string digits;
  for (; i < s.size() && s[i] != 'e' && s[i] != 'E'; ++i) {
    if (s[i] == '.') {
      seen_point = true;
      continue;
    }
    digits += s[i];
    if (!seen_point) ++point;
  }
  long exponent = 0;
  if (i < s.size()) exponent = std::strtol(std::string(s.substr(i + 1)).c_str(), nullptr, 10);
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return Decimal{false, "", 0};
  const std::size_t last = digits.find_last_not_of('0');
  d.digits = digits.substr(first, last - first + 1);
  d.point = point - static_cast<long>(first) + exponent;
  return d;
}

/// Compares magnitudes: −1, 0, 1.
int compare_magnitude(const Decimal& a, const Decimal& b) {
  if (a.digits.empty() || b.digits.empty())
    return a.digits.empty() ? (b.digits.empty() ? 0 : -1) : 1;
  if (a.point != b.point) return a.point < b.point ? -1 : 1;
  const int c = a.digits.compare(b.digits);  // equal-length prefixes, then the longer is larger
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

/// Digits of the exact decimal expansion of a double: at most 767
/// significant digits (2^-1074 has 751), so this precision is exact.
constexpr int kExactDigits = 800;

}  // namespace

int compare_decimal(const std::string& text, double v) {
  // Fast path: as long doubles (64-bit significand on x86-64) both are
  // rounded monotonically, v exactly; a strict order there is the exact one.
  const long double t = std::strtold(text.c_str(), nullptr);
  const long double lv = v;
  if (t < lv) return -1;
  if (t > lv) return 1;
  // Equal at that precision: compare with v's exact decimal expansion.
  char buf[kExactDigits + 32];
  const auto res =
      std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, kExactDigits);
  const Decimal a = parse_decimal(text);
  const Decimal b = parse_decimal(std::string_view(buf, static_cast<std::size_t>(res.ptr - buf)));
  if (a.digits.empty() && b.digits.empty()) return 0;
  const bool a_neg = a.negative && !a.digits.empty(), b_neg = b.negative && !b.digits.empty();
  if (a_neg != b_neg) return a_neg ? -1 : 1;
  const int m = compare_magnitude(a, b);
  return a_neg ? -m : m;
}

std::string format_shortest_directed(double v, Rounding r) {
  return format_shortest(directed(v, r, format_shortest));
}

std::string format_shortest(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

}  // namespace dpb::report
