// --accountant all on Abadi et al.'s configuration: one row per accountant,
// each of the kind it claims, consistent with each other.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run.hpp"

using dpb::test::run_dpbudget;
using Json = nlohmann::json;

namespace {

Json abadi(const std::string& accountant, const std::string& composition = "optimal") {
  const auto r = run_dpbudget({"epsilon", "--accountant", accountant, "--composition", composition,
                               "-q", "0.01", "--sigma", "4", "--steps", "10000", "--delta", "1e-5",
                               "--format", "json"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  return Json::parse(r.out);
}

}  // namespace

TEST_CASE("accountant all: rdp, gdp (approximate), composition, pld side by side") {
  const auto j = abadi("all");
  REQUIRE(j["results"].size() == 4);
  const auto& rdp = j["results"][0];
  const auto& gdp = j["results"][1];
  const auto& comp = j["results"][2];
  const auto& pld = j["results"][3];
  CHECK(rdp["accountant"] == "rdp");
  CHECK(rdp["epsilon"].get<double>() == doctest::Approx(1.0354900660362967).epsilon(1e-9));
  // docs/gdp.md#clt-poisson (its check): GDP CLT μ ≈ 0.25396, ε ≈ 0.9424, and not a bound.
  CHECK(gdp["accountant"] == "gdp");
  CHECK(gdp["bound"] == "approximate");
  CHECK(gdp["mu"].get<double>() == doctest::Approx(0.25395759275489172).epsilon(1e-9));
  CHECK(gdp["epsilon"].get<double>() == doctest::Approx(0.94244013562799009).epsilon(1e-9));
  // Strong composition is far looser than the moments accountant (Abadi et al.).
  CHECK(comp["accountant"] == "composition");
  CHECK(comp["bound"] == "upper");
  CHECK(comp["epsilon"].get<double>() > 5 * rdp["epsilon"].get<double>());
  CHECK(comp["delta_step"].get<double>() > 0);
  CHECK(comp["delta_slack"].get<double>() > 0);
  // The split of δ stays within the total: T·q·δ_step + slack ≤ δ.
  CHECK(1e4 * 0.01 * comp["delta_step"].get<double>() + comp["delta_slack"].get<double>() <=
        1e-5 * (1 + 1e-9));
  // PLD is tight: its interval sits below RDP and contains the truth, which no
  // upper bound may undercut.
  CHECK(pld["accountant"] == "pld");
  CHECK(pld["epsilon_lower"].get<double>() <= pld["epsilon"].get<double>());
  CHECK(pld["epsilon"].get<double>() < rdp["epsilon"].get<double>());
  CHECK(rdp["epsilon"].get<double>() >= pld["epsilon_lower"].get<double>());
  CHECK(comp["epsilon"].get<double>() >= pld["epsilon_lower"].get<double>());
}

TEST_CASE("--composition: optimal <= advanced <= basic on the same run") {
  const double optimal = abadi("composition", "optimal")["results"][0]["epsilon"].get<double>();
  const double advanced = abadi("composition", "advanced")["results"][0]["epsilon"].get<double>();
  const double basic = abadi("composition", "basic")["results"][0]["epsilon"].get<double>();
  CHECK(optimal <= advanced);
  CHECK(advanced <= basic);
  CHECK(abadi("composition", "advanced")["inputs"]["composition"] == "advanced");
}

TEST_CASE("grouped clipping: z1..zM act as z* = 1/sqrt(sum 1/z_m^2)") {
  // z = (2, 2, 2, 2) gives z* = 1: the same ε as --sigma 1 (up to z* rounded down).
  const auto g = run_dpbudget({"epsilon", "--group-noise-multipliers", "2,2,2,2", "-q", "0.01",
                               "--steps", "1000", "--delta", "1e-5", "--format", "json"});
  const auto s = run_dpbudget({"epsilon", "--sigma", "1", "-q", "0.01", "--steps", "1000",
                               "--delta", "1e-5", "--format", "json"});
  REQUIRE(g.status == 0);
  REQUIRE(s.status == 0);
  const auto jg = Json::parse(g.out), js = Json::parse(s.out);
  CHECK(jg["inputs"]["noise_multiplier"].get<double>() == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(jg["inputs"]["noise_multiplier"].get<double>() <= 1.0);
  CHECK(jg["inputs"]["group_noise_multipliers"].size() == 4);
  CHECK(jg["results"][0]["epsilon"].get<double>() >= js["results"][0]["epsilon"].get<double>());
  CHECK(jg["results"][0]["epsilon"].get<double>() ==
        doctest::Approx(js["results"][0]["epsilon"].get<double>()).epsilon(1e-12));
  const auto both = run_dpbudget({"epsilon", "--group-noise-multipliers", "2,2", "--sigma", "1",
                                  "-q", "0.01", "--steps", "10", "--delta", "1e-5"});
  CHECK(both.status == 2);
  CHECK(both.err.find("--group-noise-multipliers") != std::string::npos);
}

TEST_CASE("sampling without replacement: replace-one in every accountant that supports it") {
  const auto r = run_dpbudget({"epsilon", "--sampling", "without-replacement", "--dataset-size",
                               "60000", "--batch-size", "600", "--sigma", "2", "--steps", "1000",
                               "--delta", "1e-5", "--accountant", "all", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = Json::parse(r.out);
  CHECK(j["inputs"]["sampling"] == "without_replacement");
  for (const auto& row : j["results"]) CHECK(row["neighbouring"] == "replace_one");
  // PLD answers too: an interval whose lower end bounds the run
  // (docs/pld.md#without-replacement), no accountant skipped.
  bool pld = false;
  for (const auto& row : j["results"])
    if (row["accountant"] == "pld") {
      pld = true;
      CHECK(row["lower_end"] == "lower bound");
      CHECK(row["epsilon_lower"].get<double>() <= row["epsilon"].get<double>());
    }
  CHECK(pld);
  CHECK(r.err.find("skipped") == std::string::npos);
  const auto missing = run_dpbudget({"epsilon", "--sampling", "without-replacement", "-q", "0.01",
                                     "--sigma", "1", "--steps", "10", "--delta", "1e-5"});
  CHECK(missing.status == 2);
  CHECK(missing.err.find("--sampling") != std::string::npos);
}

TEST_CASE("fixed-size batches: the MNIST run of the guide, between its attained pair and RDP") {
  // N 60,000, B 256, 60 epochs, σ 1.1, δ 1e-5
  // (docs/guide.md#which-sampling-did-your-training-loop-do). The attained
  // pair is the Poisson-sampled Gaussian at q = B/N and σ/2
  // (docs/pld.md#without-replacement), computed here by the Poisson path
  // with those parameters.
  auto run = [](std::vector<std::string> args) {
    args.insert(args.end(), {"--delta", "1e-5", "--format", "json"});
    const auto r = run_dpbudget(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return Json::parse(r.out)["results"];
  };
  const std::vector<std::string> mnist = {"--dataset-size", "60000", "--batch-size", "256",
                                          "--epochs",       "60",    "--sigma",      "1.1"};
  auto with = [&](std::vector<std::string> head) {
    head.insert(head.end(), mnist.begin(), mnist.end());
    return head;
  };
  const auto fixed =
      run(with({"epsilon", "--sampling", "without-replacement", "--accountant", "pld,rdp"}));
  const auto poisson = run(with({"epsilon", "--accountant", "pld"}));
  // q = 256/60000 to 17 digits (the shortest round trip of the run's own q);
  // T = ⌈60·60000/256⌉ = 14063.
  const auto attained = run({"epsilon", "-q", "0.0042666666666666667", "--sigma", "0.55", "--steps",
                             "14063", "--accountant", "pld"});
  REQUIRE(fixed.size() == 2);
  const auto& pld = fixed[0];
  const auto& rdp = fixed[1];
  CHECK(pld["accountant"] == "pld");
  CHECK(pld["neighbouring"] == "replace_one");
  CHECK(pld["lower_end"] == "lower bound");
  const double lower = pld["epsilon_lower"].get<double>(), upper = pld["epsilon"].get<double>();
  CHECK(lower <= attained[0]["epsilon"].get<double>());
  CHECK(attained[0]["epsilon_lower"].get<double>() <= upper);
  CHECK(upper <= rdp["epsilon"].get<double>());
  // Poisson's figure is far below what fixed-size batches attain.
  CHECK(poisson[0]["epsilon"].get<double>() < lower);
}
