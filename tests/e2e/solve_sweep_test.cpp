// End-to-end tests of the solving verbs (sigma, steps, sampling-rate), sweep,
// the budget gate and JSON Lines configs: values, row order, exit statuses.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_json.hpp"

using dpb::test::epsilon_of;
using dpb::test::json_lines;
using dpb::test::json_of;
using dpb::test::run_dpbudget;
using dpb::test::str;
using Json = nlohmann::json;

TEST_CASE(
    "sigma: Opacus get_noise_multiplier agreement, and the printed epsilon meets the target") {
  // Opacus (epsilon_tolerance 0.01, its own orders) gives sigma = 1.416015625
  // for q = 0.04, 2250 steps, epsilon 8, delta 1e-5 (calibration.csv).
  const auto j =
      json_of(run_dpbudget({"sigma", "--epsilon", "8", "--delta", "1e-5", "-q", "0.04", "--steps",
                            "2250", "--orders", "1.1:10.9:0.1,12:63", "--format", "json"}));
  const auto& r = j["results"][0];
  const double sigma = r["noise_multiplier"].get<double>();
  CHECK(sigma <= 1.416015625 * (1 + 1e-4));
  CHECK(sigma >= 1.416015625 * (1 - 0.01));
  CHECK(r["epsilon"].get<double>() <= 8);
  CHECK(r["target_epsilon"].get<double>() == 8);
  CHECK(r["accountant"] == "rdp");
  CHECK(!j["inputs"].contains("noise_multiplier"));

  // Issue acceptance: epsilon 1 at q = 0.01, 10000 steps; fed back, epsilon <= 1.
  const auto k = json_of(run_dpbudget({"sigma", "--epsilon", "1", "--delta", "1e-5", "-q", "0.01",
                                       "--steps", "10000", "--format", "json"}));
  const double s1 = k["results"][0]["noise_multiplier"].get<double>();
  CHECK(epsilon_of("0.01", str(s1), "10000", "1e-5") <= 1.0);
  CHECK(epsilon_of("0.01", str(s1 * (1 - 2e-4)), "10000", "1e-5") > 1.0);
}

TEST_CASE("sigma: several targets give a table, N, B, epochs are accepted") {
  const auto j =
      json_of(run_dpbudget({"sigma", "--epsilon", "1,2,4,8", "--delta", "1e-5", "--dataset-size",
                            "60000", "--batch-size", "256", "--epochs", "30", "--format", "json"}));
  REQUIRE(j["results"].size() == 4);
  CHECK(j["inputs"]["steps"].get<long>() == 7032);
  for (std::size_t i = 1; i < 4; ++i)
    CHECK(j["results"][i]["noise_multiplier"].get<double>() <
          j["results"][i - 1]["noise_multiplier"].get<double>());
}

TEST_CASE("steps: the largest T within the budget, and the epochs it means") {
  const auto j =
      json_of(run_dpbudget({"steps", "--epsilon", "2", "--delta", "1e-5", "--dataset-size", "60000",
                            "--batch-size", "600", "--sigma", "1.1", "--format", "json"}));
  const auto& r = j["results"][0];
  const long t = r["steps"].get<long>();
  CHECK(r["epochs"].get<double>() == doctest::Approx(static_cast<double>(t) * 600.0 / 60000.0));
  CHECK(epsilon_of("0.01", "1.1", std::to_string(t), "1e-5") <= 2);
  CHECK(epsilon_of("0.01", "1.1", std::to_string(t + 1), "1e-5") > 2);
}

TEST_CASE("sampling-rate: the largest q, or batch size, within the budget") {
  const auto j = json_of(run_dpbudget({"sampling-rate", "--epsilon", "4", "--delta", "1e-5",
                                       "--sigma", "1", "--steps", "10000", "--format", "json"}));
  const double q = j["results"][0]["sampling_rate"].get<double>();
  CHECK(epsilon_of(str(q), "1", "10000", "1e-5") <= 4);
  CHECK(epsilon_of(str(q * (1 + 2e-4)), "1", "10000", "1e-5") > 4);

  // With epochs fixed, T = ceil(E N / B) moves with B.
  const auto b =
      json_of(run_dpbudget({"sampling-rate", "--epsilon", "4", "--delta", "1e-5", "--sigma", "1",
                            "--dataset-size", "60000", "--epochs", "10", "--format", "json"}));
  const auto& r = b["results"][0];
  const long batch = r["batch_size"].get<long>();
  const long steps = r["steps"].get<long>();
  CHECK(steps == static_cast<long>(std::ceil(10.0 * 60000 / static_cast<double>(batch) - 1e-9)));
  CHECK(r["epsilon"].get<double>() <= 4);
  const auto next =
      run_dpbudget({"epsilon", "--dataset-size", "60000", "--batch-size", std::to_string(batch + 1),
                    "--epochs", "10", "--sigma", "1", "--delta", "1e-5", "--format", "json"});
  CHECK(Json::parse(next.out)["results"][0]["epsilon"].get<double>() > 4);
}

