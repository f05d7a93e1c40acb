#pragma once
// Writing a chart for `-o FILE` (or `-o -` for stdout), shared by the verbs
// that draw.
#include <ostream>
#include <string>

#include "report/svg.hpp"

namespace dpb::cli {

/// Renders `chart` to a buffer first, then writes it whole to `path` ("-":
/// `out`). Throws UsageError naming -o when the file cannot be written.
void write_svg(const report::Chart& chart, const std::string& path, std::ostream& out);

}  // namespace dpb::cli
