// Spec files: JSON -> events and back, and every malformed spec reported with
// the JSON pointer of the value at fault.
#include "cli/input/spec_input.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "accounting/events/event_examples.hpp"

using namespace dpb;
using namespace dpb::cli;

namespace {

/// The message of the SpecError `text` raises ("" when it parses).
std::string spec_error_of(const std::string& text) {
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
    const std::string e = spec_error_of(c.text);
    INFO("spec: ", c.text, "\nerror: ", e);
    CHECK(e.rfind(c.message, 0) == 0);
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("nesting is limited to kMaxSpecDepth events, checked before recursing") {
  CHECK(spec_error_of(nested(kMaxSpecDepth)).empty());
  CHECK(spec_error_of(nested(kMaxSpecDepth + 1)).find("deeper than 64") != std::string::npos);
  // Far deeper JSON is stopped while parsing, without building it.
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  CHECK(spec_error_of(deep) == "(top level): nested deeper than 64 events (the limit)");
}

TEST_CASE("specs over the size limit are refused") {
  std::string big = R"({"laplace": {"scale": 1}})";
  big += std::string(kMaxSpecBytes, ' ');
  CHECK(spec_error_of(big) == "(top level): larger than 16 MiB (the limit)");
}

TEST_CASE("every kind's example event: JSON -> event -> JSON is the identity") {
  for_each_event_kind([]<typename Kind>() {
    const EventPtr example = example_event<Kind>();
    const std::string json = event_to_json(*example).dump();
    CAPTURE(json);
    const Spec back = parse_spec(json);
    CHECK(back.json == json);
    CHECK(back.event->index() == example->index());
  });
}

TEST_CASE("dp_accounting's class_name form reads as the same events as the snake-case form") {
  // A nested ledger as DpEvent.to_named_tuple() turned into dicts gives it:
  // module_name beside every class_name, fields in dp_accounting's order.
  const std::string python = R"({"module_name": "dp_accounting.dp_event",
    "class_name": "ComposedDpEvent", "events": [
    {"module_name": "dp_accounting.dp_event", "class_name": "SelfComposedDpEvent",
     "event": {"module_name": "dp_accounting.dp_event", "class_name": "PoissonSampledDpEvent",
       "sampling_probability": 0.01,
       "event": {"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent",
         "noise_multiplier": 1.1}},
     "count": 1000},
    {"class_name": "ComposedDpEvent", "events": [
      {"class_name": "LaplaceDpEvent", "noise_multiplier": 2.0},
      {"class_name": "ZCDpEvent", "rho": 0.25, "xi": 0.0}]},
    {"class_name": "RepeatAndSelectDpEvent",
     "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 2.0},
     "mean": 10.0, "shape": "inf"},
    {"class_name": "SingleEpochTreeAggregationDpEvent", "noise_multiplier": 3.0,
     "step_counts": 100},
    {"class_name": "SingleEpochTreeAggregationDpEvent", "noise_multiplier": 3.0,
     "step_counts": [100, 50]},
    {"class_name": "DiscreteGaussianDpEvent", "sigma": 2.0, "sensitivity": 1.0, "dimension": 1},
    {"class_name": "MixtureOfGaussiansDpEvent", "standard_deviation": 1.0,
     "sensitivities": [0.0, 1.0], "sampling_probs": [0.9, 0.1]},
    {"class_name": "NoOpDpEvent"}]})";
  const std::string snake = R"({"composed": [
    {"self_composed": {"count": 1000, "event": {"poisson_sampled": {"sampling_probability": 0.01,
        "event": {"gaussian": {"noise_multiplier": 1.1}}}}}},
    {"composed": [{"laplace": {"scale": 2.0}}, {"zcdp": {"rho": 0.25}}]},
    {"repeat_and_select": {"event": {"gaussian": {"noise_multiplier": 2}}, "mean": 10,
        "shape": "inf"}},
    {"single_epoch_tree_aggregation": {"noise_multiplier": 3, "step_counts": [100]}},
    {"single_epoch_tree_aggregation": {"noise_multiplier": 3, "step_counts": [100, 50]}},
    {"discrete_gaussian": {"sigma": 2}},
    {"mixture_of_gaussians": {"standard_deviation": 1, "sensitivities": [0, 1],
        "sampling_probs": [0.9, 0.1]}},
    {"no_op": {}}]})";
  const Spec from_python = parse_spec(python);
  const Spec from_snake = parse_spec(snake);
  CHECK(from_python.json == from_snake.json);
  // And the values themselves, not only their printed form.
  const auto& list = std::get<ComposedEvent>(*from_python.event).events;
  REQUIRE(list.size() == 8);
  const auto& tuning = std::get<RepeatAndSelectEvent>(*list[2]);
  CHECK(std::isinf(tuning.shape));
  CHECK(tuning.mean == 10);
  CHECK(std::get<SingleEpochTreeAggregationEvent>(*list[3]).step_counts ==
        std::vector<std::int64_t>{100});
  CHECK(std::get<SingleEpochTreeAggregationEvent>(*list[4]).step_counts ==
        std::vector<std::int64_t>{100, 50});
  CHECK(std::get<LaplaceEvent>(*std::get<ComposedEvent>(*list[1]).events[0]).scale == 2.0);
  const auto& dg = std::get<DiscreteGaussianEvent>(*list[5]);
  CHECK(dg.sensitivity == 1);
  CHECK(dg.dimension == 1);
}
