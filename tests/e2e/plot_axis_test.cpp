// `dpbudget plot` chooses its epsilon axis (issue 13, point 7): logarithmic
// when the curves' positive ε span more than 30x (composition's thousands
// beside RDP's units), linear otherwise or with --linear-y; the axis is named
// in the label and caption, and points a log axis cannot show are named.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run.hpp"

using dpb::test::check_refused;
using dpb::test::run_dpbudget;
using dpb::test::run_dpbudget_args;

namespace {

/// The SVG `plot` writes to stdout with these flags (after the run's inputs).
std::string plot(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"plot", "--delta", "1e-5", "-o", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_dpbudget_args(args);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  REQUIRE(r.out.rfind("<?xml", 0) == 0);
  return r.out;
}

bool has_text(const std::string& svg, const std::string& text) {
  return svg.find(">" + text + "</text>") != std::string::npos;
}

/// The y pixel coordinates of the curve drawn in `colour` ("M x y L x y ...").
std::vector<double> curve_ys(const std::string& svg, const std::string& colour) {
  const auto stroke = svg.find("\" stroke=\"" + colour + "\"");
  REQUIRE(stroke != std::string::npos);
  const auto start = svg.rfind("<path d=\"", stroke) + 9;
  const std::string d = svg.substr(start, stroke - start);
  std::vector<double> ys;
  const char* p = d.c_str();
  while (*p) {
    while (*p == ' ' || *p == 'M' || *p == 'L') ++p;
    if (!*p) break;
    char* end = nullptr;
    std::strtod(p, &end);  // x
    ys.push_back(std::strtod(end, &end));
    p = end;
  }
  return ys;
}

double height(const std::vector<double>& ys) {
  const auto [lo, hi] = std::minmax_element(ys.begin(), ys.end());
  return *hi - *lo;
}

constexpr const char* kRdpColour = "#1f77b4";  // the first series
/// Plot height in pixels (500 - margins) is 316; a curve drawn "flat at 0"
/// moves by less than this, a readable one by far more.
constexpr double kFlat = 12;

}  // namespace

TEST_CASE("plot --accountant all: composition's thousands beside RDP's units get a log axis") {
  // The run (-q 0.01 --sigma 1 --steps 1:10000), at few points.
  const std::vector<std::string> run = {
      "-q", "0.01", "--sigma", "1", "--steps", "1:10000", "--points", "6", "--accountant", "all"};
  const std::string svg = plot(run);
  CHECK(has_text(svg, "epsilon at delta = 1e-05 (log scale)"));
  CHECK(svg.find(">epsilon axis: logarithmic (the curves span ") != std::string::npos);
  CHECK(svg.find("x; --linear-y for a linear axis)</text>") != std::string::npos);
  // Decade ticks from below the smallest ε (gdp at 1 step, 0.037) to above
  // the largest (composition at 10^4 steps, 6289).
  for (const char* tick : {"0.01", "0.1", "1", "10", "100", "1000", "10000"})
    CHECK_MESSAGE(
        svg.find("text-anchor=\"end\">" + std::string(tick) + "</text>") != std::string::npos,
        tick);
  // RDP (1 to 6.7) is a curve, not a line at 0.
  CHECK(height(curve_ys(svg, kRdpColour)) > 3 * kFlat);

  // --linear-y forces a linear axis: there RDP is flat against composition.
  std::vector<std::string> linear = run;
  linear.push_back("--linear-y");
  const std::string flat = plot(linear);
  CHECK(has_text(flat, "epsilon at delta = 1e-05"));
  CHECK(has_text(flat, "epsilon axis: linear (--linear-y)"));
  CHECK(height(curve_ys(flat, kRdpColour)) < kFlat);
}

TEST_CASE("plot: curves within 30x of each other keep a linear axis") {
  const std::string svg =
      plot({"-q", "0.01", "--sigma", "1", "--steps", "100:1000", "--points", "5"});
  CHECK(has_text(svg, "epsilon at delta = 1e-05"));
  CHECK(has_text(svg, "epsilon axis: linear (the curves span at most 30x)"));
  CHECK(svg.find("log scale") == std::string::npos);
  // --log-y still forces a log axis.
  const std::string log =
      plot({"-q", "0.01", "--sigma", "1", "--steps", "100:1000", "--points", "5", "--log-y"});
  CHECK(has_text(log, "epsilon axis: logarithmic (--log-y)"));
  CHECK(has_text(log, "epsilon at delta = 1e-05 (log scale)"));
}

TEST_CASE("plot: a log axis leaves out epsilon = 0 and says so, inf is left out on any axis") {
  // q = 1e-4, σ = 8: one step is ε = 0 (the KL shortcut, docs/rdp.md#kl-shortcut).
  const std::string zero =
      plot({"-q", "1e-4", "--sigma", "8", "--steps", "1:2", "--points", "2", "--log-y"});
  CHECK(has_text(zero, "not drawn: 1 point with epsilon = 0 (rdp): a log axis has no 0"));
  // On a linear axis 0 is drawn.
  const std::string lin = plot({"-q", "1e-4", "--sigma", "8", "--steps", "1:2", "--points", "2"});
  CHECK(lin.find("not drawn") == std::string::npos);
  // σ = 0.001: gdp and pld are inf (PLD's grid cannot hold it).
  const std::string inf = plot(
      {"-q", "0.5", "--sigma", "0.001", "--steps", "1:3", "--points", "3", "--accountant", "all"});
  CHECK(has_text(inf, "not drawn: 6 points with epsilon = inf (gdp, pld)"));
}

TEST_CASE("plot: --log-y with --linear-y, or with nothing above 0, is a usage error") {
  // Each message begins with what it is about, right after "dpbudget: error: ".
  check_refused({"plot", "-q", "0.01", "--sigma", "1", "--steps", "1:10", "--delta", "1e-5",
                 "--log-y", "--linear-y", "-o", "-"},
                {"dpbudget: error: --linear-y"});
  check_refused({"plot", "-q", "1e-6", "--sigma", "10", "--steps", "1:2", "--points", "2",
                 "--delta", "1e-5", "--accountant", "rdp", "--log-y", "-o", "-"},
                {"dpbudget: error: --log-y: no finite epsilon > 0"});
  check_refused({"plot", "-q", "0.5", "--sigma", "0.001", "--steps", "1:3", "--delta", "1e-5",
                 "--accountant", "pld", "-o", "-"},
                {"dpbudget: error: nothing to draw"});
  CHECK(run_dpbudget({"plot", "--help"}).out.find("--linear-y") != std::string::npos);
}
