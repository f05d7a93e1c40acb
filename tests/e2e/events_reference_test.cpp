// Every row of tests/reference/events.csv (dp_accounting 0.6.0 on the event
// kinds beyond the Gaussian) through the binary: `epsilon --spec FILE
// --accountant A --neighbouring R --delta D --format json`, compared by the
// row's `check` column as the reference README says:
//   rdp       ours ≤ value·(1 + 1e-6) and ≥ value·(1 − 5e-3)
//   interval  [epsilon_lower, epsilon] contains the value within 1e-3
//   at_most   ours ≤ value·(1 + 1e-3)
// Rows where dpbudget deliberately differs from dp_accounting are listed in
// kLooserByDesign with the reason; for them the test checks that ours is not
// below the reference and equals the documented substitute ledger exactly.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "run_json.hpp"
#include "support/reference.hpp"

using dpb::test::json_of;
using dpb::test::read_reference_csv;
using dpb::test::run_dpbudget_args;

namespace {

// Tolerances of the reference README (events.csv `check` column).
constexpr double kRdpAbove = 1e-6;       ///< rdp: ours may exceed theirs by round-off only
constexpr double kRdpBelow = 5e-3;       ///< rdp: ours may be tighter (theirs: abs-sum bounds)
constexpr double kIntervalSlack = 1e-3;  ///< interval / at_most: PLD discretisation

/// dp_accounting gives permute-and-flip the Laplace curves (RDP and PLD)
/// without a published proof that its privacy loss is that of the Laplace
/// mechanism; dpbudget accounts for it as a generic ε-DP mechanism (the
/// binary randomized-response pair dominates every ε-DP pair, Kairouz, Oh &
/// Viswanath 2015), which is sound and looser. For these rows ours must be
/// at least the reference and equal the same ledger with every
/// permute_and_flip{ε} written as epsilon_delta{ε, 0}.
const std::map<std::string, std::string> kLooserByDesign = {
    {"permute_and_flip_rdp_single", "permute_and_flip as a generic epsilon-DP mechanism"},
    {"composed_mix_rdp", "permute_and_flip as a generic epsilon-DP mechanism"},
    {"composed_mix_pld", "permute_and_flip as a generic epsilon-DP mechanism"},
};

/// `spec` with every {"permute_and_flip":{"epsilon":E}} as
/// {"epsilon_delta":{"epsilon":E,"delta":0}}.
std::string as_epsilon_dp(std::string spec) {
  const std::string from = "{\"permute_and_flip\":{\"epsilon\":";
  for (std::size_t at = spec.find(from); at != std::string::npos; at = spec.find(from)) {
    const std::size_t end = spec.find('}', at);
    const std::string value = spec.substr(at + from.size(), end - at - from.size());
    spec.replace(at, end + 2 - at, "{\"epsilon_delta\":{\"epsilon\":" + value + ",\"delta\":0}}");
  }
  return spec;
}

struct Answer {
  double epsilon = 0;
  double lower = 0;  ///< epsilon_lower for PLD, else epsilon
};

/// `relation` as results name it (add_remove); the flag takes add-remove.
Answer spec_answer(const std::string& spec, const std::string& accountant,
                   const std::string& relation, const std::string& delta) {
  std::string neighbouring = relation;
  for (char& c : neighbouring)
    if (c == '_') c = '-';
  const std::string file = "/tmp/dpbudget_events_ref_" + std::to_string(::getpid()) + ".json";
  std::ofstream(file) << spec;
  const auto r = run_dpbudget_args(std::vector<std::string>{
      "epsilon", "--spec", file, "--accountant", accountant, "--neighbouring", neighbouring,
      "--delta", delta, "--format", "json"});
  std::remove(file.c_str());
  const auto doc = json_of(r);
  REQUIRE(doc["results"].size() == 1);
  const auto& row = doc["results"][0];
  CHECK(row["neighbouring"] == relation);
  CHECK(row["bound"] == "upper");
  Answer a;
  a.epsilon = row["epsilon"].get<double>();
  a.lower = row.contains("epsilon_lower") ? row["epsilon_lower"].get<double>() : a.epsilon;
  return a;
}

}  // namespace

TEST_CASE("every row of events.csv through epsilon --spec, by its check column") {
  const auto rows = read_reference_csv("events.csv");
  REQUIRE(rows.size() >= 17);
  for (const auto& row : rows) {
    const std::string id = row.at("id");
    const std::string relation = row.at("neighbouring");
    const double value = std::stod(row.at("epsilon"));
    const std::string check = row.at("check");
    INFO("row ", id, " (", row.at("accountant"), ", ", relation, ", check ", check, ")");
    const Answer ours =
        spec_answer(row.at("spec_json"), row.at("accountant"), relation, row.at("delta"));
    INFO("ours [", ours.lower, ", ", ours.epsilon, "], reference ", value);
    if (kLooserByDesign.count(id)) {
      INFO("looser by design: ", kLooserByDesign.at(id));
      CHECK(ours.epsilon >= value * (1 - kIntervalSlack));
      const Answer same = spec_answer(as_epsilon_dp(row.at("spec_json")), row.at("accountant"),
                                      relation, row.at("delta"));
      CHECK(ours.epsilon == same.epsilon);
      CHECK(ours.lower == same.lower);
      continue;
    }
    if (check == "rdp") {
      CHECK(ours.epsilon <= value * (1 + kRdpAbove));
      CHECK(ours.epsilon >= value * (1 - kRdpBelow));
    } else if (check == "interval") {
      CHECK(ours.lower <= value * (1 + kIntervalSlack));
      CHECK(ours.epsilon >= value * (1 - kIntervalSlack));
    } else if (check == "at_most") {
      CHECK(ours.epsilon <= value * (1 + kIntervalSlack));
    } else {
      FAIL("unknown check '", check, "'");
    }
  }
}
