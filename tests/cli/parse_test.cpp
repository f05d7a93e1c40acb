#include "cli/flags/parse.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/errors.hpp"

using namespace dpb::cli;

TEST_CASE("ranges include stop when it falls on the grid, within rounding") {
  CHECK(parse_list("--orders", {"2:5"}, kOrder) == std::vector<double>{2, 3, 4, 5});
  CHECK(parse_list("--orders", {"1.1:1.5:0.1"}, kOrder) ==
        std::vector<double>{1.1, 1.2, 1.3, 1.4, 1.5});
  // 0.1 steps from 1 to 2: ten steps of an inexact 0.1 still reach 2.
  const auto v = parse_list("--x", {"1:2:0.1"}, kNonNegative);
  CHECK(v.size() == 11);
  CHECK(v.back() == 2.0);
  // A stop off the grid is not included.
  CHECK(parse_list("--x", {"0:1:0.3"}, kNonNegative) == std::vector<double>{0, 0.3, 0.6, 0.9});
  CHECK(parse_list("--x", {"5:5"}, kNonNegative) == std::vector<double>{5});
}

TEST_CASE("lists mix numbers and ranges, across repeated flags, in order") {
  CHECK(parse_list("--delta", {"1e-5,1e-6", "1e-8"}, kOpenUnit) ==
        std::vector<double>{1e-5, 1e-6, 1e-8});
  CHECK(parse_list("--orders", {"1.5,2:4,128"}, kOrder) == std::vector<double>{1.5, 2, 3, 4, 128});
  CHECK(parse_integer_list("--steps", {"1,10:30:10"}, 1) ==
        std::vector<std::int64_t>{1, 10, 20, 30});
}

TEST_CASE("malformed lists are usage errors naming the flag") {
  for (const char* bad : {"", ",", "2,,3", "x", "2:", ":3", "5:2", "2:5:0", "1:2:3:4", "nan", "inf",
                          "0x10", " 2", "1e999"}) {
    INFO(bad);
    CHECK_THROWS_WITH_AS(parse_list("--orders", {bad}, kOrder), doctest::Contains("--orders"),
                         UsageError);
  }
  CHECK_THROWS_AS(parse_list("--orders", {"0:2000000"}, kNonNegative), UsageError);
  CHECK_THROWS_AS(parse_integer_list("--steps", {"1.5"}, 1), UsageError);
  CHECK_THROWS_AS(parse_integer_list("--steps", {"0:2"}, 1), UsageError);
}

TEST_CASE("numbers are checked against their domain") {
  CHECK(parse_real("-q", "0", kProbability) == 0);
  CHECK(parse_real("-q", "1", kProbability) == 1);
  CHECK_THROWS_WITH_AS(parse_real("-q", "1.0001", kProbability),
                       "-q: must be a number in [0, 1], got '1.0001'", UsageError);
  CHECK_THROWS_AS(parse_real("--delta", "0", kOpenUnit), UsageError);
  CHECK_THROWS_AS(parse_real("--delta", "1", kOpenUnit), UsageError);
  CHECK_THROWS_AS(parse_real("--sigma", "0", kPositive), UsageError);
  CHECK(parse_real("--epsilon", "0", kNonNegative) == 0);
  CHECK(parse_integer("--steps", "1e4", 1) == 10000);
  CHECK_THROWS_AS(parse_integer("--steps", "1e20", 1), UsageError);
  CHECK_THROWS_AS(parse_integer("--steps", "2.5", 1), UsageError);
}

TEST_CASE("choices") {
  CHECK(parse_choice("--format", "csv", {"text", "csv"}) == "csv");
  CHECK_THROWS_WITH_AS(parse_choice("--format", "xml", {"text", "csv"}),
                       "--format: must be one of text, csv, got 'xml'", UsageError);
}
