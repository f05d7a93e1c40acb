#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/number_format.hpp"
#include "report/render.hpp"

using namespace dpb::report;

TEST_CASE("text numbers round toward the safe side") {
  const double eps = 1.0354900660362967;
  CHECK(format_number(eps, 6, Rounding::up) == "1.0355");
  CHECK(format_number(eps, 6, Rounding::down) == "1.03549");
  CHECK(format_number(eps, 6, Rounding::nearest) == "1.03549");
  CHECK(format_number(123456789.0, 6, Rounding::up) == "1.23457e+08");
  CHECK(format_number(123456789.0, 6, Rounding::down) == "1.23456e+08");
  CHECK(format_number(1e-5, 6, Rounding::up) == "1e-05");
  CHECK(format_number(0.0, 6, Rounding::up) == "0");
  CHECK(format_number(std::numeric_limits<double>::infinity(), 6, Rounding::up) == "inf");
  // 9.999995 rounds up across a power of ten.
  CHECK(format_number(9.9999951, 6, Rounding::up) == "10");
  // Property: over many values the shown decimal is on the safe side.
  for (double v = 1e-7; v < 1e7; v *= 1.37) {
    CHECK(std::strtod(format_number(v, 4, Rounding::up).c_str(), nullptr) >= v);
    CHECK(std::strtod(format_number(v, 4, Rounding::down).c_str(), nullptr) <= v);
  }
}

TEST_CASE("shortest round-trip form for machines") {
  CHECK(format_shortest(1e-5) == "1e-05");
  CHECK(format_shortest(0.1) == "0.1");
  CHECK(std::strtod(format_shortest(1.0354900660362967).c_str(), nullptr) == 1.0354900660362967);
}

namespace {

Report sample() {
  Report r;
  r.command = "epsilon";
  r.inputs.add("sampling_rate", number(0.01)).add("steps", integer(10));
  r.results.push_back(
      Record{}
          .add("accountant", text("rdp"))
          .add("epsilon", number(std::numeric_limits<double>::infinity(), Rounding::up))
          .add("order", number(2)));
  r.results.push_back(
      Record{}.add("accountant", text("x,y")).add("epsilon", number(1.5, Rounding::up)));
  r.footnotes.push_back("* a footnote");
  return r;
}

}  // namespace

TEST_CASE("JSON: version, command, inputs, results, infinity as the string inf") {
  std::ostringstream out;
  render(sample(), Format::json, out);
  const auto j = nlohmann::json::parse(out.str());
  CHECK(j["command"] == "epsilon");
  CHECK(j["inputs"]["steps"] == 10);
  CHECK(j["results"][0]["epsilon"] == "inf");
  CHECK(j["results"][1]["epsilon"] == 1.5);
  CHECK(!j["results"][1].contains("order"));
}

TEST_CASE("text: inputs, aligned header and rows, footnotes") {
  std::ostringstream out;
  render(sample(), Format::text, out);
  CHECK(out.str() ==
        "sampling_rate  0.01\n"
        "steps          10\n"
        "\n"
        "accountant  epsilon  order\n"
        "rdp             inf      2\n"
        "x,y             1.5\n"
        "* a footnote\n");
}

TEST_CASE("markdown: the text layout as GitHub tables, every cell escaped") {
  Report r = sample();
  r.results.push_back(Record{}.add("accountant", text("a|b_c*")).add("epsilon", number(2)));
  std::ostringstream out;
  render(r, Format::markdown, out);
  CHECK(out.str() ==
        "| parameter | value |\n"
        "|---|---|\n"
        "| sampling\\_rate | 0.01 |\n"
        "| steps | 10 |\n"
        "\n"
        "| accountant | epsilon | order |\n"
        "|---|---:|---:|\n"
        "| rdp | inf | 2 |\n"
        "| x,y | 1.5 |  |\n"
        "| a\\|b\\_c\\* | 2 |  |\n"
        "\n"
        "- \\* a footnote\n");
  // The same columns as the text table (compact cells, not CSV's data cells).
  std::ostringstream text_out;
  render(r, Format::text, text_out);
  CHECK(text_out.str().find("accountant  epsilon  order") != std::string::npos);
}

TEST_CASE("CSV and JSON Lines") {
  std::ostringstream csv;
  render(sample(), Format::csv, csv);
  CHECK(csv.str() == "accountant,epsilon,order\nrdp,inf,2\n\"x,y\",1.5,\n");
  std::ostringstream jsonl;
  render(sample(), Format::jsonl, jsonl);
  CHECK(jsonl.str() ==
        "{\"accountant\":\"rdp\",\"epsilon\":\"inf\",\"order\":2.0}\n"
        "{\"accountant\":\"x,y\",\"epsilon\":1.5}\n");
}

TEST_CASE("pairs: a JSON array of [x, y] arrays, text (x,y) with y rounded as the cell says") {
  Report r;
  r.command = "tradeoff";
  r.results.push_back(Record{}.add(
      "points",
      pairs({{0.0, 1.0}, {0.5, 0.123456789}, {1.0, std::numeric_limits<double>::infinity()}},
            Rounding::down)));
  std::ostringstream json;
  render(r, Format::json, json);
  const auto j = nlohmann::json::parse(json.str());
  const auto& p = j["results"][0]["points"];
  REQUIRE(p.size() == 3);
  CHECK(p[0] == nlohmann::json::array({0.0, 1.0}));
  CHECK(p[1][1] == 0.123456789);
  CHECK(p[2][1] == "inf");
  std::ostringstream text;
  render(r, Format::text, text);
  CHECK(text.str() == "points\n(0,1) (0.5,0.123456) (1,inf)\n");
  std::ostringstream csv;
  render(r, Format::csv, csv);
  CHECK(csv.str() == "points\n\"(0,1) (0.5,0.123456789) (1,inf)\"\n");
}
