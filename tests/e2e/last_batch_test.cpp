// --last-batch drop|keep (issue 13, point 9): the steps per epoch in the words
// of PyTorch's DataLoader, E·⌊N/B⌋ or E·⌈N/B⌉ steps; without it, ⌈E·N/B⌉ (and
// ⌈E/q⌉ with -q). In the output and on --input lines; refused where it cannot
// apply. Checked against TensorFlow Privacy's MNIST tutorial, which drops the
// last partial batch (steps_per_epoch = 60000 // batch_size).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "refused.hpp"
#include "run_json.hpp"

using dpb::test::check_refused;
using dpb::test::json_of;
using dpb::test::kTwoDecimals;
using dpb::test::run_dpbudget;
using dpb::test::with;
using Json = nlohmann::json;

namespace {

/// TF Privacy's MNIST tutorial (tutorials/mnist_dpsgd_tutorial.py, 2019):
/// 60000 examples, batches of 256, noise multiplier 1.1, 60 epochs of
/// 60000 // 256 = 234 steps, delta 1e-5, its orders
/// `[1 + x / 10. for x in range(1, 100)] + list(range(12, 64))` and the
/// classic conversion of its get_privacy_spent() of the time (Mironov 2017).
const std::vector<std::string> kTutorial = {"epsilon",
                                            "--dataset-size",
                                            "60000",
                                            "--batch-size",
                                            "256",
                                            "--sigma",
                                            "1.1",
                                            "--epochs",
                                            "60",
                                            "--delta",
                                            "1e-5",
                                            "--conversion",
                                            "classic",
                                            "--orders",
                                            "1.1:10.9:0.1,12:63",
                                            "--format",
                                            "json"};

}  // namespace

TEST_CASE("--last-batch drop reproduces TF Privacy's MNIST tutorial: epsilon 3.01, T = 60 * 234") {
  const auto j = json_of(run_dpbudget(with(kTutorial, {"--last-batch", "drop"})));
  CHECK(j["inputs"]["steps"] == 14040);
  CHECK(j["inputs"]["last_batch"] == "drop");
  CHECK(j["inputs"]["epochs"] == 60);
  CHECK(j["inputs"]["sampling_rate"].get<double>() == 256.0 / 60000.0);
  const double eps = j["results"][0]["epsilon"].get<double>();
  CHECK(std::abs(eps - 3.01) < kTwoDecimals);
  // With TF Privacy's legacy compute_dp_sgd_privacy orders (tests/reference/
  // orders.md) in place of the tutorial's own, the same row also prints 3.01.
  auto legacy = with(kTutorial, {"--last-batch", "drop"});
  legacy[std::find(legacy.begin(), legacy.end(), "--orders") - legacy.begin() + 1] =
      "1.25,1.5,1.75,2,2.25,2.5,3,3.5,4,4.5,5:63,128,256,512";
  const auto l = json_of(run_dpbudget(legacy));
  CHECK(l["inputs"]["steps"] == 14040);
  CHECK(std::abs(l["results"][0]["epsilon"].get<double>() - 3.01) < kTwoDecimals);
}

TEST_CASE("--last-batch keep counts ceil(N/B) per epoch, and without it T = ceil(E*N/B)") {
  const auto drop = json_of(run_dpbudget(with(kTutorial, {"--last-batch", "drop"})));
  const auto keep = json_of(run_dpbudget(with(kTutorial, {"--last-batch", "keep"})));
  const auto none = json_of(run_dpbudget(kTutorial));
  CHECK(keep["inputs"]["steps"] == 14100);  // 60 * 235 (Opacus' len(data_loader))
  CHECK(keep["inputs"]["last_batch"] == "keep");
  CHECK(none["inputs"]["steps"] == 14063);  // ceil(60 * 60000 / 256) = ceil(14062.5)
  CHECK(!none["inputs"].contains("last_batch"));
  auto eps = [](const Json& j) { return j["results"][0]["epsilon"].get<double>(); };
  CHECK(eps(drop) < eps(none));
  CHECK(eps(none) < eps(keep));
  // Where B divides N the three rules agree.
  for (const char* rule : {"drop", "keep"}) {
    const auto j = json_of(run_dpbudget({"epsilon", "--dataset-size", "60000", "--batch-size",
                                         "150", "--sigma", "1.3", "--epochs", "15", "--last-batch",
                                         rule, "--delta", "1e-5", "--format", "json"}));
    CHECK(j["inputs"]["steps"] == 6000);
  }
}