TEST_CASE("no solution exits 3 with the reason on stderr") {
  const auto s =
      run_dpbudget({"steps", "--epsilon", "0.001", "--delta", "1e-5", "-q", "1", "--sigma", "1"});
  CHECK(s.status == 3);
  CHECK(s.out.empty());
  CHECK(s.err.find("one step already spends epsilon") != std::string::npos);
  const auto m = run_dpbudget({"sigma", "--epsilon", "0.01", "--delta", "1e-5", "-q", "0.5",
                               "--steps", "100000", "--max-sigma", "10"});
  CHECK(m.status == 3);
  CHECK(m.err.find("--max-sigma") != std::string::npos);
}

TEST_CASE("solving verbs refuse the quantity they solve for") {
  const auto r = run_dpbudget({"sigma", "--epsilon", "1", "--delta", "1e-5", "-q", "0.01",
                               "--steps", "100", "--sigma", "2"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--noise-multiplier") != std::string::npos);
  CHECK(run_dpbudget({"steps", "--epsilon", "1", "--delta", "1e-5", "-q", "0.01", "--sigma", "1",
                      "--steps", "5"})
            .status == 2);
  CHECK(run_dpbudget({"sigma", "--epsilon", "1", "--delta", "1e-5", "-q", "0.01", "--steps", "100",
                      "--tolerance", "0"})
            .status == 2);
}

TEST_CASE("budget gate on epsilon: full stdout, rows over named on stderr, exit 1") {
  const auto r = run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "10000",
                               "--delta", "1e-5,1e-8", "--max-epsilon", "7", "--format", "json"});
  CHECK(r.status == 1);
  const auto j = Json::parse(r.out);
  CHECK(j["results"].size() == 2);
  CHECK(r.err.find("row 2") != std::string::npos);
  CHECK(r.err.find("row 1") == std::string::npos);
  CHECK(run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "10000", "--delta",
                      "1e-5", "--max-epsilon", "7"})
            .status == 0);
}

TEST_CASE("sweep: Cartesian product in a fixed order, one row each") {
  const auto r = run_dpbudget({"sweep", "--sigma", "0.5:2:0.5", "--steps", "10,100,1000", "-q",
                               "0.001,0.01", "--delta", "1e-5,1e-6", "--format", "jsonl"});
  REQUIRE(r.status == 0);
  const auto rows = json_lines(r.out);
  REQUIRE(rows.size() == 2 * 4 * 3 * 2);
  std::size_t i = 0;
  for (double q : {0.001, 0.01})
    for (double s : {0.5, 1.0, 1.5, 2.0})
      for (long t : {10L, 100L, 1000L})
        for (double d : {1e-5, 1e-6}) {
          CAPTURE(i);
          CHECK(rows[i]["sampling_rate"].get<double>() == q);
          CHECK(rows[i]["noise_multiplier"].get<double>() == s);
          CHECK(rows[i]["steps"].get<long>() == t);
          CHECK(rows[i]["delta"].get<double>() == d);
          ++i;
        }
  // Each row equals the epsilon verb's answer for its parameters.
  CHECK(rows[5]["epsilon"].get<double>() == epsilon_of("0.001", "0.5", "1000", "1e-6"));
  CHECK(rows[40]["epsilon"].get<double>() == epsilon_of("0.01", "1.5", "1000", "1e-5"));
}

