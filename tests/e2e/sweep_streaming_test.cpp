// A sweep's output in flat memory (issue 26, item 4), through the built
// binary: rows reach stdout while later rows are still being computed, in
// every format; a long JSON sweep is still one valid document with every
// row; long text is printed as tables that each read as a sweep of their
// rows alone; CSV's header is every column any row has; the CSV spool lives
// in TMPDIR and its failures exit 5 with one line.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"

using dpb::test::dpbudget_binary;
using dpb::test::kWriteFailed;
using dpb::test::run_dpbudget;
using dpb::test::run_shell;
using dpb::test::shell_quote;
using OrderedJson = nlohmann::ordered_json;

namespace {

/// Rows a sweep holds before it writes text, Markdown or JSON
/// (docs/guide.md#sweeps-and-the-budget-gate; written out, not taken from src/cli/verbs/sweep.cpp).
constexpr std::size_t kHeldRows = 1000;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The fields of one CSV line (RFC 4180 quoting).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

/// The objects of JSON Lines output, keys in the order written.
std::vector<OrderedJson> ordered_lines(const std::string& text) {
  std::vector<OrderedJson> out;
  for (const auto& line : lines_of(text))
    if (!line.empty()) out.push_back(OrderedJson::parse(line));
  return out;
}

/// A scratch directory of this test process, made empty.
std::string scratch_dir(const std::string& tag) {
  const std::string dir = "/tmp/dpbudget_e2e_stream_" + std::to_string(::getpid()) + "_" + tag;
  run_shell("rm -rf " + shell_quote(dir) + " && mkdir -p " + shell_quote(dir));
  return dir;
}

/// JSON Lines configurations, one per steps value in [1, n].
std::string configs(int n) {
  std::string text;
  for (int t = 1; t <= n; ++t)
    text += R"({"sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": )" + std::to_string(t) +
            R"(, "delta": 1e-5})"
            "\n";
  return text;
}

}  // namespace

TEST_CASE("sweep rows reach stdout while later rows are computed, in every format") {
  // sigma 1 at q 0.01 over steps 1..3000: epsilon grows with the steps, so
  // with the budget set to row 2500's epsilon (the epsilon verb's), rows
  // 2501.. are over and named on stderr as the sweep reaches them. With
  // stdout and stderr in one file, the rows written before that message are
  // the rows that were out before the sweep ended: at least the first two
  // tables of kHeldRows rows (a format that held every row, or spooled it,
  // would show none).
  const auto eps = run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "2500",
                                 "--delta", "1e-5", "--accountant", "rdp", "--format", "json"});
  REQUIRE(eps.status == 0);
  char budget[40];
  std::snprintf(budget, sizeof budget, "%.17g",
                OrderedJson::parse(eps.out)["results"][0]["epsilon"].get<double>());
  const std::string dir = scratch_dir("order");
  for (const std::string format : {"text", "markdown", "json", "jsonl", "csv"}) {
    INFO(format);
    const std::string file = dir + "/both";
    const auto r =
        run_shell("{ " + shell_quote(dpbudget_binary()) +
                  " sweep -q 0.01 --sigma 1 --steps 1:3000 --delta 1e-5 --accountant "
                  "rdp --max-epsilon " +
                  budget + " --format " + format + " >" + shell_quote(file) + " 2>&1; }");
    CHECK(r.status == 1);
    const std::string both = dpb::test::slurp(file);
    const auto first_message = both.find("dpbudget: budget exceeded: row ");
    REQUIRE(first_message != std::string::npos);
    CHECK(both.compare(first_message, 36, "dpbudget: budget exceeded: row 2501,") == 0);
    // Rows before it: lines that hold the row's steps as a number (text: a
    // right-aligned steps column; JSON: "steps": t; CSV: ,t,).
    std::size_t rows_before = 0;
    for (const auto& line : lines_of(both.substr(0, first_message))) {
      if (format == "csv" || format == "jsonl")
        rows_before += line.find("poisson") != std::string::npos;
      else if (format == "json")
        rows_before += line.find("\"steps\": ") != std::string::npos;
      else if (format == "text")
        rows_before += line.find("order ") != std::string::npos;
      else
        rows_before += line.rfind("| ", 0) == 0 && line.find("order ") != std::string::npos;
    }
    CHECK(rows_before >= 2 * kHeldRows);
    // Every row is there in the end, and the summary last.
    CHECK(both.find("dpbudget: 500 of 3000 rows over budget; first at row 2501\n") !=
          std::string::npos);
  }
  run_shell("rm -rf " + shell_quote(dir));
}

