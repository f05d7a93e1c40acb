// The run-parameter table (cli/flags/run_parameters.hpp) against the whole command
// line: every parameter is a flag of every DP-SGD verb, has its JSON Lines
// key, and is refused beside --spec and --input; parameters that stand in for
// another are refused beside it, as flags and as keys. Driven by the table,
// so a new parameter is covered without touching this file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/errors.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/config_input.hpp"
#include "support/refusal.hpp"

using namespace dpb::cli;
using dpb::test::check_refused;

// The refusal the support library checks is the CLI's usage error.
static_assert(dpb::test::kExitBadInput == kUsage);

namespace {

struct Result {
  int status;
  std::string out, err;
};

Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "dpbudget");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int status = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

/// A valid command-line value of `p` and the same as JSON.
std::string sample_text(const RunParameter& p) {
  switch (p.kind) {
    case ParamKind::probability:
      return "0.5";
    case ParamKind::positive_real:
      return "2";
    case ParamKind::count:
      return "10";
    case ParamKind::choice:
      return choice_names(p.id).back();
    case ParamKind::positive_list:
      return "1,2";
  }
  return "";
}

nlohmann::json sample_json(const RunParameter& p) {
  switch (p.kind) {
    case ParamKind::probability:
      return 0.5;
    case ParamKind::positive_real:
      return 2.0;
    case ParamKind::count:
      return 10;
    case ParamKind::choice:
      return choice_names(p.id).back();
    case ParamKind::positive_list:
      return nlohmann::json::array({1.0, 2.0});
  }
  return nullptr;
}

class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_("/tmp/dpbudget_run_parameters_test_" + std::to_string(::getpid()) + "_" +
              std::to_string(counter_++)) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

const std::string kSpec =
    R"({"self_composed": {"count": 10, "event": {"poisson_sampled": )"
    R"({"sampling_probability": 0.01, "event": {"gaussian": {"noise_multiplier": 1}}}}}})";
const std::string kRunLine =
    R"({"sampling_rate": 0.01, "noise_multiplier": 1, "steps": 10, "delta": 1e-5})";

}  // namespace

TEST_CASE("run parameters: a choice parameter lists its choices, the others none") {
  for (const auto& p : kRunParameters) {
    CAPTURE(p.key);
    CHECK(choice_names(p.id).empty() == (p.kind != ParamKind::choice));
    if (!p.default_value.empty() && p.kind == ParamKind::choice) {
      const auto names = choice_names(p.id);
      CHECK(std::find(names.begin(), names.end(), p.default_value) != names.end());
    }
  }
}

// (The table's order, which run_parameter() indexes by, is a static_assert in
// cli/flags/run_parameters.hpp.)
TEST_CASE("run parameters: names are unique, flags are listed in their CLI11 names") {
  for (std::size_t i = 0; i < kRunParameters.size(); ++i) {
    const auto& p = kRunParameters[i];
    CAPTURE(p.key);
    CHECK(std::string(p.names).find(p.flag) != std::string::npos);
    CHECK(!p.help.empty());
    for (std::size_t j = 0; j < i; ++j) {
      CHECK(kRunParameters[j].key != p.key);
      CHECK(kRunParameters[j].flag != p.flag);
    }
  }
}

TEST_CASE("run parameters: every one is a flag of every DP-SGD verb") {
  for (const char* verb :
       {"epsilon", "delta", "sigma", "steps", "sampling-rate", "sweep", "plot", "gdp"})
    for (const auto& p : kRunParameters) {
      CAPTURE(verb);
      CAPTURE(p.flag);
      const auto r = run({verb, std::string(p.flag), sample_text(p), "--bogus"});
      // The parser knows the flag: the error is about --bogus alone (an
      // unknown flag would be listed with it).
      CHECK(r.status == kUsage);
      CHECK(r.err.find("--bogus") != std::string::npos);
      for (const char* after : {" ", "\n"})
        CHECK(r.err.find(std::string(p.flag) + after) == std::string::npos);
    }
}

TEST_CASE("run parameters: each flag beside --spec is refused naming both (and --print-spec)") {
  const TempFile spec(kSpec);
  for (const char* verb : {"epsilon", "delta"})
    for (const auto& p : kRunParameters) {
      CAPTURE(verb);
      CAPTURE(p.flag);
      const std::string target = std::string(verb) == "epsilon" ? "--delta" : "--epsilon";
      check_refused(
          run({verb, "--spec", spec.path(), std::string(p.flag), sample_text(p), target, "0.5"}),
          {std::string(p.flag), "--spec"});
      check_refused(
          run({verb, "--print-spec", "--spec", spec.path(), std::string(p.flag), sample_text(p)}),
          {std::string(p.flag), "--spec"});
    }
  // Without run flags the spec is read.
  CHECK(run({"epsilon", "--spec", spec.path(), "--delta", "1e-5"}).status == kOk);
}

TEST_CASE("run parameters: each flag beside sweep --input is refused naming both and the key") {
  const TempFile input(kRunLine + "\n");
  for (const auto& p : kRunParameters) {
    CAPTURE(p.flag);
    check_refused(run({"sweep", "--input", input.path(), std::string(p.flag), sample_text(p)}),
                  {std::string(p.flag), "--input", "\"" + std::string(p.key) + "\""});
  }
  CHECK(run({"sweep", "--input", input.path()}).status == kOk);
}

