#pragma once
// The JSON document a successful run printed (the run must exit 0; its
// stderr is shown when it does not).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "run.hpp"

namespace dpb::test {

inline nlohmann::json json_of(const Run& r) {
  REQUIRE_MESSAGE(r.status == 0, r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace dpb::test
