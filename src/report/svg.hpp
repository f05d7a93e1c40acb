#pragma once
// A self-contained SVG line chart: pure rendering of (x, y) series, no maths
// beyond placing them. Used by `dpbudget plot` (epsilon against steps) and
// meant for any verb that draws curves (e.g. a trade-off curve, x and y in
// [0, 1]).
#include <ostream>
#include <string>
#include <vector>

namespace dpb::report {

/// One curve. Points with a non-finite y (or x <= 0 on a log axis) are left
/// out and break the line there.
struct Series {
  std::string label;  ///< shown in the legend
  std::vector<double> x, y;
  bool dashed = false;  ///< e.g. for an approximation
};

struct Chart {
  std::string title;
  std::string x_label, y_label;
  std::vector<std::string> caption;  ///< lines under the chart: the inputs
  std::vector<Series> series;
  bool log_x = false;
  bool log_y = false;
  bool y_from_zero = true;  ///< the y axis starts at 0 when all y >= 0
  int width = 800, height = 500;
};

/// Curves whose positive y span more than this factor want a log y axis: on a
/// linear axis a curve 30× below the top one stays within ~3% of the plot
/// height (about 12 pixels), a flat line at 0.
inline constexpr double kAutoLogSpan = 30;

/// max/min of the positive finite y over every series (0 when there are none).
double positive_span(const std::vector<Series>& series);

/// Whether the series' span calls for a log y axis (kAutoLogSpan).
inline bool wants_log_y(const std::vector<Series>& series) {
  return positive_span(series) > kAutoLogSpan;
}

/// Writes `chart` as one SVG document (UTF-8, no external references):
/// axes with ticks and labels, a legend, the caption. Throws
/// std::invalid_argument when no series has a drawable point.
void render_svg(const Chart& chart, std::ostream& out);

}  // namespace dpb::report
