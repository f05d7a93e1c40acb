// JSON Lines input (sweep --input): the documented limits
// (docs/guide.md#sweeps-and-the-budget-gate: 64 MiB per file, 1 MiB per line, 1,000,000
// configurations) end the read with a clean UsageError, and a line is never
// held in memory beyond its limit. The file and row limits are crossed with
// smaller InputLimits (the same code, a thousandth of the input); the line
// limit, cheap to cross, also at its documented size, here and through the
// binary (tests/e2e/input_limits_test.cpp).
#include "cli/input/config_input.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cli/errors.hpp"

using namespace dpb::cli;

namespace {

std::string error_of(std::istream& in, const InputLimits& limits = {}) {
  try {
    read_configs(in, "in.jsonl", limits);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const std::string& text, const InputLimits& limits = {}) {
  std::istringstream in(text);
  return error_of(in, limits);
}

/// An endless stream of `c` (an unterminated line on stdin).
class Endless : public std::streambuf {
 public:
  explicit Endless(char c) : block_(4096, c) {}
  std::size_t served = 0;

 protected:
  int_type underflow() override {
    served += block_.size();
    setg(block_.data(), block_.data(), block_.data() + block_.size());
    return traits_type::to_int_type(block_[0]);
  }

 private:
  std::string block_;
};

const std::string kLine =
    R"({"sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 100, "delta": 1e-5})";

}  // namespace

TEST_CASE("read_configs: lines, blank lines and a last line without newline") {
  std::istringstream in(kLine + "\n\n  \n" + kLine);
  const auto r = read_configs(in, "in.jsonl");
  REQUIRE(r.configs.size() == 2);
  CHECK(r.configs[0].line == 1);
  CHECK(r.configs[1].line == 4);
  CHECK(r.errors.empty());
}

TEST_CASE("read_configs: a line of exactly 1 MiB is read, one byte more is refused") {
  // Padding inside the object keeps the line valid JSON.
  std::string line = kLine;
  line.insert(1, std::string(kMaxLineBytes - line.size(), ' '));
  REQUIRE(line.size() == kMaxLineBytes);
  CHECK(error_of(line + "\n" + kLine + "\n").empty());
  CHECK(error_of(kLine + "\n " + line + "\n") == "--input: in.jsonl:2: line longer than 1 MiB");
}

TEST_CASE("read_configs: an endless line stops at the limit, not at the end of memory") {
  Endless buf('x');
  std::istream in(&buf);
  CHECK(error_of(in) == "--input: in.jsonl:1: line longer than 1 MiB");
  CHECK(buf.served <= kMaxLineBytes + 8192);
}

TEST_CASE("read_configs: the documented limits are the defaults") {
  const InputLimits limits;
  CHECK(limits.max_bytes == 64u * 1024 * 1024);
  CHECK(limits.max_line_bytes == 1024u * 1024);
  CHECK(limits.max_rows == 1'000'000);
}

TEST_CASE("read_configs: a line of exactly the line limit is read, one byte more is refused") {
  InputLimits limits;
  limits.max_line_bytes = 1024;
  std::string line = kLine;
  line.insert(1, std::string(limits.max_line_bytes - line.size(), ' '));
  REQUIRE(line.size() == limits.max_line_bytes);
  CHECK(error_of(line + "\n" + kLine + "\n", limits).empty());
  CHECK(error_of(kLine + "\n " + line + "\n", limits) ==
        "--input: in.jsonl:2: line longer than 1 KiB");
  Endless buf('x');
  std::istream in(&buf);
  CHECK(error_of(in, limits) == "--input: in.jsonl:1: line longer than 1 KiB");
  CHECK(buf.served <= limits.max_line_bytes + 4096);
}

TEST_CASE("read_configs: more than the file limit is refused") {
  // 65 lines of just under the line limit (blank lines of spaces count as bytes too).
  InputLimits limits;
  limits.max_bytes = 64u << 10;
  limits.max_line_bytes = 1u << 10;
  const std::string blank(limits.max_line_bytes - 1, ' ');
  std::string text;
  for (int i = 0; i < 64; ++i) text += blank + "\n";
  CHECK(text.size() == limits.max_bytes);
  CHECK(error_of(text, limits).empty());
  text += blank + "\n";
  CHECK(error_of(text, limits) == "--input: in.jsonl is larger than 64 KiB");
  // Stated in MiB when it is a whole number of them, as the documented 64 MiB.
  limits.max_bytes = 2u << 20;
  limits.max_line_bytes = 1u << 20;
  CHECK(error_of(std::string(3 * (1u << 20), '\n'), limits) ==
        "--input: in.jsonl is larger than 2 MiB");
}

