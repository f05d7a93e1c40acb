#include <doctest/doctest.h>

#include <boost/multiprecision/cpp_bin_float.hpp>
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

TEST_CASE("shortest decimals of bounds lie on the safe side, exactly") {
  // The double nearest 0.1 is 0.1000000000000000055511151231257827...: "0.1"
  // lies below it, so an upper bound prints the shortest decimal of the next
  // double up, and a lower bound "0.1".
  CHECK(compare_decimal("0.1", 0.1) < 0);
  CHECK(compare_decimal("0.5", 0.5) == 0);
  CHECK(compare_decimal("-0.1", -0.1) > 0);
  CHECK(compare_decimal("1e-05", 1e-5) < 0);  // 1e-5 as a double is 1.0000000000000000818e-05
  // 0.1 + 0.2 is 0.3000000000000000444089209850062616...
  CHECK(compare_decimal("0.30000000000000004", 0.1 + 0.2) < 0);
  CHECK(compare_decimal("0.30000000000000005", 0.1 + 0.2) > 0);
  CHECK(format_shortest_directed(0.1, Rounding::up) == "0.10000000000000002");
  CHECK(format_shortest_directed(0.1, Rounding::down) == "0.1");
  CHECK(format_shortest_directed(0.1, Rounding::nearest) == "0.1");
  CHECK(format_shortest_directed(0.5, Rounding::up) == "0.5");
  CHECK(format_shortest_directed(std::numeric_limits<double>::infinity(), Rounding::up) == "inf");
  // Property, against a 200-digit binary reading of the printed decimal (exact
  // enough: a 17-digit decimal and a double differ by ≥ ~1e-27 relative unless equal).
  using Big = boost::multiprecision::number<boost::multiprecision::cpp_bin_float<200>>;
  double v = 1e-300;
  for (int i = 0; i < 3000; ++i, v *= 1.2345678901234567) {
    const std::string up = format_shortest_directed(v, Rounding::up);
    const std::string down = format_shortest_directed(v, Rounding::down);
    CAPTURE(v);
    CAPTURE(up);
    CAPTURE(down);
    CHECK(Big(up) >= Big(v));
    CHECK(Big(down) <= Big(v));
    // Each reads back as v or as its neighbour on the safe side.
    const double u = std::strtod(up.c_str(), nullptr), d = std::strtod(down.c_str(), nullptr);
    CHECK((u == v || u == std::nextafter(v, 1e308)));
    CHECK((d == v || d == std::nextafter(v, 0.0)));
  }
}

TEST_CASE("JSON and CSV print an upper bound's decimal at or above the double") {
  Report r;
  r.command = "t";
  r.results.push_back(Record{}
                          .add("upper", number(0.1, Rounding::up))
                          .add("lower", number(0.1, Rounding::down))
                          .add("input", number(0.1)));
  std::ostringstream json, csv;
  render(r, Format::json, json);
  render(r, Format::csv, csv);
  const auto doc = nlohmann::json::parse(json.str());
  CHECK(doc["results"][0]["upper"].get<double>() == std::nextafter(0.1, 1.0));
  CHECK(doc["results"][0]["lower"].get<double>() == 0.1);
  CHECK(doc["results"][0]["input"].get<double>() == 0.1);
  CHECK(csv.str().find("0.10000000000000002,0.1,0.1") != std::string::npos);
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
  // Rounded down: the decimal 0.123456789 lies above the double nearest it
  // (0.12345678899999999733...), so the next double down is printed.
  CHECK(p[1][1] == std::nextafter(0.123456789, 0.0));
  CHECK(p[1][0] == 0.5);  // x is an input, as given
  CHECK(p[2][1] == "inf");
  std::ostringstream text;
  render(r, Format::text, text);
  CHECK(text.str() == "points\n(0,1) (0.5,0.123456) (1,inf)\n");
  std::ostringstream csv;
  render(r, Format::csv, csv);
  CHECK(csv.str() == "points\n\"(0,1) (0.5,0.12345678899999998) (1,inf)\"\n");
}