TEST_CASE("sweep: JSON document, CSV rows, large sweeps on both cores stay ordered") {
  const auto j = json_of(
      run_dpbudget({"sweep", "--sigma", "1,2", "--epochs", "1,10", "--dataset-size", "60000",
                    "--batch-size", "256", "--delta", "1e-5", "--format", "json"}));
  REQUIRE(j["results"].size() == 4);
  CHECK(j["results"][1]["epochs"].get<double>() == 10);
  CHECK(j["results"][1]["steps"].get<long>() == 2344);
  const auto c = run_dpbudget({"sweep", "-q", "0.001:0.1:0.001", "--sigma", "1", "--steps",
                               "100:2000:100", "--delta", "1e-5", "--format", "csv"});
  REQUIRE(c.status == 0);
  std::istringstream in(c.out);
  std::string line;
  std::getline(in, line);
  CHECK(line.rfind("sampling_rate,noise_multiplier,steps,", 0) == 0);
  std::size_t n = 0;
  double last_q = 0;
  while (std::getline(in, line)) {
    const double q = std::stod(line.substr(0, line.find(',')));
    CHECK(q >= last_q);
    last_q = q;
    ++n;
  }
  CHECK(n == 100 * 20);
}

TEST_CASE("sweep --solve sigma: one calibrated sigma per target") {
  const auto r = run_dpbudget({"sweep", "--solve", "sigma", "--epsilon", "1,2,4,8", "-q", "0.01",
                               "--steps", "1000", "--delta", "1e-5", "--format", "jsonl"});
  REQUIRE(r.status == 0);
  const auto rows = json_lines(r.out);
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) {
    CHECK(row["epsilon"].get<double>() <= row["target_epsilon"].get<double>());
    CHECK(epsilon_of("0.01", str(row["noise_multiplier"].get<double>()), "1000", "1e-5") <=
          row["target_epsilon"].get<double>());
  }
}

TEST_CASE("sweep budget gate: every row over is named, exit 1") {
  const auto r = run_dpbudget({"sweep", "--sigma", "0.8,1,4", "-q", "0.01", "--steps", "10000",
                               "--delta", "1e-5", "--max-epsilon", "5", "--format", "jsonl"});
  CHECK(r.status == 1);
  CHECK(json_lines(r.out).size() == 3);
  CHECK(r.err.find("row 1,") != std::string::npos);
  CHECK(r.err.find("row 2,") != std::string::npos);
  CHECK(r.err.find("row 3,") == std::string::npos);
}

TEST_CASE("sweep --input: JSON Lines configs, names echoed, per-line budgets") {
  const std::string configs =
      "{\"name\": \"small\", \"sampling_rate\": 0.01, \"noise_multiplier\": 4, \"steps\": 10000, "
      "\"delta\": 1e-5, \"epsilon\": 2}\n"
      "\n"
      "{\"name\": \"big\", \"dataset_size\": 60000, \"batch_size\": 600, \"noise_multiplier\": "
      "0.8, \"epochs\": 50, \"delta\": 1e-5, \"epsilon\": 3}\n"
      "{\"name\": \"calibrate\", \"sampling_rate\": 0.01, \"steps\": 1000, \"delta\": 1e-5, "
      "\"epsilon\": 1, \"solve\": \"noise_multiplier\"}\n";
  const auto r = run_dpbudget({"sweep", "--input", "-", "--format", "jsonl"}, configs);
  CHECK(r.status == 1);  // "big" exceeds its budget of 3
  const auto rows = json_lines(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["name"] == "small");
  CHECK(rows[0]["epsilon"].get<double>() == doctest::Approx(1.0354900660362967).epsilon(1e-9));
  CHECK(rows[1]["name"] == "big");
  CHECK(rows[1]["steps"].get<long>() == 5000);
  CHECK(rows[2]["name"] == "calibrate");
  CHECK(rows[2]["noise_multiplier"].get<double>() > 0);
  CHECK(rows[2]["epsilon"].get<double>() <= 1);
  CHECK(r.err.find("'big'") != std::string::npos);
  CHECK(r.err.find("'small'") == std::string::npos);
}