TEST_CASE("read_configs: at most the row limit of configurations") {
  InputLimits limits;
  limits.max_rows = 1000;
  std::string text;
  for (std::size_t i = 0; i < limits.max_rows; ++i) text += "1\n";  // bad lines count too
  {
    std::istringstream in(text);
    const auto r = read_configs(in, "in.jsonl", limits);
    CHECK(r.errors.size() == limits.max_rows);
    CHECK(r.errors.back().line == limits.max_rows);
  }
  CHECK(error_of(text + "\n  \n", limits).empty());  // blank lines are not configurations
  CHECK(error_of(text + kLine + "\n", limits) ==
        "--input: in.jsonl has more than 1000 configurations");
  CHECK(error_of(text + "1\n", limits) == "--input: in.jsonl has more than 1000 configurations");
}

TEST_CASE("read_configs: a line nested too deeply is a line error, not a crash") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::istringstream in(deep + "\n" + kLine + "\n");
  const auto r = read_configs(in, "in.jsonl");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].line == 1);
  CHECK(r.errors[0].message.find("nested deeper") != std::string::npos);
  CHECK(r.configs.size() == 1);
}

namespace {

/// A stream served one byte at a time, counting the bytes taken: what a pipe
/// holds when its writer waits for an answer before writing more.
class OneByteAtATime : public std::streambuf {
 public:
  explicit OneByteAtATime(std::string text) : text_(std::move(text)) {}
  std::size_t taken = 0;

 protected:
  int_type underflow() override {
    if (taken == text_.size()) return traits_type::eof();
    setg(&text_[taken], &text_[taken], &text_[taken] + 1);
    return traits_type::to_int_type(text_[taken]);
  }
  int_type uflow() override {
    const int_type c = underflow();
    if (!traits_type::eq_int_type(c, traits_type::eof())) ++taken;
    setg(nullptr, nullptr, nullptr);
    return c;
  }

 private:
  std::string text_;
};

}  // namespace

TEST_CASE("for_each_config: each line is handed over before a byte of the next is read") {
  const std::string bad = R"({"sampling_rate": "0.01"})";
  const std::string text = kLine + "\n\n" + bad + "\n" + kLine + "\n";
  OneByteAtATime buf(text);
  std::istream in(&buf);
  std::vector<std::size_t> lines, taken;
  for_each_config(in, "<stdin>", kStreamedInputLimits, [&](ConfigRead read) {
    lines.push_back(std::holds_alternative<ConfigLine>(read) ? std::get<ConfigLine>(read).line
                                                             : std::get<InputError>(read).line);
    taken.push_back(buf.taken);
  });
  CHECK(lines == std::vector<std::size_t>{1, 3, 4});
  // Each line's newline is the last byte taken before it is handed over.
  CHECK(taken ==
        std::vector<std::size_t>{kLine.size() + 1, kLine.size() + 2 + bad.size() + 1, text.size()});
}

TEST_CASE("kStreamedInputLimits: one line is held, so only a line is bounded") {
  CHECK(kStreamedInputLimits.max_line_bytes == kMaxLineBytes);
  CHECK(kStreamedInputLimits.max_bytes == std::numeric_limits<std::size_t>::max());
  CHECK(kStreamedInputLimits.max_rows == std::numeric_limits<std::size_t>::max());
}

TEST_CASE("read_configs: a JSON syntax error names its column, a wrong type what was given") {
  // The comma missing before "noise_multiplier": the parser stops at its quote.
  const std::string no_comma = R"({"sampling_rate": 0.01 "noise_multiplier": 1.1})";
  const std::size_t column = no_comma.find("\"noise") + 1;
  std::istringstream in(no_comma + "\n" + R"({"sampling_rate": "0.01"})" + "\n" +
                        R"({"steps": [100]})" + "\n" + R"({"delta": 1})" + "\n" +
                        R"({"noise_multiplier": ")" + std::string(100, 'x') + "\"}\n");
  const auto r = read_configs(in, "in.jsonl");
  REQUIRE(r.errors.size() == 5);
  CHECK(r.errors[0].message.rfind("not valid JSON at column " + std::to_string(column) + ": ", 0) ==
        0);
  CHECK(r.errors[1].message == "sampling_rate: must be a number in [0, 1], got a string \"0.01\"");
  CHECK(r.errors[2].message == "steps: must be an integer >= 1, got an array");
  CHECK(r.errors[3].message == "delta: must be a number in (0, 1), got the number 1");
  // A long string is quoted up to kMaxQuotedBytes.
  CHECK(r.errors[4].message == "noise_multiplier: must be a finite number > 0, got a string \"" +
                                   std::string(kMaxQuotedBytes, 'x') + "\"...");
}

TEST_CASE("read_schedule: a syntax error in a JSON array names its line and column") {
  const std::string text = "[\n  {\"steps\": 100},\n  {\"steps\": 100,}\n]\n";
  std::istringstream in(text);
  std::string message;
  try {
    read_schedule(in, "phases.json");
  } catch (const UsageError& e) {
    message = e.what();
  }
  // Line 3, at the '}' after the trailing comma.
  const std::size_t column = std::string("  {\"steps\": 100,}").find('}') + 1;
  CHECK(message.rfind("--schedule: phases.json: not valid JSON at line 3, column " +
                          std::to_string(column) + ": ",
                      0) == 0);
}
