// Fuzzes JSON Lines sweep input (read_configs): every line is either a
// configuration or an InputError with its line number; a limit exceeded is a
// UsageError; nothing else may escape.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/config_input.hpp"
#include "cli/errors.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  dpb::cli::ConfigInput input;
  try {
    input = dpb::cli::read_configs(in, "fuzz.jsonl");
  } catch (const dpb::cli::UsageError&) {
    return 0;
  }
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (const auto& c : input.configs)
    if (c.line < 1 || c.line > lines) dpb::fuzz::fail("config line number", std::to_string(c.line));
  for (const auto& e : input.errors) {
    if (e.line < 1 || e.line > lines) dpb::fuzz::fail("error line number", std::to_string(e.line));
    if (e.message.empty()) dpb::fuzz::fail("empty error message", text);
  }
  return 0;
}
