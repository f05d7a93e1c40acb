#pragma once
// Checks shared by the fuzz targets: a failed check aborts, which libFuzzer
// reports as a crash and saves the input.
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dpb::fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz check failed: %s: %s\n", what, detail.c_str());
  std::abort();
}

/// True when `text` has a token "nan" or "-nan" (as printed for a NaN double).
inline bool has_nan_token(const std::string& text) {
  std::string token;
  for (char c : text + ' ') {
    if (c == ' ' || c == '\n' || c == '\t' || c == ',' || c == '"' || c == ':' || c == '[' ||
        c == ']' || c == '{' || c == '}') {
      if (token == "nan" || token == "-nan" || token == "NaN" || token == "-NaN") return true;
      token.clear();
    } else {
      token += c;
    }
  }
  return false;
}

}  // namespace dpb::fuzz
