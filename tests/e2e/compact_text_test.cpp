// Issue 13: text output reads at a glance (a compact table within 100
// columns, constant columns above it, counts in full, the row to use marked);
// JSON and CSV keep every column.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"

using dpb::test::run_dpbudget_args;
using dpb::test::with;
using Json = nlohmann::json;

namespace {

const std::vector<std::string> kAbadi = {"epsilon", "--accountant", "all", "-q",
                                         "0.01",    "--sigma",      "4",   "--steps",
                                         "10000",   "--delta",      "1e-5"};

std::size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  std::size_t w = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("note: ", 0) != 0) w = std::max(w, line.size());
  return w;
}

}  // namespace

TEST_CASE("accountant all (Abadi): compact text within 100 columns, --wide every column") {
  const auto r = run_dpbudget_args(kAbadi);
  REQUIRE(r.status == 0);
  CHECK(widest_line(r.out) <= 100);
  CHECK(r.out.find("accountant   bound         epsilon               details\n") !=
        std::string::npos);
  // PLD as an interval, lower rounded down and upper rounded up.
  CHECK(r.out.find("[0.946114, 0.946897]") != std::string::npos);
  CHECK(r.out.find("grid_size 75000, grids_tried 2") != std::string::npos);
  CHECK(r.out.find("order 17") != std::string::npos);
  CHECK(r.out.find("pld_grid_size") == std::string::npos);
  // Constant columns are stated once above the table.
  CHECK(r.out.find("neighbouring      add_remove\n") != std::string::npos);
  CHECK(r.out.find("delta             1e-05\n") != std::string::npos);
  const auto wide = run_dpbudget_args(with(kAbadi, {"--wide"}));
  REQUIRE(wide.status == 0);
  for (const char* column :
       {"neighbouring", "order", "mu", "composed_count", "epsilon_step", "delta_slack",
        "epsilon_lower", "epsilon_upper", "pld_interval", "pld_grid_size", "pld_refinements"})
    CHECK(wide.out.find(std::string("  ") + column) != std::string::npos);
  CHECK(wide.out.find("details") == std::string::npos);
}

TEST_CASE("counts are integers: in full in text and CSV, JSON integers") {
  // A first grid of 2e-6 meets the tolerance at once: a grid of seven digits.
  const auto fine = with(kAbadi, {"--pld-interval", "2e-6"});
  const auto j = Json::parse(run_dpbudget_args(with(fine, {"--format", "json"})).out);
  const auto& comp = j["results"][2];
  const auto& pld = j["results"][3];
  CHECK(comp["composed_count"].is_number_integer());
  CHECK(comp["composed_count"] == 10000);
  CHECK(pld["pld_grid_size"].is_number_integer());
  CHECK(pld["pld_grid_size"] == 1741824);
  CHECK(pld["pld_refinements"].is_number_integer());
  CHECK(pld["pld_refinements"] == 1);
  const auto wide = run_dpbudget_args(with(fine, {"--wide"}));
  CHECK(wide.out.find(" 1741824 ") != std::string::npos);
  CHECK(wide.out.find("e+06") == std::string::npos);
  const auto csv = run_dpbudget_args(with(fine, {"--format", "csv"}));
  CHECK(csv.out.find(",1741824,1\n") != std::string::npos);
  // More than a million steps: the count stays whole.
  const auto big =
      dpb::test::run_dpbudget({"epsilon", "--accountant", "composition", "-q", "0.001", "--sigma",
                               "4", "--steps", "1200000", "--delta", "1e-5", "--wide"});
  REQUIRE(big.status == 0);
  CHECK(big.out.find("1200000") != std::string::npos);
  CHECK(big.out.find("1.2e+06") == std::string::npos);
}

TEST_CASE("recommended: the smallest sound upper bound per target, never an approximation") {
  const auto j = Json::parse(run_dpbudget_args(with(kAbadi, {"--format", "json"})).out);
  int marked = 0;
  for (const auto& row : j["results"]) {
    REQUIRE(row.contains("recommended"));
    if (row["recommended"] == true) {
      ++marked;
      CHECK(row["accountant"] == "pld");
      CHECK(row["bound"] == "upper");
    }
  }
  CHECK(marked == 1);
  // The delta verb: RDP's 1.5e-33 beats PLD's round-off-floored 2.9e-11.
  const std::vector<std::string> d = {"delta", "--accountant", "all", "-q",
                                      "0.01",  "--sigma",      "4",   "--steps",
                                      "1000",  "--epsilon",    "1"};
  const auto jd = Json::parse(run_dpbudget_args(with(d, {"--format", "json"})).out);
  for (const auto& row : jd["results"]) CHECK(row["recommended"] == (row["accountant"] == "rdp"));
  const auto t = run_dpbudget_args(d);
  REQUIRE(t.status == 0);
  CHECK(t.out.find("\nrdp*") != std::string::npos);
  CHECK(t.out.find("\n* smallest sound upper bound: use this row\n") != std::string::npos);
  // One accountant: nothing to choose, no field.
  const auto one =
      Json::parse(dpb::test::run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "4", "--steps",
                                           "10000", "--delta", "1e-5,1e-6", "--format", "json"})
                      .out);
  for (const auto& row : one["results"]) CHECK(!row.contains("recommended"));
}

TEST_CASE("sweep text: constant columns above the table, within 100 columns, CSV keeps all") {
  const std::vector<std::string> s = {"sweep",    "--sigma",        "0.5:2:0.1", "--epochs",
                                      "1,10,100", "--dataset-size", "60000",     "--batch-size",
                                      "256,512",  "--delta",        "1e-5"};
  const auto r = run_dpbudget_args(s);
  REQUIRE(r.status == 0);
  CHECK(widest_line(r.out) <= 100);
  CHECK(r.out.find("\ndataset_size  60000\n") != std::string::npos);
  CHECK(r.out.find("\naccountant    rdp\n") != std::string::npos);
  CHECK(r.out.find("\ndelta         1e-05\n") != std::string::npos);
  const auto table = r.out.find("\n\n");
  REQUIRE(table != std::string::npos);
  const std::string header = r.out.substr(table + 2, r.out.find('\n', table + 2) - table - 2);
  CHECK(header.rfind("sampling_rate  noise_multiplier  steps  batch_size  epochs  epsilon", 0) ==
        0);
  for (const char* constant : {"dataset_size", "sampling ", "accountant", "bound", "delta"})
    CHECK(header.find(constant) == std::string::npos);
  const auto csv = run_dpbudget_args(with(s, {"--format", "csv"}));
  REQUIRE(csv.status == 0);
  CHECK(csv.out.rfind("sampling_rate,noise_multiplier,steps,dataset_size,batch_size,epochs,"
                      "sampling,accountant,neighbouring,bound,delta,epsilon,order\n",
                      0) == 0);
  // One row: nothing moves.
  const auto one = dpb::test::run_dpbudget(
      {"sweep", "--sigma", "1", "-q", "0.01", "--steps", "100", "--delta", "1e-5"});
  REQUIRE(one.status == 0);
  CHECK(one.out.find("accountant  neighbouring  bound") != std::string::npos);
}
