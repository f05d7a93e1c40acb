// The input readers' shared parts (cli/input/input_file.hpp): how a flag's
// path or "-" is opened and named, how a fault's place is written, and the
// number-list reader of --coefficients and --matrix (cli/input/number_list.hpp)
// on each of its forms and refusals.
#include "cli/input/input_file.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/errors.hpp"
#include "cli/input/number_list.hpp"
#include "support/temp_file.hpp"

namespace input_file_test {

using dpb::cli::InputFile;
using dpb::cli::InputLocation;
using dpb::cli::UsageError;

std::string refusal_of(const std::string& path) {
  try {
    InputFile file("--input", path, "a JSON Lines file");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string number_refusal(const std::string& text) {
  try {
    dpb::cli::parse_number_rows("--matrix", "m.csv", text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("InputFile: a directory and a missing file are refused naming the flag") {
  CHECK(refusal_of("/tmp") == "--input: '/tmp' is a directory (give a JSON Lines file)");
  CHECK(refusal_of("/nonexistent/x.jsonl") == "--input: cannot open '/nonexistent/x.jsonl'");
}

TEST_CASE("InputFile: a file is named by its path and read up to one byte past a limit") {
  const dpb::test::TempFile t("input_file_test.txt", "0123456789");
  InputFile whole("--spec", t.path, "a JSON spec file");
  CHECK(whole.name() == t.path);
  CHECK(whole.read_text(10) == "0123456789");
  InputFile over("--spec", t.path, "a JSON spec file");
  CHECK(over.read_text(4) == "01234");  // one past the limit: the caller refuses it
  CHECK(InputFile("--scores", "-", "score,label lines").name() == "<stdin>");
}

TEST_CASE("InputLocation: FILE:LINE, FILE, a JSON path, and both") {
  CHECK(InputLocation{"in.jsonl", 3, ""}.str() == "in.jsonl:3");
  CHECK(InputLocation{"in.jsonl", 0, ""}.str() == "in.jsonl");
  CHECK(InputLocation{"", 0, "/composed/1/sigma"}.str() == "/composed/1/sigma");
  CHECK(InputLocation{"<stdin>", 2, "/gaussian/sigma"}.str() == "<stdin>:2: /gaussian/sigma");
  CHECK(InputLocation{"in.jsonl", 4, "", "cifar"}.str() == "in.jsonl:4 'cifar'");
  CHECK(std::string(dpb::cli::input_error("--scores", {"s.csv", 4, ""}, "label: bad").what()) ==
        "--scores: s.csv:4: label: bad");
  CHECK(std::string(dpb::cli::input_error("--spec", {"", 0, ""}, "empty").what()) ==
        "--spec: empty");
}

TEST_CASE("number lists: a JSON row, JSON rows, CSV rows with any separator") {
  using Rows = std::vector<std::vector<double>>;
  CHECK(dpb::cli::parse_number_rows("--coefficients", "c.json", "[0.6, 0.3, 0.1]") ==
        Rows{{0.6, 0.3, 0.1}});
  CHECK(dpb::cli::parse_number_rows("--matrix", "m.json", " [[1, 0], [0.5, 1]]\n") ==
        Rows{{1, 0}, {0.5, 1}});
  CHECK(dpb::cli::parse_number_rows("--matrix", "m.csv", "1, 0\n\n0.5;1\r\n-2\t3e-1\n") ==
        Rows{{1, 0}, {0.5, 1}, {-2, 0.3}});
}

TEST_CASE("number lists: each refusal names the flag and the file") {
  CHECK(number_refusal("  \n") == "--matrix: 'm.csv' is empty");
  CHECK(number_refusal("[1, 2") == "--matrix: 'm.csv' is not valid JSON");
  CHECK(number_refusal("[1, \"a\"]") == "--matrix: 'm.csv': every entry must be a number");
  CHECK(number_refusal("[[1], 2]") == "--matrix: 'm.csv': every row must be an array");
  // Not a JSON array: read as CSV, whose first item is no number.
  CHECK(number_refusal("{\"a\": 1}") == "--matrix: 'm.csv': '{\"a\":' is not a finite number");
  CHECK(number_refusal("1, inf") == "--matrix: 'm.csv': 'inf' is not a finite number");
  CHECK(number_refusal("# no numbers") == "--matrix: 'm.csv': '#' is not a finite number");
}

}  // namespace input_file_test
