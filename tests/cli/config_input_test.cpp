// JSON Lines input (sweep --input): the documented limits (README, "Sweeps
// and the budget gate": 64 MiB per file, 1 MiB per line, 1,000,000
// configurations) end the read with a clean UsageError, and a line is never
// held in memory beyond its limit.
#include "cli/config_input.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <streambuf>
#include <string>

#include "cli/errors.hpp"

using namespace dpb::cli;

namespace {

std::string error_of(std::istream& in) {
  try {
    read_configs(in, "in.jsonl");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const std::string& text) {
  std::istringstream in(text);
  return error_of(in);
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

TEST_CASE("read_configs: more than 64 MiB is refused") {
  // 65 lines of just under 1 MiB (blank lines of spaces count as bytes too).
  std::string blank(kMaxLineBytes - 1, ' ');
  std::string text;
  for (int i = 0; i < 65; ++i) text += blank + "\n";
  CHECK(text.size() > kMaxInputBytes);
  CHECK(error_of(text) == "--input: in.jsonl is larger than 64 MiB");
}

TEST_CASE("read_configs: at most 1,000,000 configurations") {
  std::string text;
  text.reserve(3 * (kMaxInputRows + 1));
  for (std::size_t i = 0; i < kMaxInputRows; ++i) text += "1\n";  // bad lines count too
  {
    std::istringstream in(text);
    const auto r = read_configs(in, "in.jsonl");
    CHECK(r.errors.size() == kMaxInputRows);
    CHECK(r.errors.back().line == kMaxInputRows);
  }
  CHECK(error_of(text + "1\n") == "--input: in.jsonl has more than 1000000 configurations");
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
