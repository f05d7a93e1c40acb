// The matrix-mechanism spec kinds through the binary (docs/matrix.md#event-kinds):
// `epsilon --spec` of banded_matrix_factorization has the upper bound of `epsilon -q
// --sigma --steps ⌈T/b⌉` in every accountant (and claims accuracy for its lower end);
// matrix_mechanism equals the gaussian at σ/Δ and, at Δ = √depth, single_epoch_tree_aggregation; a
// ledger mixing them with a DP-SGD phase; refused inside a sampled event.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run.hpp"
#include "run_json.hpp"

using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::with;
using Json = nlohmann::json;

namespace {

const std::vector<std::string> kEveryAccountant = {"rdp", "gdp", "composition", "pld"};

/// The one result's ε (and its interval's lower end, when there is one) of
/// `dpbudget epsilon ARGS --accountant ACC --format json`.
Json result_of(const std::vector<std::string>& args, const std::string& accountant,
               const std::string& spec = "") {
  const Json j =
      json_of(run_dpbudget(with(args, {"--accountant", accountant, "--format", "json"}), spec));
  REQUIRE(j.at("results").size() == 1);
  return j.at("results").at(0);
}

/// The same ε (and interval, details) from two command lines.
void check_same(const Json& a, const Json& b) {
  CHECK(a.at("epsilon") == b.at("epsilon"));
  CHECK(a.value("epsilon_lower", Json()) == b.value("epsilon_lower", Json()));
  CHECK(a.value("bound", Json()) == b.value("bound", Json()));
}

/// The same upper bound from a run holding banded_matrix_factorization (`banded`) and
/// from its DP-SGD equivalent; the kind's interval claims accuracy only
/// (docs/matrix.md#amplified-banded: the column norms and group sizes are not known),
/// where the equivalent DP-SGD run's lower end is a lower bound.
void check_same_upper(const Json& banded, const Json& dpsgd) {
  CHECK(banded.at("epsilon") == dpsgd.at("epsilon"));
  CHECK(banded.value("bound", Json()) == dpsgd.value("bound", Json()));
  CHECK(banded.value("epsilon_upper", Json()) == dpsgd.value("epsilon_upper", Json()));
  if (!dpsgd.contains("epsilon_lower")) return;
  CHECK(dpsgd.at("lower_end") == "lower bound");
  CHECK(banded.at("lower_end") == "accuracy");
  CHECK_FALSE(banded.contains("epsilon_lower"));
  // The same interval: its width is the accuracy (to the digits of a difference).
  CHECK(banded.at("epsilon_accuracy").get<double>() ==
        doctest::Approx(dpsgd.at("epsilon").get<double>() - dpsgd.at("epsilon_lower").get<double>())
            .epsilon(1e-9));
}

}  // namespace

TEST_CASE("banded_matrix_factorization --spec equals epsilon -q --sigma --steps ceil(T/b)") {
  // T = 1000, b = 3: ⌈1000/3⌉ = 334 rounds.
  const std::string spec =
      R"({"banded_matrix_factorization": {"sampling_probability": 0.02, "noise_multiplier": 0.9,
          "steps": 1000, "bands": 3}})";
  for (const auto& acc : kEveryAccountant) {
    INFO("accountant ", acc);
    const Json banded = result_of({"epsilon", "--spec", "-", "--delta", "1e-5"}, acc, spec);
    const Json dpsgd = result_of(
        {"epsilon", "-q", "0.02", "--sigma", "0.9", "--steps", "334", "--delta", "1e-5"}, acc);
    check_same_upper(banded, dpsgd);
    // 333 rounds is another ε: the test sees the count.
    const Json fewer = result_of(
        {"epsilon", "-q", "0.02", "--sigma", "0.9", "--steps", "333", "--delta", "1e-5"}, acc);
    CHECK(fewer.at("epsilon") != banded.at("epsilon"));
  }
}

