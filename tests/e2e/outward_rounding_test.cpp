// Issue 24, item 6, through the binary: JSON and CSV print every exact upper
// value at or above the exact value (the decimal printed, read exactly), and
// within a small relative distance of it. Exact values are 50-digit roots and
// closed forms, computed here with boost::multiprecision.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run.hpp"
#include "run_json.hpp"
#include "support/gdp_50_digits.hpp"

using namespace dpb::test;

namespace {

/// Relative distance allowed above the exact value: the library's rounding
/// bounds move a root ε by ~1e-14 relative
/// (tests/accounting/properties/closed_form_rounding_test.cpp).
constexpr double kClose = 1e-12;

/// The value of a CSV column in the first data row, as printed.
std::string csv_field(const std::string& csv, const std::string& column) {
  std::istringstream in(csv);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream s(line);
    while (std::getline(s, cell, ',')) out.push_back(cell);
    return out;
  };
  const auto names = split(header), values = split(row);
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i)
    if (names[i] == column) return values[i];
  FAIL("no column " << column << " in " << csv);
  return "";
}

/// The number text of `key` in the first result of a JSON document, as printed.
std::string json_field(const std::string& text, const std::string& key) {
  const std::string needle = "\"" + key + "\": ";
  const auto results = text.find("\"results\"");
  const auto at = text.find(needle, results);
  REQUIRE(at != std::string::npos);
  const auto start = at + needle.size();
  return text.substr(start, text.find_first_of(",\n}", start) - start);
}

void check_upper(const std::string& printed, const Mp& exact) {
  CAPTURE(printed);
  CAPTURE(exact.str(25));
  const Mp shown(printed);  // the decimal as printed, to 50 digits
  CHECK(shown >= exact);
  CHECK((shown - exact) / exact <= Mp(kClose));
}

/// The smallest ε with δ(ε) ≤ δ for μ-GDP, bisected in 50 digits.
Mp mp_gdp_epsilon(const Mp& mu, const Mp& delta) {
  return mp_root([&](const Mp& e) { return mp_gdp_delta(mu, e); }, delta, mu * mu / 2 + 10 * mu);
}

}  // namespace

TEST_CASE("outward rounding e2e: the issue's gdp case prints at least 4.3771780956812246") {
  // epsilon -q 1 --sigma 1 --steps 1 --delta 1e-5 --accountant gdp: one
  // Gaussian release, μ = 1; the exact ε is 4.37717809568122460...
  const Mp exact = mp_gdp_epsilon(Mp(1), Mp(1e-5));
  CHECK(exact > Mp("4.3771780956812245"));
  CHECK(exact < Mp("4.3771780956812247"));
  const auto csv = run_dpbudget({"epsilon", "-q", "1", "--sigma", "1", "--steps", "1", "--delta",
                                 "1e-5", "--accountant", "gdp", "--format", "csv"});
  REQUIRE(csv.status == 0);
  check_upper(csv_field(csv.out, "epsilon"), exact);
  CHECK(Mp(csv_field(csv.out, "epsilon")) >= Mp("4.3771780956812246"));
  const auto json = run_dpbudget({"epsilon", "-q", "1", "--sigma", "1", "--steps", "1", "--delta",
                                  "1e-5", "--accountant", "gdp", "--format", "json"});
  REQUIRE(json.status == 0);
  check_upper(json_field(json.out, "epsilon"), exact);
  CHECK(Mp(json_field(json.out, "epsilon")) >= Mp("4.3771780956812246"));
  // The text keeps its 6 digits, rounded up as before.
  const auto text = run_dpbudget({"epsilon", "-q", "1", "--sigma", "1", "--steps", "1", "--delta",
                                  "1e-5", "--accountant", "gdp"});
  CHECK(text.out.find("4.37718") != std::string::npos);
}

TEST_CASE("outward rounding e2e: the gdp, gaussian, laplace, amplify and compose verbs") {
  // gdp --mu 1 and gaussian --sigma 1: the same root.
  const Mp gdp_exact = mp_gdp_epsilon(Mp(1), Mp(1e-5));
  const auto g = run_dpbudget({"gdp", "--mu", "1", "--delta", "1e-5", "--format", "csv"});
  REQUIRE(g.status == 0);
  check_upper(csv_field(g.out, "epsilon"), gdp_exact);
  const auto ga = run_dpbudget({"gaussian", "--sigma", "1", "--delta", "1e-5", "--format", "json"});
  REQUIRE(ga.status == 0);
  check_upper(json_field(ga.out, "epsilon"), gdp_exact);
  // σ = 3, Δ = 1 at δ = 1e-9: μ = 1/3, a quotient rounded up before the root.
  const auto g3 = run_dpbudget({"gaussian", "--sigma", "3", "--delta", "1e-9", "--format", "csv"});
  REQUIRE(g3.status == 0);
  check_upper(csv_field(g3.out, "epsilon"), mp_gdp_epsilon(Mp(1) / 3, Mp(1e-9)));
  // Laplace of scale 3: pure ε = 1/3 (the double nearest 1/3 is below it).
  const auto l = run_dpbudget({"laplace", "--scale", "3", "--delta", "0", "--format", "csv"});
  REQUIRE(l.status == 0);
  check_upper(csv_field(l.out, "epsilon"), Mp(1) / 3);
  // Amplification of (1, 1e-6) by q = 0.01: (log(1 + 0.01(e − 1)), 1e-8), at the double inputs.
  const auto a = run_dpbudget(
      {"amplify", "--epsilon", "1", "--delta", "1e-6", "-q", "0.01", "--format", "csv"});
  REQUIRE(a.status == 0);
  check_upper(csv_field(a.out, "epsilon"),
              boost::multiprecision::log1p(Mp(0.01) * boost::multiprecision::expm1(Mp(1))));
  // δ = qδ, a product of the inputs: at or above the decimal inputs' exact 1e-8.
  check_upper(csv_field(a.out, "delta"), Mp("1e-8"));
  // Basic composition of (0.1, 1e-8) 3 times: at or above the decimal
  // inputs' exact 0.3, and at or above 3 × the double 0.1 (0.30000000000000001665).
  const auto c = run_dpbudget({"compose", "--epsilon", "0.1", "--delta", "1e-8", "--count", "3",
                               "--target-delta", "1e-5", "--method", "basic", "--format", "csv"});
  REQUIRE(c.status == 0);
  check_upper(csv_field(c.out, "epsilon"), Mp("0.3"));
  check_upper(csv_field(c.out, "epsilon"), 3 * Mp(0.1));
  // 100 × 1e-8 at a total ε of 10: δ printed at or above the exact 1e-6, and
  // text "1e-06" as before.
  const auto cd = run_dpbudget({"compose", "--epsilon", "0.1", "--delta", "1e-8", "--count", "100",
                                "--target-epsilon", "10", "--method", "basic", "--format", "csv"});
  REQUIRE(cd.status == 0);
  check_upper(csv_field(cd.out, "delta"), Mp("1e-6"));
  const auto ct = run_dpbudget({"compose", "--epsilon", "0.1", "--delta", "1e-8", "--count", "100",
                                "--target-epsilon", "10", "--method", "basic"});
  CHECK(ct.out.find("1e-06") != std::string::npos);
}
