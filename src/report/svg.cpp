#include "report/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace dpb::report {
namespace {

constexpr std::array<const char*, 8> kPalette = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                                 "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

std::string escape(const std::string& s) {
  std::string e;
  for (char c : s) {
    switch (c) {
      case '&':
        e += "&amp;";
        break;
      case '<':
        e += "&lt;";
        break;
      case '>':
        e += "&gt;";
        break;
      case '"':
        e += "&quot;";
        break;
      default:
        e += c;
    }
  }
  return e;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string tick_label(double v, bool log) {
  // A linear axis's 0 may come out of its arithmetic as 1e-17; a log axis's
  // ticks are powers of ten, never 0.
  if (!log && std::abs(v) < 1e-12) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// An axis: data range, scale, ticks.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;

  double fraction(double v) const {
    return log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
               : (v - lo) / (hi - lo);
  }
};

/// Linear ticks at 1, 2 or 5 times a power of ten, about five of them.
std::vector<double> linear_ticks(double& lo, double& hi) {
  const double raw = (hi - lo) / 5;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  lo = std::floor(lo / step + 1e-9) * step;
  hi = std::ceil(hi / step - 1e-9) * step;
  std::vector<double> ticks;
  for (double t = lo; t <= hi + step * 1e-6; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

/// Log ticks at powers of ten (and 2, 5 times them when the range is short).
/// The most decades a log axis labels (more are thinned to every k-th).
constexpr int kMaxDecadeTicks = 12;

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  const int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const bool dense = b - a <= 2;
  // At most about kMaxDecadeTicks decades labelled (a range down to 1e-300
  // would crowd hundreds of labels): every step-th decade.
  const int step = std::max(1, (b - a + kMaxDecadeTicks - 1) / kMaxDecadeTicks);
  for (int e = a; e <= b; e += step)
    for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double t = m * std::pow(10.0, e);
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) ticks.push_back(t);
    }
  return ticks;
}

Axis make_axis(const std::vector<double>& values, bool log, bool from_zero) {
  Axis axis;
  axis.log = log;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (log) {
    if (hi <= lo) {
      lo /= 2;
      hi *= 2;
    }
    // A range of a decade or more ends on whole decades, each one a tick.
    if (hi >= 10 * lo) {
      // A decade below the smallest double (10^-324) is 0: lo stays.
      const double decade = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
      if (decade > 0) lo = decade;
      hi = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
    }
    axis.lo = lo;
    axis.hi = hi;
    axis.ticks = log_ticks(lo, hi);
    return axis;
  }
  if (from_zero && lo >= 0) lo = 0;
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
  axis.ticks = linear_ticks(lo, hi);
  axis.lo = lo;
  axis.hi = hi;
  return axis;
}

bool drawable(double x, double y, const Chart& c) {
  return std::isfinite(x) && std::isfinite(y) && (!c.log_x || x > 0) && (!c.log_y || y > 0);
}

}  // namespace

double positive_span(const std::vector<Series>& series) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& s : series)
    for (double y : s.y)
      if (y > 0 && std::isfinite(y)) {
        lo = std::min(lo, y);
        hi = std::max(hi, y);
      }
  return hi > 0 ? hi / lo : 0;
}

