#pragma once
// Checks shared by the fuzz targets: a failed check aborts, which libFuzzer
// reports as a crash and saves the input.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

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

/// The command-line words of a fuzz_cli input: its bytes split at NUL and
/// newline bytes (a separator at the end ends the last word and starts none).
inline std::vector<std::string> command_words(std::string_view bytes) {
  std::vector<std::string> words;
  std::string current;
  bool pending = false;
  for (const char c : bytes) {
    if (c == '\0' || c == '\n') {
      words.push_back(current);
      current.clear();
      pending = false;
    } else {
      current += c;
      pending = true;
    }
  }
  if (pending) words.push_back(current);
  return words;
}

/// Whether a command line may be run by a fuzzer or a test: no stdin ("-"),
/// no path (a '/': the fuzzer runs in a scratch directory and may only read
/// and write files there).
inline bool stays_in_scratch(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "-" || a.find('/') != std::string::npos) return false;
  return true;
}

}  // namespace dpb::fuzz
