#pragma once
// The JSON document a successful run printed (the run must exit 0; its
// stderr is shown when it does not).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"

namespace dpb::test {

inline nlohmann::json json_of(const Run& r) {
  REQUIRE_MESSAGE(r.status == 0, r.err);
  return nlohmann::json::parse(r.out);
}

/// The objects of JSON Lines output, one per non-empty line.
inline std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace dpb::test
