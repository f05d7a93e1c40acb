// Fuzzes the two line readers of user files with one input (libFuzzer's
// coverage feedback evolves inputs for both; tests/fuzz/jsonl.dict holds
// every JSON Lines key and choice word, tested against config_keys()):
//  - JSON Lines sweep input (read_configs): every line is either a
//    configuration or an InputError with its line number and one line of
//    message; a key given twice, a null and an unknown key (with its "did you
//    mean" naming a real key) are errors of their line; a limit exceeded is a
//    UsageError; nothing else may escape.
//  - `audit --scores` lines (read_scores): finite scores with their labels,
//    or one UsageError "--scores: ..."; the audit of a small valid input
//    gives a lower bound in [0, inf].
//  - `--schedule` phases (read_schedule): at least one and at most kMaxPhases
//    phases, or one UsageError "--schedule: ...".
// Every message and name, as shown (report::escape_control), holds no
// control character, so echoed input cannot drive a terminal.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/risk/audit.hpp"
#include "cli/errors.hpp"
#include "cli/input/config_input.hpp"
#include "cli/input/scores_input.hpp"
#include "fuzz_util.hpp"
#include "report/render.hpp"

namespace {

/// Scores audited in full (every distinct threshold) per input: enough to
/// exercise the search, few enough to keep the fuzzer fast.
constexpr std::size_t kMaxAuditedScores = 256;

/// Whether `text` as shown has a C0 control, DEL or a C1 control (U+0080..U+009F
/// in UTF-8) left, or is more than one line.
bool shows_control(const std::string& text) {
  const std::string shown = dpb::report::escape_control(text);
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const auto c = static_cast<unsigned char>(shown[i]);
    if (c < 0x20 || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < shown.size()) {
      const auto d = static_cast<unsigned char>(shown[i + 1]);
      if (d >= 0x80 && d <= 0x9f) return true;
    }
  }
  return false;
}

void check_shown(const char* what, const std::string& text) {
  if (shows_control(text)) dpb::fuzz::fail(what, text);
}

void fuzz_configs(const std::string& text, std::size_t lines) {
  std::istringstream in(text);
  dpb::cli::ConfigInput input;
  try {
    input = dpb::cli::read_configs(in, "fuzz.jsonl");
  } catch (const dpb::cli::UsageError& e) {
    check_shown("limit message shows a control character", e.what());
    return;
  }
  const auto keys = dpb::cli::config_keys();
  for (const auto& c : input.configs) {
    if (c.line < 1 || c.line > lines) dpb::fuzz::fail("config line number", std::to_string(c.line));
    if (c.name) check_shown("name shows a control character", *c.name);
  }
  for (const auto& e : input.errors) {
    if (e.line < 1 || e.line > lines) dpb::fuzz::fail("error line number", std::to_string(e.line));
    if (e.message.empty()) dpb::fuzz::fail("empty error message", text);
    check_shown("error message shows a control character", e.message);
    // "KEY: unknown key; did you mean K?" names a key a line may hold. KEY is
    // the input's own text (it may hold these words too): the message's part
    // starts at the last ": unknown key" (the allowed list after it holds only
    // key names).
    const std::string_view m = e.message;
    constexpr std::string_view kUnknown = ": unknown key", kNear = "; did you mean ";
    const auto unknown = m.rfind(kUnknown);
    const auto at = unknown == std::string_view::npos ? unknown : unknown + kUnknown.size();
    if (at != std::string_view::npos && m.substr(at, kNear.size()) == kNear) {
      const auto start = at + kNear.size();
      const auto end = m.find('?', start);
      const std::string near(m.substr(start, end - start));
      if (end == std::string_view::npos || std::find(keys.begin(), keys.end(), near) == keys.end())
        dpb::fuzz::fail("did you mean names no key", e.message);
    }
  }
}

void fuzz_scores(const std::string& text, std::size_t lines) {
  std::istringstream in(text);
  std::vector<dpb::Scored> scores;
  try {
    scores = dpb::cli::read_scores(in, "fuzz.csv");
  } catch (const dpb::cli::UsageError& e) {
    const std::string m = e.what();
    if (m.rfind("--scores: ", 0) != 0) dpb::fuzz::fail("scores message names no flag", m);
    check_shown("scores message shows a control character", m);
    return;
  }
  if (scores.empty() || scores.size() > lines) dpb::fuzz::fail("scores count", text);
  bool member = false, non_member = false;
  for (const auto& s : scores) {
    if (!std::isfinite(s.score)) dpb::fuzz::fail("score not finite", text);
    (s.member ? member : non_member) = true;
  }
  if (!member || !non_member || scores.size() > kMaxAuditedScores) return;
  const dpb::ThresholdAudit a = dpb::audit_scores(scores, 0.95, 0);
  if (!(a.bound.epsilon_lower >= 0)) dpb::fuzz::fail("audit lower bound below 0 or NaN", text);
}

void fuzz_schedule(const std::string& text) {
  std::istringstream in(text);
  std::vector<dpb::cli::PhaseInput> phases;
  try {
    phases = dpb::cli::read_schedule(in, "fuzz.json");
  } catch (const dpb::cli::UsageError& e) {
    const std::string m = e.what();
    if (m.rfind("--schedule: ", 0) != 0) dpb::fuzz::fail("schedule message names no flag", m);
    check_shown("schedule message shows a control character", m);
    return;
  }
  if (phases.empty() || phases.size() > dpb::cli::kMaxPhases)
    dpb::fuzz::fail("schedule phase count", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n';
  fuzz_configs(text, lines);
  fuzz_scores(text, lines);
  fuzz_schedule(text);
  return 0;
}