TEST_CASE("JSON written row by row is nlohmann's whole document, in every shape") {
  // What nlohmann::ordered_json prints for the document built whole (the
  // layout render() printed before it wrote rows one at a time).
  const auto whole = [](const Report& r) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::object();
    const auto parsed = nlohmann::ordered_json::parse([&] {
      std::ostringstream out;
      render(r, Format::json, out);
      return out.str();
    }());
    doc["version"] = parsed["version"];
    doc["command"] = r.command;
    doc["inputs"] = parsed["inputs"];
    doc["results"] = parsed["results"];
    if (!r.footnotes.empty()) doc["notes"] = r.footnotes;
    return doc.dump(2) + "\n";
  };
  Report empty;
  empty.command = "sweep";
  Report nested = sample();
  nested.results.push_back(
      Record{}
          .add("points", pairs({{0.0, 1.0}, {1.0, 0.0}}))
          .add("spec", json(R"({"gaussian":{"noise_multiplier":1,"empty":{},"list":[]}})"))
          .add("ok", boolean(true)));
  for (const Report& r : {empty, sample(), nested}) {
    std::ostringstream rows;
    JsonWriter writer(r.command, r.inputs);
    for (const auto& record : r.results) writer.add(record, rows);
    writer.finish(r.footnotes, rows);
    std::ostringstream rendered;
    render(r, Format::json, rendered);
    CHECK(rows.str() == rendered.str());
    CHECK(rows.str() == whole(r));
  }
  // An empty document, spelled out.
  std::ostringstream out;
  JsonWriter(empty.command, empty.inputs).finish({}, out);
  CHECK(out.str().find("\"inputs\": {},\n  \"results\": []\n}\n") != std::string::npos);
}

TEST_CASE("text and Markdown in blocks: each block the table of its rows, markers shared") {
  Report r = sample();
  r.results.clear();
  for (int i = 1; i <= 5; ++i) {
    Cell eps = number(i * 1.5, Rounding::up);
    if (i % 2 == 0) eps = with_footnote(eps, "an even row");
    r.results.push_back(
        Record{}.add("accountant", hoisted(text(i <= 2 ? "rdp" : "pld"))).add("epsilon", eps));
  }
  r.footnotes = {"note: the last line"};
  for (const Format format : {Format::text, Format::markdown}) {
    CAPTURE(static_cast<int>(format));
    std::ostringstream blocks;
    TableWriter writer(format, r.inputs, TextStyle{}, 2);
    for (const auto& record : r.results) writer.add(record, blocks);
    writer.finish(r.footnotes, blocks);
    // Expected: each block rendered alone (inputs only above the first),
    // a blank line between blocks, then the markers' notes and footnotes.
    std::string expected;
    for (std::size_t first = 0; first < 5; first += 2) {
      Report part;
      if (first == 0) part.inputs = r.inputs;
      part.results.assign(
          r.results.begin() + static_cast<std::ptrdiff_t>(first),
          r.results.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(first + 2, 5)));
      std::ostringstream one;
      render(part, format, one);
      std::string table = one.str();
      // Its note, with the marker every block shares, goes after the last block.
      const std::string note = format == Format::text ? "* an even row\n" : "\n- \\* an even row\n";
      if (const auto at = table.rfind(note); at != std::string::npos) table.erase(at);
      expected += (first ? "\n" : "") + table;
    }
    expected += format == Format::text ? "* an even row\nnote: the last line\n"
                                       : "\n- \\* an even row\n- note: the last line\n";
    CHECK(blocks.str() == expected);
  }
  // The first block holds the inputs and the column all its rows share.
  std::ostringstream text;
  TableWriter writer(Format::text, r.inputs, TextStyle{}, 2);
  for (const auto& record : r.results) writer.add(record, text);
  CHECK(text.str().rfind("sampling_rate  0.01\nsteps          10\naccountant     rdp\n\nepsilon\n",
                         0) == 0);
}

TEST_CASE("CSV with a known header: a row with another column is refused, never misplaced") {
  const CsvWriter csv({"accountant", "epsilon", "order"});
  std::ostringstream out;
  csv.header(out);
  for (const auto& record : sample().results) csv.add(record, out);
  std::ostringstream rendered;
  render(sample(), Format::csv, rendered);
  CHECK(out.str() == rendered.str());
  CHECK_THROWS_AS(csv.add(Record{}.add("mu", number(1)), out), std::invalid_argument);
  // A compact text cell is not data: no column needed.
  CHECK_NOTHROW(csv.add(Record{}.add("details", visible(text("x"), Show::compact)), out));
}
