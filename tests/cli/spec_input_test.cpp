// Spec files: JSON -> events and back, and every malformed spec reported with
// the JSON pointer of the value at fault.
#include "cli/spec_input.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace dpb;
using namespace dpb::cli;

namespace {

/// The message of the SpecError `text` raises ("" when it parses).
std::string error_of(const std::string& text) {
  try {
    parse_spec(text);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

std::string nested(int events) {
  std::string s;
  for (int i = 1; i < events; ++i) s += R"({"self_composed": {"count": 2, "event": )";
  s += R"({"gaussian": {"noise_multiplier": 1}})";
  for (int i = 1; i < events; ++i) s += "}}";
  return s;
}

}  // namespace

TEST_CASE("a spec parses into the events of events.hpp") {
  const Spec s = parse_spec(R"({"composed": [
      {"self_composed": {"count": 1000, "event": {"poisson_sampled":
          {"sampling_probability": 0.01, "event": {"gaussian": {"noise_multiplier": 1.5}}}}}},
      {"sampled_without_replacement": {"source_dataset_size": 60000, "sample_size": 256,
          "event": {"gaussian": {"noise_multiplier": 2}}}},
      {"laplace": {"scale": 10}}]})");
  const auto& composed = std::get<ComposedEvent>(*s.event);
  REQUIRE(composed.events.size() == 3);
  const auto& self = std::get<SelfComposedEvent>(*composed.events[0]);
  CHECK(self.count == 1000);
  const auto& poisson = std::get<PoissonSampledEvent>(*self.event);
  CHECK(poisson.sampling_probability == 0.01);
  CHECK(std::get<GaussianEvent>(*poisson.event).noise_multiplier == 1.5);
  const auto& swor = std::get<SampledWithoutReplacementEvent>(*composed.events[1]);
  CHECK(swor.source_dataset_size == 60000);
  CHECK(swor.sample_size == 256);
  CHECK(std::get<LaplaceEvent>(*composed.events[2]).scale == 10);
}

TEST_CASE("event_to_json is the inverse of the parser, keys in canonical order") {
  const auto json = event_to_json(*make_dp_sgd(0.01, 1.0, 1000));
  CHECK(json.dump() ==
        R"({"self_composed":{"count":1000,"event":{"poisson_sampled":{"sampling_probability":)"
        R"(0.01,"event":{"gaussian":{"noise_multiplier":1.0}}}}}})");
  const Spec back = parse_spec(json.dump());
  CHECK(back.json == json.dump());
  // Integral floats are accepted for counts.
  CHECK(std::get<SelfComposedEvent>(
            *parse_spec(R"({"self_composed": {"count": 1e3, "event": {"laplace": {"scale": 1}}}})")
                 .event)
            .count == 1000);
}

TEST_CASE("malformed specs name the JSON path at fault") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {R"({"composed": [{"laplace": {"scale": 1}}, {"poisson_sampled": {"sampling_probability": 1.5,
          "event": {"gaussian": {"noise_multiplier": 1}}}}]})",
       "/composed/1/poisson_sampled/sampling_probability: must be in [0, 1]"},
      {R"({"gaussian": {"noise_multiplier": "1"}})",
       "/gaussian/noise_multiplier: must be a number, got a string"},
      {R"({"gaussian": {"noise_multiplier": true}})",
       "/gaussian/noise_multiplier: must be a number, got a boolean"},
      {R"({"gaussian": {"noise_multiplier": 0}})",
       "/gaussian/noise_multiplier: must be a finite number > 0"},
      {R"({"laplace": {"scale": -2}})", "/laplace/scale: must be a finite number > 0"},
      {R"({"gaussian": {}})", "/gaussian/noise_multiplier: missing"},
      {R"({"gaussian": 1})", "/gaussian: must be an object with noise_multiplier, got a number"},
      {R"({"gaussian": {"noise_multiplier": 1, "sigma": 1}})",
       "/gaussian/sigma: unknown key (allowed: noise_multiplier)"},
      {R"({"gaussian": {"noise_multiplier": 1, "a/b~": 1}})", "/gaussian/a~1b~0: unknown key"},
      {R"({"self_composed": {"count": -1, "event": {"laplace": {"scale": 1}}}})",
       "/self_composed/count: must be an integer >= 0"},
      {R"({"self_composed": {"count": 2.5, "event": {"laplace": {"scale": 1}}}})",
       "/self_composed/count: must be an integer >= 0"},
      {R"({"self_composed": {"count": 1e300, "event": {"laplace": {"scale": 1}}}})",
       "/self_composed/count: must be an integer >= 0"},
      {R"({"self_composed": {"count": 3}})", "/self_composed/event: missing"},
      {R"({"sampled_without_replacement": {"source_dataset_size": 10, "sample_size": 11,
          "event": {"laplace": {"scale": 1}}}})",
       "/sampled_without_replacement/sample_size: must be <= source_dataset_size (10)"},
      {R"({"sampled_without_replacement": {"source_dataset_size": 0, "sample_size": 0,
          "event": {"laplace": {"scale": 1}}}})",
       "/sampled_without_replacement/source_dataset_size: must be an integer >= 1"},
      {R"({"poisson_sampled": {"sampling_probability": 0.1, "event": {"lapalce": {"scale": 1}}}})",
       "/poisson_sampled/event/lapalce: unknown event 'lapalce'"},
      {R"({"gaussian": {"noise_multiplier": 1}, "laplace": {"scale": 1}})",
       "(top level): one event name per object, got 'gaussian' and 'laplace'"},
      {R"({})", "(top level): empty object"},
      {R"([1])", "(top level): expected an event object"},
      {R"({"composed": []})", "/composed: must be a non-empty array of events"},
      {R"({"composed": {"laplace": {"scale": 1}}})", "/composed: must be a non-empty array"},
      {R"({"composed": [{"laplace": {"scale": 1}}, 7]})", "/composed/1: expected an event object"},
      {R"({"gaussian": )", "(top level): not valid JSON"},
      {"", "(top level): not valid JSON"},
      // Found by fuzz_spec: a number past the double range is a clean error.
      {R"({"self_composed": {"count": 6e3300, "event": {"laplace": {"scale": 1}}}})",
       "(top level): not valid JSON: number overflow"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.text);
    INFO("spec: ", c.text, "\nerror: ", e);
    CHECK(e.rfind(c.message, 0) == 0);
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("nesting is limited to kMaxSpecDepth events, checked before recursing") {
  CHECK(error_of(nested(kMaxSpecDepth)).empty());
  CHECK(error_of(nested(kMaxSpecDepth + 1)).find("deeper than 64") != std::string::npos);
  // Far deeper JSON is stopped while parsing, without building it.
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  CHECK(error_of(deep) == "(top level): nested deeper than 64 events (the limit)");
}

TEST_CASE("specs over the size limit are refused") {
  std::string big = R"({"laplace": {"scale": 1}})";
  big += std::string(kMaxSpecBytes, ' ');
  CHECK(error_of(big) == "(top level): larger than 16 MiB (the limit)");
}