void render_svg(const Chart& c, std::ostream& out) {
  std::vector<double> xs, ys;
  for (const auto& s : c.series)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (drawable(s.x[i], s.y[i], c)) {
        xs.push_back(s.x[i]);
        ys.push_back(s.y[i]);
      }
  if (xs.empty()) throw std::invalid_argument("plot: no finite point to draw");
  const Axis ax = make_axis(xs, c.log_x, false);
  const Axis ay = make_axis(ys, c.log_y, c.y_from_zero);

  const double left = 80, right = 24, top = c.title.empty() ? 24 : 48;
  const double bottom = 64 + 18.0 * static_cast<double>(c.caption.size());
  const double w = c.width, h = c.height;
  const double pw = w - left - right, ph = h - top - bottom;
  auto px = [&](double x) { return left + ax.fraction(x) * pw; };
  auto py = [&](double y) { return top + (1 - ay.fraction(y)) * ph; };

  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << c.width << "\" height=\""
      << c.height << "\" viewBox=\"0 0 " << c.width << ' ' << c.height
      << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!c.title.empty())
    out << "<text x=\"" << num(w / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
        << escape(c.title) << "</text>\n";

  // Grid, ticks and tick labels.
  out << "<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n";
  for (double t : ax.ticks)
    out << "<line x1=\"" << num(px(t)) << "\" y1=\"" << num(top) << "\" x2=\"" << num(px(t))
        << "\" y2=\"" << num(top + ph) << "\"/>\n";
  for (double t : ay.ticks)
    out << "<line x1=\"" << num(left) << "\" y1=\"" << num(py(t)) << "\" x2=\"" << num(left + pw)
        << "\" y2=\"" << num(py(t)) << "\"/>\n";
  out << "</g>\n<g fill=\"#333\">\n";
  for (double t : ax.ticks)
    out << "<text x=\"" << num(px(t)) << "\" y=\"" << num(top + ph + 18)
        << "\" text-anchor=\"middle\">" << tick_label(t, ax.log) << "</text>\n";
  for (double t : ay.ticks)
    out << "<text x=\"" << num(left - 8) << "\" y=\"" << num(py(t) + 4) << "\" text-anchor=\"end\">"
        << tick_label(t, ay.log) << "</text>\n";
  out << "</g>\n";
  out << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(pw)
      << "\" height=\"" << num(ph) << "\" fill=\"none\" stroke=\"#333\"/>\n";

  // Axis labels.
  out << "<text x=\"" << num(left + pw / 2) << "\" y=\"" << num(top + ph + 42)
      << "\" text-anchor=\"middle\" font-size=\"14\">" << escape(c.x_label) << "</text>\n";
  out << "<text transform=\"translate(20 " << num(top + ph / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"14\">" << escape(c.y_label)
      << "</text>\n";

  // The curves, clipped to the plot area; a non-drawable point breaks the line.
  out << "<clipPath id=\"plot-area\"><rect x=\"" << num(left) << "\" y=\"" << num(top)
      << "\" width=\"" << num(pw) << "\" height=\"" << num(ph) << "\"/></clipPath>\n";
  out << "<g clip-path=\"url(#plot-area)\" fill=\"none\" stroke-width=\"2\">\n";
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const auto& s = c.series[k];
    std::string d;
    bool pen_down = false;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!drawable(s.x[i], s.y[i], c)) {
        pen_down = false;
        continue;
      }
      d += (pen_down ? " L" : (d.empty() ? "M" : " M")) + num(px(s.x[i])) + ' ' + num(py(s.y[i]));
      pen_down = true;
    }
    if (d.empty()) continue;
    out << "<path d=\"" << d << "\" stroke=\"" << kPalette[k % kPalette.size()] << '"'
        << (s.dashed ? " stroke-dasharray=\"6 4\"" : "") << "/>\n";
  }
  out << "</g>\n";

  // Legend, top left inside the plot area.
  const double lx = left + 12, ly = top + 12;
  double legend_width = 0;
  for (const auto& s : c.series)
    legend_width = std::max(legend_width, 7.0 * static_cast<double>(s.label.size()));
  out << "<g>\n<rect x=\"" << num(lx) << "\" y=\"" << num(ly) << "\" width=\""
      << num(legend_width + 48) << "\" height=\""
      << num(8 + 18.0 * static_cast<double>(c.series.size()))
      << "\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#999\"/>\n";
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const double y = ly + 16 + 18.0 * static_cast<double>(k);
    out << "<line x1=\"" << num(lx + 8) << "\" y1=\"" << num(y - 4) << "\" x2=\"" << num(lx + 32)
        << "\" y2=\"" << num(y - 4) << "\" stroke=\"" << kPalette[k % kPalette.size()]
        << "\" stroke-width=\"2\"" << (c.series[k].dashed ? " stroke-dasharray=\"6 4\"" : "")
        << "/>\n<text x=\"" << num(lx + 40) << "\" y=\"" << num(y) << "\">"
        << escape(c.series[k].label) << "</text>\n";
  }
  out << "</g>\n";

  // Caption: the inputs.
  for (std::size_t i = 0; i < c.caption.size(); ++i)
    out << "<text x=\"" << num(left) << "\" y=\""
        << num(top + ph + 64 + 18.0 * static_cast<double>(i)) << "\" fill=\"#555\">"
        << escape(c.caption[i]) << "</text>\n";
  out << "</svg>\n";
}

}  // namespace dpb::report
