// Every bad input: one line on stderr naming the flag, nothing on stdout, exit 2.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "refused.hpp"

using dpb::test::check_refused;

#define EPS "epsilon", "--steps", "100", "--delta", "1e-5"

TEST_CASE("sampling rate outside [0, 1]") {
  check_refused({EPS, "--sigma", "1", "-q", "1.5"}, {"--sampling-rate"});
  check_refused({EPS, "--sigma", "1", "-q", "-0.1"}, {"--sampling-rate"});
  check_refused({EPS, "--sigma", "1", "-q", "nan"}, {"--sampling-rate"});
  check_refused({EPS, "--sigma", "1", "-q", "0.1x"}, {"[0, 1]"});
}

TEST_CASE("noise multiplier <= 0, NaN or inf") {
  check_refused({EPS, "-q", "0.01", "--sigma", "0"}, {"--noise-multiplier"});
  check_refused({EPS, "-q", "0.01", "--sigma", "-1"}, {"--noise-multiplier"});
  check_refused({EPS, "-q", "0.01", "--sigma", "nan"}, {"--noise-multiplier"});
  check_refused({EPS, "-q", "0.01", "--sigma", "inf"}, {"> 0"});
  check_refused({EPS, "-q", "0.01"}, {"--noise-multiplier"});
}

TEST_CASE("delta outside (0, 1), epsilon < 0") {
  for (const char* d : {"0", "1", "1.5", "-1e-5"})
    check_refused({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "10", "--delta", d},
                  {"--delta"});
  check_refused({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "10"}, {"--delta"});
  check_refused({"delta", "-q", "0.01", "--sigma", "1", "--steps", "10", "--epsilon", "-1"},
                {"--epsilon"});
  check_refused({"delta", "-q", "0.01", "--sigma", "1", "--steps", "10"}, {"--epsilon"});
}

TEST_CASE("steps < 1 or not an integer, epochs <= 0, steps with epochs") {
  check_refused({"epsilon", "-q", "0.01", "--sigma", "1", "--delta", "1e-5", "--steps", "0"},
                {"--steps"});
  check_refused({"epsilon", "-q", "0.01", "--sigma", "1", "--delta", "1e-5", "--steps", "1.5"},
                {"--steps"});
  check_refused({"epsilon", "-q", "0.01", "--sigma", "1", "--delta", "1e-5"}, {"--steps"});
  check_refused({"epsilon", "--dataset-size", "1000", "--batch-size", "10", "--sigma", "1",
                 "--delta", "1e-5", "--epochs", "0"},
                {"--epochs"});
  check_refused({"epsilon", "--dataset-size", "1000", "--batch-size", "10", "--sigma", "1",
                 "--delta", "1e-5", "--epochs", "-2"},
                {"--epochs"});
  check_refused({"epsilon", "-q", "0.01", "--sigma", "1", "--delta", "1e-5", "--steps", "10",
                 "--epochs", "1"},
                {"--epochs"});
}

TEST_CASE("batch larger than the dataset, incomplete or conflicting N, B, q") {
  check_refused({"epsilon", "--dataset-size", "100", "--batch-size", "200", "--sigma", "1",
                 "--delta", "1e-5", "--epochs", "1"},
                {"--batch-size"});
  check_refused(
      {"epsilon", "--dataset-size", "100", "--sigma", "1", "--delta", "1e-5", "--epochs", "1"},
      {"--batch-size"});
  check_refused({"epsilon", "--dataset-size", "100", "--batch-size", "10", "-q", "0.1", "--sigma",
                 "1", "--delta", "1e-5", "--steps", "1"},
                {"--sampling-rate"});
  check_refused({"epsilon", "--dataset-size", "0", "--batch-size", "10", "--sigma", "1", "--delta",
                 "1e-5", "--steps", "1"},
                {"--dataset-size"});
}

TEST_CASE("unknown verbs and flags, bad choices") {
  check_refused({"epsilom"}, {"unknown verb 'epsilom'"});
  check_refused({}, {"no verb"});
  check_refused({EPS, "-q", "0.01", "--sigma", "1", "--bogus"}, {"--bogus"});
  check_refused({EPS, "-q", "0.01", "--sigma", "1", "--conversion", "fast"}, {"--conversion"});
  check_refused({EPS, "-q", "0.01", "--sigma", "1", "--accountant", "magic"}, {"--accountant"});
  check_refused({EPS, "-q", "0.01", "--sigma", "1", "--format", "xml"}, {"--format"});
  check_refused({EPS, "-q", "0.01", "--sigma", "1", "--format", "jsonl"}, {"--format"});
}

TEST_CASE("empty or malformed order lists, orders <= 1") {
  for (const char* o : {"", "2,,3", "a", "5:2", "2:5:0", "2:5:-1", "1:2:3:4", "2,", "1e400"})
    check_refused({EPS, "-q", "0.01", "--sigma", "1", "--orders", o}, {"--orders"});
  for (const char* o : {"1", "0.5:3", "1,2,3", "-2"})
    check_refused({EPS, "-q", "0.01", "--sigma", "1", "--orders", o}, {"> 1"});
}