TEST_CASE("run parameters: every one has its JSON Lines key") {
  for (const auto& p : kRunParameters) {
    CAPTURE(p.key);
    nlohmann::json line = nlohmann::json::parse(kRunLine);
    line[std::string(p.key)] = sample_json(p);
    std::istringstream in(line.dump() + "\n");
    const auto r = read_configs(in, "in.jsonl");
    // A line may be refused for a combination (e.g. a stand-in beside what it
    // replaces), never for an unknown key.
    for (const auto& e : r.errors) CHECK(e.message.find("unknown key") == std::string::npos);
    // The value arrives: the same parameter given as a flag gives the same values.
    if (r.errors.empty()) {
      REQUIRE(r.configs.size() == 1);
      const auto parsed = parse_json_value(p, sample_json(p));
      DpSgdValues expected = r.configs[0].values;
      set_value(expected, p.id, parsed);
      CHECK(expected.sampling == r.configs[0].values.sampling);
      CHECK(expected.noise_multiplier == r.configs[0].values.noise_multiplier);
      CHECK(expected.sampling_rate == r.configs[0].values.sampling_rate);
      CHECK(expected.steps == r.configs[0].values.steps);
      CHECK(expected.dataset_size == r.configs[0].values.dataset_size);
      CHECK(expected.batch_size == r.configs[0].values.batch_size);
      CHECK(expected.epochs == r.configs[0].values.epochs);
      CHECK(expected.last_batch == r.configs[0].values.last_batch);
      CHECK(expected.group_noise_multipliers == r.configs[0].values.group_noise_multipliers);
    }
  }
}

TEST_CASE("run parameters: a stand-in beside what it replaces is refused, as flags and keys") {
  int stand_ins = 0;
  for (const auto& p : kRunParameters) {
    if (!p.instead_of) continue;
    ++stand_ins;
    const auto& other = run_parameter(*p.instead_of);
    CAPTURE(p.flag);
    for (const char* verb : {"epsilon", "sweep"}) {
      // The pair, beside a run that is complete without them (--steps only
      // when it is not one of the pair).
      std::vector<std::string> args{verb, "-q", "0.01", "--delta", "1e-5"};
      if (other.id != RunParam::steps) args.insert(args.end(), {"--steps", "10"});
      args.insert(args.end(), {std::string(p.flag), sample_text(p), std::string(other.flag),
                               sample_text(other)});
      check_refused(run(args), {std::string(p.flag), std::string(other.flag)});
    }
    nlohmann::json line = nlohmann::json::parse(kRunLine);
    line[std::string(p.key)] = sample_json(p);
    line[std::string(other.key)] = sample_json(other);
    std::istringstream in(line.dump() + "\n");
    const auto r = read_configs(in, "in.jsonl");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].message.find(std::string(p.key)) != std::string::npos);
    CHECK(r.errors[0].message.find(std::string(other.key)) != std::string::npos);
  }
  // --group-noise-multipliers and --noise-std in place of --noise-multiplier; --clients,
  // --clients-per-round and --rounds in place of --dataset-size, --batch-size and --steps.
  CHECK(stand_ins == 5);
}

TEST_CASE("run parameters: a JSON value of the wrong kind names the key and what is allowed") {
  for (const auto& p : kRunParameters) {
    CAPTURE(p.key);
    nlohmann::json line = nlohmann::json::parse(kRunLine);
    line[std::string(p.key)] = "nonsense";
    std::istringstream in(line.dump() + "\n");
    const auto r = read_configs(in, "in.jsonl");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].message.rfind(std::string(p.key) + ": must be", 0) == 0);
  }
}

TEST_CASE("sweep: --keep-going without --input is refused naming both") {
  check_refused(run({"sweep", "--keep-going", "-q", "0.01", "--sigma", "1", "--steps", "10",
                     "--delta", "1e-5"}),
                {"--keep-going", "--input"});
}

TEST_CASE("derive: messages name flags or keys as asked") {
  DpSgdValues v;
  v.noise_multiplier = 1;
  v.steps = 10;
  v.batch_size = 10;
  v.dataset_size = 5;
  for (auto [naming, batch, dataset] : {std::tuple{Naming::flags, "--batch-size", "--dataset-size"},
                                        std::tuple{Naming::keys, "batch_size", "dataset_size"}}) {
    try {
      derive(v, Unknown::none, naming);
      FAIL("no error");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()) ==
            std::string(batch) + ": must be <= " + dataset + " (5), got 10");
    }
  }
}

TEST_CASE("sampling schemes: the results' name is the flag's choice with underscores") {
  // Two spellings of one scheme (--sampling balls-in-bins; "sampling":
  // "balls_in_bins" in results and messages about keys): they may not drift.
  for (const auto& c : kSamplingChoices) {
    std::string flag_name(c.name);
    std::replace(flag_name.begin(), flag_name.end(), '-', '_');
    CHECK(std::string(dpb::to_string(c.value)) == flag_name);
  }
}