TEST_CASE("a long JSON sweep is one valid document: every row, as JSON Lines gives it") {
  // 3 x 900 = 2700 rows, past the rows held before writing.
  const std::vector<std::string> run{"sweep",      "-q",           "0.01",  "--sigma",
                                     "0.8,1.1,40", "--steps",      "1:900", "--delta",
                                     "1e-5,1e-8",  "--accountant", "rdp"};
  auto json = run;
  json.insert(json.end(), {"--format", "json"});
  auto jsonl = run;
  jsonl.insert(jsonl.end(), {"--format", "jsonl"});
  const auto doc = run_dpbudget(json);
  const auto lines = run_dpbudget(jsonl);
  REQUIRE(doc.status == 0);
  REQUIRE(lines.status == 0);
  const OrderedJson j = OrderedJson::parse(doc.out);  // throws on a document that is not valid JSON
  CHECK(j["command"] == "sweep");
  CHECK(j["inputs"]["conversion"] == "improved");
  const auto rows = ordered_lines(lines.out);
  REQUIRE(j["results"].size() == 2 * 3 * 900);
  REQUIRE(rows.size() == j["results"].size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(rows[i] == j["results"][i]);
  }
  // sigma 40 at one step: the best order is the largest tried, a warning
  // that JSON keeps as a note after the results.
  REQUIRE(j.contains("notes"));
  CHECK(j["notes"].dump().find("widen --orders") != std::string::npos);
  // Laid out as nlohmann::json prints the whole document (indent 2), byte for byte.
  CHECK(doc.out == j.dump(2) + "\n");
}

TEST_CASE("long text is printed as tables, each the table of a sweep of its rows alone") {
  // 3 x 1000 rows: one table of kHeldRows rows per sigma. Each is what the
  // sweep of that sigma alone prints (a table of 1000 rows, sigma moved above
  // it), the inputs only above the first; the notes come after the last.
  const auto table_of = [](const std::string& sigma) {
    const auto r = run_dpbudget({"sweep", "-q", "0.01", "--sigma", sigma, "--steps", "1:1000",
                                 "--delta", "1e-5", "--accountant", "rdp"});
    REQUIRE(r.status == 0);
    auto lines = lines_of(r.out);
    std::size_t blank = 0;
    while (blank < lines.size() && !lines[blank].empty()) ++blank;
    REQUIRE(blank + 2 + 1000 <= lines.size());
    lines.resize(blank + 2 + 1000);  // the lines above, a blank line, the header, the rows
    return lines;
  };
  const auto r = run_dpbudget({"sweep", "-q", "0.01", "--sigma", "0.9,1.7,30", "--steps", "1:1000",
                               "--delta", "1e-5", "--accountant", "rdp"});
  REQUIRE(r.status == 0);
  std::vector<std::string> expected;
  for (const std::string sigma : {"0.9", "1.7", "30"}) {
    auto table = table_of(sigma);
    CHECK(std::find(table.begin(), table.end(), "noise_multiplier  " + sigma) != table.end());
    if (!expected.empty()) {
      REQUIRE(table.front().rfind("conversion ", 0) == 0);
      table.erase(table.begin());
      expected.emplace_back();  // a blank line between tables
    }
    expected.insert(expected.end(), table.begin(), table.end());
  }
  const auto got = lines_of(r.out);
  REQUIRE(got.size() >= expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == expected[i]);
  }
  for (std::size_t i = expected.size(); i < got.size(); ++i) {
    CAPTURE(got[i]);
    CHECK((got[i].rfind("note: ", 0) == 0 || got[i].rfind("warning: ", 0) == 0));
  }
  // Up to kHeldRows rows: one table, as before.
  const auto short_sweep = run_dpbudget({"sweep", "-q", "0.01", "--sigma", "0.9,1.7", "--steps",
                                         "1:500", "--delta", "1e-5", "--accountant", "rdp"});
  REQUIRE(short_sweep.status == 0);
  std::size_t headers = 0;
  for (const auto& line : lines_of(short_sweep.out))
    headers += line.rfind("noise_multiplier ", 0) == 0;
  CHECK(headers == 1);
}

