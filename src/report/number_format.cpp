#include "report/number_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

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

std::string format_shortest(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

}  // namespace dpb::report
