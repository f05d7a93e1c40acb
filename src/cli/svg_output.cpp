#include "cli/svg_output.hpp"

#include <fstream>
#include <sstream>

#include "cli/errors.hpp"

namespace dpb::cli {

void write_svg(const report::Chart& chart, const std::string& path, std::ostream& out) {
  std::ostringstream svg;
  report::render_svg(chart, svg);
  if (path == "-") {
    out << svg.str();
    return;
  }
  std::ofstream file(path, std::ios::binary);
  file << svg.str();
  file.close();
  if (!file) throw UsageError("-o: cannot write '" + path + "'");
}

}  // namespace dpb::cli