TEST_CASE(
    "matrix_mechanism --spec: the gaussian at sigma / sensitivity, and the tree at sqrt(depth)") {
  for (const auto& acc : kEveryAccountant) {
    INFO("accountant ", acc);
    const Json mm =
        result_of({"epsilon", "--spec", "-", "--delta", "1e-5"}, acc,
                  R"({"matrix_mechanism": {"noise_multiplier": 6, "sensitivity": 1.5}})");
    const Json g = result_of({"epsilon", "--spec", "-", "--delta", "1e-5"}, acc,
                             R"({"gaussian": {"noise_multiplier": 4}})");
    check_same(mm, g);
  }
  // 100 steps: depth ⌈log2(101)⌉ = 7; under replace-special rdp, gdp and
  // composition take the tree (pld does not). Δ = √7 is written to 17 digits.
  const std::string tree =
      R"({"single_epoch_tree_aggregation": {"noise_multiplier": 5, "step_counts": 100}})";
  const std::string matrix =
      R"({"matrix_mechanism": {"noise_multiplier": 5, "sensitivity": 2.6457513110645907}})";
  for (const std::string acc : {"rdp", "gdp", "composition"}) {
    INFO("accountant ", acc);
    const std::vector<std::string> args = {
        "epsilon", "--spec", "-", "--delta", "1e-5", "--neighbouring", "replace-special"};
    const Json t = result_of(args, acc, tree);
    const Json m = result_of(args, acc, matrix);
    const double a = t.at("epsilon").get<double>(), b = m.at("epsilon").get<double>();
    CHECK(a == doctest::Approx(b).epsilon(1e-12));
  }
}

TEST_CASE(
    "a ledger of a DP-SGD phase and the matrix kinds equals the ledger of their equivalents") {
  const std::string ledger = R"({"composed": [
    {"self_composed": {"count": 300, "event": {"poisson_sampled": {"sampling_probability": 0.01,
      "event": {"gaussian": {"noise_multiplier": 1.1}}}}}},
    {"banded_matrix_factorization": {"sampling_probability": 0.02, "noise_multiplier": 1.0,
      "steps": 400, "bands": 8}},
    {"matrix_mechanism": {"noise_multiplier": 20, "sensitivity": 2.5}}]})";
  const std::string equivalent = R"({"composed": [
    {"self_composed": {"count": 300, "event": {"poisson_sampled": {"sampling_probability": 0.01,
      "event": {"gaussian": {"noise_multiplier": 1.1}}}}}},
    {"self_composed": {"count": 50, "event": {"poisson_sampled": {"sampling_probability": 0.02,
      "event": {"gaussian": {"noise_multiplier": 1.0}}}}}},
    {"gaussian": {"noise_multiplier": 8}}]})";
  for (const auto& acc : kEveryAccountant) {
    INFO("accountant ", acc);
    check_same_upper(result_of({"epsilon", "--spec", "-", "--delta", "1e-5"}, acc, ledger),
                     result_of({"epsilon", "--spec", "-", "--delta", "1e-5"}, acc, equivalent));
  }
  // The spec is echoed as read: the kinds keep their names.
  const Json j = json_of(
      run_dpbudget({"epsilon", "--spec", "-", "--delta", "1e-5", "--format", "json"}, ledger));
  const std::string echoed = j.at("inputs").at("spec").dump();
  CHECK(echoed.find("banded_matrix_factorization") != std::string::npos);
  CHECK(echoed.find("matrix_mechanism") != std::string::npos);
}

TEST_CASE(
    "a matrix kind inside a sampled event: the accountant alone refuses it, naming the kind") {
  // (Bad fields of the matrix kinds: spec_kinds_test.cpp's table.)
  const auto r = run_dpbudget({"epsilon", "--spec", "-", "--delta", "1e-5"},
                              R"({"poisson_sampled": {"sampling_probability": 0.1, "event":
          {"matrix_mechanism": {"noise_multiplier": 2, "sensitivity": 1}}}})");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "dpbudget: error: rdp: matrix_mechanism is a whole run (its participation pattern is in "
        "its own fields) and cannot be inside poisson_sampled; compose it beside the other "
        "events instead\n");
}