TEST_CASE("sweep CSV: the header is every column any row has, whether streamed or spooled") {
  // Against the JSON Lines of the same sweep: the header is the rows' keys in
  // the order they first appear, and each row's non-empty fields are its keys
  // with the same values. Grids whose rows share their columns stream; rows
  // with no solution (an error column), accumulation on some rows only and
  // --input lines go through the spool.
  const std::vector<std::vector<std::string>> sweeps{
      // (Not q = 0.001: its rows have the same columns, and pld's grid for
      // their small epsilon took two thirds of this case's time.)
      {"-q", "0.02,0.05,0.1", "--sigma", "0.7,1.1", "--steps", "1,100,10000", "--delta",
       "1e-5,1e-8", "--accountant", "all"},
      {"--sampling", "without-replacement", "--dataset-size", "1000", "--batch-size", "10",
       "--sigma", "1", "--steps", "100,200", "--delta", "1e-5", "--accountant", "all"},
      {"--sampling", "shuffle", "--dataset-size", "6000", "--batch-size", "60,600", "--sigma",
       "1.1", "--epochs", "1,3", "--delta", "1e-5", "--accountant", "rdp,gdp"},
      {"--solve", "sigma", "--epsilon", "0.001,2", "-q", "0.5,0.01", "--steps", "100000",
       "--max-sigma", "10", "--delta", "1e-5"},
      {"--sigma", "1.1", "--steps", "100", "--accumulation-steps", "1,2", "--dataset-size", "60000",
       "--batch-size", "100", "--delta", "1e-5"},
  };
  for (const auto& args : sweeps) {
    std::vector<std::string> csv_args{"sweep"}, jsonl_args{"sweep"};
    csv_args.insert(csv_args.end(), args.begin(), args.end());
    jsonl_args.insert(jsonl_args.end(), args.begin(), args.end());
    csv_args.insert(csv_args.end(), {"--format", "csv"});
    jsonl_args.insert(jsonl_args.end(), {"--format", "jsonl"});
    const auto csv = run_dpbudget(csv_args);
    const auto jsonl = run_dpbudget(jsonl_args);
    INFO(args.front(), " ", args[1], " ", csv.err);
    CHECK(csv.status == jsonl.status);
    const auto rows = ordered_lines(jsonl.out);
    const auto lines = lines_of(csv.out);
    REQUIRE(lines.size() == rows.size() + 1);
    std::vector<std::string> keys;
    for (const auto& row : rows)
      for (const auto& item : row.items())
        if (std::find(keys.begin(), keys.end(), item.key()) == keys.end())
          keys.push_back(item.key());
    const auto header = csv_fields(lines[0]);
    CHECK(header == keys);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto fields = csv_fields(lines[i + 1]);
      REQUIRE(fields.size() == header.size());
      for (std::size_t c = 0; c < header.size(); ++c) {
        CAPTURE(i);
        CAPTURE(header[c]);
        const auto& row = rows[i];
        if (!row.contains(header[c])) {
          CHECK(fields[c].empty());
        } else if (row[header[c]].is_number()) {
          // CSV prints the shortest decimal on the safe side of the value
          // (a lower end's at or below it, an upper end's at or above), JSON
          // the value itself: they agree to the last bit but one.
          const double shown = std::strtod(fields[c].c_str(), nullptr);
          const double value = row[header[c]].get<double>();
          CHECK((shown == value || std::nextafter(shown, value) == value));
        } else if (row[header[c]].is_boolean()) {
          CHECK(fields[c] == (row[header[c]].get<bool>() ? "true" : "false"));
        } else {
          CHECK(fields[c] == row[header[c]].get<std::string>());
        }
      }
    }
  }
}

TEST_CASE("the CSV spool honours TMPDIR, and a spool that cannot be written exits 5") {
  const std::string input = configs(200);
  const std::string dir = scratch_dir("spool");
  std::FILE* f = std::fopen((dir + "/configs.jsonl").c_str(), "w");
  REQUIRE(f);
  std::fputs(input.c_str(), f);
  std::fclose(f);
  const std::string sweep = shell_quote(dpbudget_binary()) + " sweep --input " +
                            shell_quote(dir + "/configs.jsonl") + " --format csv";
  // --input lines may differ, so their CSV waits in a temporary file in TMPDIR.
  const auto ok = run_shell("TMPDIR=" + shell_quote(dir) + " " + sweep + " 2>/dev/null");
  CHECK(ok.status == 0);
  CHECK(lines_of(ok.out).size() == 201);
  // A TMPDIR that does not exist: one line naming it, exit 5, nothing on stdout.
  const std::string missing = dir + "/missing";
  const auto gone = run_shell("{ TMPDIR=" + shell_quote(missing) + " " + sweep + " 2>&1 >" +
                              shell_quote(dir + "/out") + "; }");
  CHECK(gone.status == kWriteFailed);
  CHECK(gone.out == "dpbudget: error: could not write output to a temporary file in '" + missing +
                        "' (CSV waits there for its header; set TMPDIR, or use --format jsonl): "
                        "No such file or directory\n");
  CHECK(dpb::test::slurp(dir + "/out").empty());
  // A grid whose rows share their columns streams: it needs no temporary file.
  const auto grid =
      run_shell("TMPDIR=" + shell_quote(missing) + " " + shell_quote(dpbudget_binary()) +
                " sweep -q 0.01 --sigma 1,2 --steps 10,100 --delta 1e-5 --format "
                "csv 2>/dev/null");
  CHECK(grid.status == 0);
  CHECK(lines_of(grid.out).size() == 5);
  // A spool write that fails (here: past a 512-byte file size limit, with
  // SIGXFSZ ignored, as on a full disk): exit 5, one line, the reason.
  const auto full = run_shell("{ ulimit -f 1; trap '' XFSZ; TMPDIR=" + shell_quote(dir) + " " +
                              sweep + " 2>&1 >/dev/null; }");
  CHECK(full.status == kWriteFailed);
  CHECK(full.out == "dpbudget: error: could not write output to a temporary file in '" + dir +
                        "' (CSV waits there for its header; set TMPDIR, or use --format jsonl): "
                        "File too large\n");
  // Nothing is left behind in TMPDIR.
  const auto left = run_shell("ls -A " + shell_quote(dir));
  CHECK(left.out == "configs.jsonl\nout\n");
  run_shell("rm -rf " + shell_quote(dir));
}
