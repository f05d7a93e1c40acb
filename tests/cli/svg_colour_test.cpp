#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "report/render.hpp"
#include "report/svg.hpp"

using namespace dpb::report;

TEST_CASE("colour only on a terminal, never with NO_COLOR (non-empty) or TERM=dumb") {
  CHECK(colour_wanted(true, nullptr, "xterm-256color"));
  CHECK(colour_wanted(true, "", "xterm"));  // empty NO_COLOR does not count
  CHECK(colour_wanted(true, nullptr, nullptr));
  CHECK_FALSE(colour_wanted(false, nullptr, "xterm"));
  CHECK_FALSE(colour_wanted(true, "1", "xterm"));
  CHECK_FALSE(colour_wanted(true, nullptr, "dumb"));
}

TEST_CASE("text tables: bold header only with colour, footnote markers per distinct note") {
  Report r;
  r.results.push_back(Record().add("bound", text("upper")));
  r.results.push_back(Record().add("bound", with_footnote(text("approximate"), "not a bound")));
  std::ostringstream plain, bold;
  render(r, Format::text, plain);
  render(r, Format::text, bold, TextStyle{6, true});
  CHECK(plain.str() == "bound\nupper\napproximate*\n* not a bound\n");
  CHECK(bold.str() == "\033[1mbound\033[0m\nupper\napproximate*\n* not a bound\n");
  std::ostringstream csv;
  render(r, Format::csv, csv);
  CHECK(csv.str() == "bound\nupper\napproximate\n");
}

TEST_CASE("svg: series become paths, non-finite points break the line, escaping") {
  Chart c;
  c.x_label = "x <a&b>";
  c.y_label = "y";
  c.series.push_back({"one", {0, 0.5, 1}, {0, 1, 0.25}});
  c.series.push_back({"two", {0, 0.5, 1}, {1, std::numeric_limits<double>::infinity(), 0}, true});
  std::ostringstream out;
  render_svg(c, out);
  const std::string svg = out.str();
  CHECK(svg.find("x &lt;a&amp;b&gt;") != std::string::npos);
  CHECK(svg.find("<path d=\"M") != std::string::npos);
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
  // The second series has two pieces: M ... M ...
  const auto second = svg.find("<path", svg.find("<path") + 1);
  const auto end = svg.find("/>", second);
  const std::string d = svg.substr(second, end - second);
  CHECK(d.find(" M") != std::string::npos);
  CHECK(d.find(" L") == std::string::npos);

  Chart empty;
  empty.series.push_back({"none", {1}, {std::nan("")}});
  std::ostringstream sink;
  CHECK_THROWS_AS(render_svg(empty, sink), std::invalid_argument);
}
