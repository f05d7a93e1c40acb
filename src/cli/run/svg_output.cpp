#include "cli/run/svg_output.hpp"

#include <fstream>
#include <sstream>

#include "cli/errors.hpp"
#include "cli/flags/output_flags.hpp"

namespace dpb::cli {

void write_svg(const report::Chart& chart, const std::string& path, std::ostream& out) {
  std::ostringstream svg;
  report::render_svg(chart, svg);
  if (path == "-") {
    write_out(out, svg.view());
    return;
  }
  std::ofstream file = open_output(path);
  write_out(file, svg.view(), "-o '" + path + "'");
  file.close();
  check_written(file, "-o '" + path + "'");
}

}  // namespace dpb::cli
