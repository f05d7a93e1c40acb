#pragma once
#include <ostream>
#include <string_view>

#include "report/record.hpp"

namespace dpb::report {

enum class Format { text, json, jsonl, csv };

struct TextStyle {
  int digits = 6;  ///< significant digits; 0 = the exact double (shortest round-trip form)
};

/// Text: the inputs as `name  value` lines, a blank line, an aligned table
/// with a header, then footnotes. CSV: a header row and the result columns.
/// JSON: {"version", "command", "inputs", "results"}. JSON Lines: one result
/// object per line. JSON numbers are the exact doubles (shortest round-trip
/// form); infinities are the string "inf".
void render(const Report& report, Format format, std::ostream& out, const TextStyle& style = {});

/// One result as a single JSON line (for streaming JSON Lines).
void render_json_line(const Record& record, std::ostream& out);

}  // namespace dpb::report
