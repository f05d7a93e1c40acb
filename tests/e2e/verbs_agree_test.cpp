// End-to-end: the mechanism verbs print what the accounting library computes
// (compose and accounting/composition/composition.hpp, to the last bit) and what the
// accountants print for the same run (gdp and `epsilon --accountant gdp`:
// the same μ, ε and notes).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "accounting/composition/composition.hpp"
#include "accounting/errors.hpp"
#include "accounting/gdp/gdp.hpp"
#include "run_json.hpp"

using dpb::test::json_of;
using dpb::test::run_dpbudget;
using Json = nlohmann::json;

namespace {

/// The library's value for one method, or nothing where it finds no solution.
template <typename F>
std::optional<double> library(F f) {
  try {
    return f();
  } catch (const dpb::NoSolution&) {
    return std::nullopt;
  }
}

/// `key` of the row `method` prints: the library's value, or no row where the library refuses.
void check_row(const Json& doc, const std::string& method, const char* key,
               std::optional<double> want) {
  INFO("method ", method, " ", key);
  const Json* row = nullptr;
  for (const auto& r : doc["results"])
    if (r["method"] == method) row = &r;
  REQUIRE((row != nullptr) == want.has_value());
  // To the bit, or the next double up: JSON prints an upper bound's shortest
  // decimal at or above the value (issue 24, item 6).
  if (want) {
    const double got = (*row)[key].get<double>();
    CHECK((got == *want || got == std::nextafter(*want, HUGE_VAL)));
  }
}

/// The notes of a run that speak of the central limit theorem.
std::vector<std::string> clt_notes(const std::vector<std::string>& notes) {
  std::vector<std::string> out;
  for (const auto& n : notes)
    if (n.find("central limit") != std::string::npos) out.push_back(n);
  return out;
}

std::vector<std::string> note_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    if (line.rfind("note: ", 0) == 0) out.push_back(line);
    at = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("compose prints the library's basic, advanced and optimal composition to the bit") {
  using namespace dpb;
  struct Case {
    const char *epsilon, *delta, *count, *target_delta, *target_epsilon;
  };
  // Targets where every method answers, and where basic or advanced refuse.
  for (const Case c :
       {Case{"0.1", "1e-7", "100", "2e-5", "12"}, Case{"1", "0.001", "30", "0.06", "25"},
        Case{"1", "0.001", "30", "0.1", "55"}, Case{"0.01", "0", "10000", "1e-6", "4"},
        Case{"0.5", "1e-9", "7", "1e-3", "3.5"}, Case{"0.1", "1e-7", "100", "1e-5", "1"}}) {
    const double e = std::stod(c.epsilon), d = std::stod(c.delta);
    const std::int64_t k = std::stoll(c.count);
    const double td = std::stod(c.target_delta), te = std::stod(c.target_epsilon);
    INFO("eps=", c.epsilon, " delta=", c.delta, " k=", c.count);
    const auto at_delta =
        json_of(run_dpbudget({"compose", "--epsilon", c.epsilon, "--delta", c.delta, "--count",
                              c.count, "--target-delta", c.target_delta, "--format", "json"}));
    check_row(at_delta, "basic", "epsilon", library([&] { return basic_epsilon(e, d, k, td); }));
    check_row(at_delta, "advanced", "epsilon",
              library([&] { return advanced_epsilon(e, d, k, td); }));
    check_row(at_delta, "advanced", "delta_prime",
              library([&] { return advanced_slack(d, k, td); }));
    check_row(at_delta, "optimal", "epsilon",
              library([&] { return optimal_epsilon(e, d, k, td); }));
    const auto at_eps =
        json_of(run_dpbudget({"compose", "--epsilon", c.epsilon, "--delta", c.delta, "--count",
                              c.count, "--target-epsilon", c.target_epsilon, "--format", "json"}));
    check_row(at_eps, "basic", "delta", library([&] { return basic_delta(e, d, k, te); }));
    check_row(at_eps, "advanced", "delta", library([&] { return advanced_delta(e, d, k, te); }));
    check_row(at_eps, "advanced", "delta_prime",
              library([&] { return advanced_delta_prime(e, k, te); }));
    check_row(at_eps, "optimal", "delta", library([&] { return optimal_delta(e, d, k, te); }));
  }
}

TEST_CASE("compose and the library refuse the same advanced slack (delta' at the rounding level)") {
  // 1e-5 − 100·1e-7 is 0 in decimals and 1.7e-21 in doubles: both refuse it.
  CHECK_THROWS_AS(dpb::advanced_epsilon(0.1, 1e-7, 100, 1e-5), dpb::NoSolution);
  const auto r = run_dpbudget({"compose", "--method", "advanced", "--epsilon", "0.1", "--delta",
                               "1e-7", "--count", "100", "--target-delta", "1e-5"});
  CHECK(r.status == 3);
  CHECK(r.out.empty());
  // --count takes the library's limit.
  const auto over =
      run_dpbudget({"compose", "--epsilon", "1", "--delta", "0", "--count",
                    std::to_string(dpb::kMaxOptimalCount + 1), "--target-delta", "1e-5"});
  CHECK(over.status == 2);
  CHECK(over.err.find("--count") != std::string::npos);
}

TEST_CASE("gdp and epsilon --accountant gdp: same mu, epsilon and central-limit notes") {
  // -q 0.5 --sigma 0.1 --steps 1: one step, mu_step = 0.5·sqrt(e^100 − 1), far outside the
  // CLT regime; the Abadi configuration (inside it); fixed-size batches; q = 1 (exact Gaussian).
  const std::vector<std::vector<std::string>> runs = {
      {"-q", "0.5", "--sigma", "0.1", "--steps", "1"},
      {"-q", "0.01", "--sigma", "4", "--steps", "10000"},
      {"--dataset-size", "1000", "--batch-size", "10", "--sigma", "2", "--steps", "50",
       "--sampling", "without-replacement"},
      {"-q", "1", "--sigma", "2", "--steps", "4"}};
  for (const auto& run : runs) {
    std::string shown;
    for (const auto& a : run) shown += a + " ";
    INFO("run: ", shown);
    auto args = [&](const char* verb, bool json) {
      std::vector<std::string> a = {verb};
      if (std::string(verb) == "epsilon") a.insert(a.end(), {"--accountant", "gdp"});
      a.insert(a.end(), run.begin(), run.end());
      a.insert(a.end(), {"--delta", "1e-5"});
      if (json) a.insert(a.end(), {"--format", "json"});
      return a;
    };
    const auto g = json_of(run_dpbudget(args("gdp", true)));
    const auto e = json_of(run_dpbudget(args("epsilon", true)));
    const auto& gr = g["results"][0];
    const auto& er = e["results"][0];
    // gdp prints μ rounded up (its decimal at or above it), epsilon's details
    // to nearest: the same double or the next one up.
    const double g_mu = gr["mu"].get<double>(), e_mu = er["mu"].get<double>();
    CHECK((g_mu == e_mu || g_mu == std::nextafter(e_mu, HUGE_VAL)));
    CHECK(gr["epsilon"].get<double>() == er["epsilon"].get<double>());
    CHECK(gr["bound"] == er["bound"]);
    CHECK(gr["neighbouring"] == er["neighbouring"]);
    const auto g_notes = clt_notes(g.value("notes", std::vector<std::string>{}));
    CHECK(g_notes == clt_notes(e.value("notes", std::vector<std::string>{})));
    // The same lines under the text tables.
    const auto gt = run_dpbudget(args("gdp", false));
    const auto et = run_dpbudget(args("epsilon", false));
    REQUIRE(gt.status == 0);
    REQUIRE(et.status == 0);
    CHECK(clt_notes(note_lines(gt.out)) == clt_notes(note_lines(et.out)));
    CHECK(clt_notes(note_lines(gt.out)) == g_notes);
    if (run[1] == "0.5") {
      REQUIRE(g_notes.size() == 2);
      CHECK(g_notes[1].rfind("note: outside the central limit regime", 0) == 0);
    }
    if (run[1] == "1") {  // q = 1: T Gaussian steps, exactly sqrt(T)/sigma-GDP, no CLT
      CHECK(gr["mu"].get<double>() == 1);
      CHECK(gr["bound"] == "upper");
      CHECK(gr["method"] == "gdp");
      // From μ = 1 rounded up past the rounding of its terms: at or above
      // the library's ε at μ = 1, by less than 1e-13 relative.
      CHECK(gr["epsilon"].get<double>() >= dpb::gdp_epsilon(1, 1e-5));
      CHECK(gr["epsilon"].get<double>() ==
            doctest::Approx(dpb::gdp_epsilon(1, 1e-5)).epsilon(1e-13));
      CHECK(g_notes.empty());
    }
  }
}