TEST_CASE("--last-batch: the text output states the rule and the T used") {
  const auto r =
      run_dpbudget({"epsilon", "--dataset-size", "60000", "--batch-size", "256", "--sigma", "1.1",
                    "--epochs", "60", "--last-batch", "drop", "--delta", "1e-5"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("last_batch") != std::string::npos);
  CHECK(r.out.find("drop") != std::string::npos);
  CHECK(r.out.find("14040") != std::string::npos);
}

TEST_CASE("-q with --epochs gives T = ceil(E/q), as Opacus and TF Privacy's statement count") {
  // Opacus accountants_test: steps = int(90 / 0.04) = 2250.
  auto steps = [](const std::string& q, const std::string& epochs) {
    return json_of(run_dpbudget({"epsilon", "-q", q, "--sigma", "1", "--epochs", epochs, "--delta",
                                 "1e-5", "--format", "json"}))["inputs"]["steps"]
        .get<std::int64_t>();
  };
  CHECK(steps("0.04", "90") == 2250);
  CHECK(steps("0.0064", "5") == 782);  // ceil(781.25): 10000 examples, batches of 64
  // --help says so.
  const auto help = run_dpbudget({"epsilon", "--help"});
  CHECK(help.status == 0);
  CHECK(help.out.find("ceil(epochs / q)") != std::string::npos);
  CHECK(help.out.find("--last-batch") != std::string::npos);
}

TEST_CASE("--last-batch on the other verbs: sigma, steps, sampling-rate, sweep, --print-spec") {
  const std::vector<std::string> run = {"--dataset-size", "60000", "--batch-size", "256",
                                        "--last-batch",   "drop"};
  const auto sigma = json_of(run_dpbudget(with(
      {"sigma", "--epochs", "60", "--epsilon", "3", "--delta", "1e-5", "--format", "json"}, run)));
  CHECK(sigma["inputs"]["steps"] == 14040);
  CHECK(sigma["inputs"]["last_batch"] == "drop");

  // steps: the epochs its T makes, 234 steps each.
  const auto steps = json_of(run_dpbudget(with(
      {"steps", "--sigma", "1.1", "--epsilon", "3", "--delta", "1e-5", "--format", "json"}, run)));
  const auto& s = steps["results"][0];
  CHECK(s["epochs"].get<double>() == s["steps"].get<double>() / 234.0);

  // sampling-rate: the largest batch, T = 10 epochs of ceil(N/B) steps.
  const auto rate = json_of(run_dpbudget({"sampling-rate", "--dataset-size", "60000", "--epochs",
                                          "10", "--last-batch", "keep", "--sigma", "1", "--epsilon",
                                          "4", "--delta", "1e-5", "--format", "json"}));
  const auto& r = rate["results"][0];
  const std::int64_t b = r["batch_size"].get<std::int64_t>();
  CHECK(r["steps"].get<std::int64_t>() == 10 * ((60000 + b - 1) / b));
  CHECK(rate["inputs"]["last_batch"] == "keep");

  // sweep: every row under the rule.
  const auto sweep = json_of(run_dpbudget(with(
      {"sweep", "--sigma", "1.1", "--epochs", "1,2", "--delta", "1e-5", "--format", "json"}, run)));
  REQUIRE(sweep["results"].size() == 2);
  CHECK(sweep["results"][0]["steps"] == 234);
  CHECK(sweep["results"][1]["steps"] == 468);
  CHECK(sweep["results"][0]["last_batch"] == "drop");

  // --print-spec: the event counts the same steps.
  const auto spec = json_of(
      run_dpbudget(with({"epsilon", "--print-spec", "--sigma", "1.1", "--epochs", "60"}, run)));
  CHECK(spec["self_composed"]["count"] == 14040);
}

TEST_CASE(
    "--input: the key last_batch equals the flag, and is refused by key where it cannot apply") {
  const auto by_flags = json_of(run_dpbudget(with(kTutorial, {"--last-batch", "drop"})));
  const auto r =
      run_dpbudget({"sweep", "--input", "-", "--conversion", "classic", "--orders",
                    "1.1:10.9:0.1,12:63", "--format", "json"},
                   R"({"dataset_size":60000,"batch_size":256,"noise_multiplier":1.1,"epochs":60,)"
                   R"("last_batch":"drop","delta":1e-5})"
                   "\n");
  const auto j = json_of(r);
  REQUIRE(j["results"].size() == 1);
  CHECK(j["results"][0]["steps"] == 14040);
  CHECK(j["results"][0]["last_batch"] == "drop");
  CHECK(j["results"][0]["epsilon"] == by_flags["results"][0]["epsilon"]);

  check_refused(run_dpbudget({"sweep", "--input", "-"},
                             R"({"sampling_rate":0.01,"noise_multiplier":1,"epochs":3,)"
                             R"("last_batch":"keep","delta":1e-5})"
                             "\n"),
                {"<stdin>:1: last_batch: needs dataset_size and batch_size"});
  check_refused(run_dpbudget({"sweep", "--input", "-"},
                             R"({"dataset_size":1000,"batch_size":10,"noise_multiplier":1,)"
                             R"("epochs":3,"last_batch":"dropped","delta":1e-5})"
                             "\n"),
                {"<stdin>:1: last_batch: must be one of drop, keep"});
  // Beside --input the flag is refused, naming the key to use.
  check_refused(run_dpbudget({"sweep", "--input", "-", "--last-batch", "drop"},
                             R"({"sampling_rate":0.01,"noise_multiplier":1,"steps":3,"delta":1e-5})"
                             "\n"),
                {"--last-batch", "--input", "\"last_batch\""});
}

TEST_CASE("--last-batch: refused (exit 2, one line naming the flags) where it cannot apply") {
  const std::vector<std::string> sigma = {"--sigma", "1", "--delta", "1e-5"};
  // Without N and B there is no partial batch to drop or keep.
  check_refused(
      run_dpbudget(with({"epsilon", "-q", "0.01", "--epochs", "3", "--last-batch", "drop"}, sigma)),
      {"--last-batch", "--dataset-size", "--batch-size"});
  check_refused(run_dpbudget({"steps", "-q", "0.01", "--sigma", "1", "--last-batch", "drop",
                              "--epsilon", "1", "--delta", "1e-5"}),
                {"--last-batch", "--dataset-size", "--batch-size"});
  // With --steps the rule has nothing to count.
  check_refused(run_dpbudget(with({"epsilon", "--dataset-size", "1000", "--batch-size", "10",
                                   "--steps", "100", "--last-batch", "keep"},
                                  sigma)),
                {"--last-batch", "--epochs"});
  // A fractional epoch has no rule for where it stops: refused, not rounded.
  check_refused(run_dpbudget(with({"epsilon", "--dataset-size", "1000", "--batch-size", "30",
                                   "--epochs", "2.5", "--last-batch", "drop"},
                                  sigma)),
                {"--epochs", "--last-batch", "whole", "2.5"});
  check_refused(
      run_dpbudget({"sampling-rate", "--dataset-size", "1000", "--epochs", "2.5", "--last-batch",
                    "drop", "--sigma", "1", "--epsilon", "1", "--delta", "1e-5"}),
      {"--epochs", "--last-batch", "2.5"});
  check_refused(run_dpbudget(with({"epsilon", "--dataset-size", "1000", "--batch-size", "10",
                                   "--epochs", "3", "--last-batch", "dropped"},
                                  sigma)),
                {"--last-batch", "drop, keep", "'dropped'"});
  check_refused(run_dpbudget(with({"epsilon", "--dataset-size", "1000", "--batch-size", "10",
                                   "--epochs", "3", "--last-batch", "drop", "--last-batch", "keep"},
                                  sigma)),
                {"--last-batch", "one value"});
}

TEST_CASE("--last-batch: plot refuses it rather than plot another rule's steps") {
  check_refused(
      run_dpbudget({"plot", "--dataset-size", "60000", "--batch-size", "256", "--sigma", "1.1",
                    "--epochs", "1:60", "--last-batch", "drop", "--delta", "1e-5", "-o", "-"}),
      {"--last-batch"});
}