TEST_CASE("sweep --input: malformed lines name the line and key, --keep-going") {
  const std::string configs =
      "{\"sampling_rate\": 0.01, \"noise_multiplier\": 1, \"steps\": 100, \"delta\": 1e-5}\n"
      "{\"sampling_rate\": 1.5, \"noise_multiplier\": 1, \"steps\": 100, \"delta\": 1e-5}\n"
      "{\"sampling_rate\": 0.01, \"noise_multiplier\": \"1\", \"steps\": 100, \"delta\": 1e-5}\n"
      "not json\n"
      "{\"sampling_rate\": 0.01, \"noise_multiplier\": 1, \"steps\": 100, \"delta\": 1e-5, "
      "\"colour\": 1}\n"
      "{\"sampling_rate\": 0.01, \"noise_multiplier\": 1, \"delta\": 1e-5}\n"
      "[1, 2]\n";
  // A file is read whole first: the first bad line ends the sweep, nothing on
  // stdout.
  const dpb::test::TempFile file("malformed.jsonl", configs);
  const auto strict = run_dpbudget({"sweep", "--input", file.path, "--format", "jsonl"});
  CHECK(strict.status == 2);
  CHECK(strict.out.empty());
  CHECK(strict.err == "dpbudget: error: --input: " + file.path +
                          ":2: sampling_rate: must be a number in [0, 1], got the number 1.5\n");
  // Standard input with --format jsonl is answered line by line: line 1's row
  // is written before line 2 ends the sweep.
  const auto streamed = run_dpbudget({"sweep", "--input", "-", "--format", "jsonl"}, configs);
  CHECK(streamed.status == 2);
  CHECK(json_lines(streamed.out).size() == 1);
  CHECK(streamed.err ==
        "dpbudget: error: --input: <stdin>:2: sampling_rate: must be a number in [0, 1], got the "
        "number 1.5\n");
  const auto lenient =
      run_dpbudget({"sweep", "--input", file.path, "--keep-going", "--format", "jsonl"});
  CHECK(lenient.status == 2);
  CHECK(json_lines(lenient.out).size() == 1);
  for (const char* expected :
       {":2: sampling_rate", ":3: noise_multiplier", ":4: not valid JSON at column 2",
        ":5: colour: unknown key", ":6: steps: missing", ":7: expected a JSON object"})
    CHECK_MESSAGE(lenient.err.find(expected) != std::string::npos, expected, lenient.err);
  const auto missing = run_dpbudget({"sweep", "--input", "/nonexistent/x.jsonl"});
  CHECK(missing.status == 2);
  CHECK(missing.err.find("--input: cannot open") != std::string::npos);
}

TEST_CASE("sweep --accountant all: an accountant that cannot handle the run is named") {
  // GDP has no analysis of a user-level Poisson run (a mixture of Gaussians):
  // its rows are left out, with one warning on stderr and a footnote, as in
  // `epsilon --accountant all`.
  const std::vector<std::string> run = {"sweep",   "--records-per-user",
                                        "2",       "--dataset-size",
                                        "1000",    "--batch-size",
                                        "10",      "--sigma",
                                        "1",       "--steps",
                                        "100,200", "--delta",
                                        "1e-5",    "--accountant",
                                        "all"};
  auto jsonl = run;
  jsonl.insert(jsonl.end(), {"--format", "jsonl"});
  const auto r = run_dpbudget(jsonl);
  CHECK(r.status == 0);
  const auto rows = json_lines(r.out);
  CHECK(rows.size() == 6);  // rdp, composition, pld at each of 2 step counts
  for (const auto& row : rows) CHECK(row.at("accountant") != "gdp");
  // Once, not once per row.
  const std::string warning = "dpbudget: warning: skipped gdp: mixture_of_gaussians";
  CHECK(r.err.find(warning) != std::string::npos);
  CHECK(r.err.find(warning) == r.err.rfind(warning));
  CHECK(run_dpbudget(run).out.find("warning: skipped gdp") != std::string::npos);
  // The rows that are there are what `epsilon` computes for the same run.
  const auto one = json_of(run_dpbudget({"epsilon", "--records-per-user", "2", "--dataset-size",
                                         "1000", "--batch-size", "10", "--sigma", "1", "--steps",
                                         "100", "--delta", "1e-5", "--format", "json"}));
  CHECK(rows.at(0).at("accountant") == "rdp");
  CHECK(rows.at(0).at("epsilon").get<double>() ==
        one.at("results").at(0).at("epsilon").get<double>());
  // gdp alone cannot answer: exit 2 naming it.
  auto alone = run;
  alone.back() = "gdp";
  const auto refused = run_dpbudget(alone);
  CHECK(refused.status == 2);
  CHECK(refused.out.empty());
  CHECK(refused.err.find("gdp: mixture_of_gaussians") != std::string::npos);
}
