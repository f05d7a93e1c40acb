// End-to-end: the mechanism verbs print what the accounting library computes
// (compose and accounting/composition.hpp, to the last bit).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "accounting/composition.hpp"
#include "accounting/errors.hpp"
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
  if (want) CHECK((*row)[key].get<double>() == *want);
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
