#pragma once
// The JSON document a successful run printed (the run must exit 0; its
// stderr is shown when it does not).
#include <doctest/doctest.h>

#include <cstdio>
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

/// The event of one phase's flags, as `epsilon --print-spec` prints it.
inline nlohmann::json phase_spec(const std::vector<std::string>& flags) {
  const auto r = run_dpbudget(with({"epsilon", "--print-spec"}, flags));
  REQUIRE_MESSAGE(r.status == 0, r.err);
  return nlohmann::json::parse(r.out);
}

/// `v` as a command-line argument that reads back as the same double (%.17g).
inline std::string str(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// ε of `dpbudget epsilon -q q --sigma sigma --steps steps --delta delta`
/// (the default accountant), for feeding a solved value back.
inline double epsilon_of(const std::string& q, const std::string& sigma, const std::string& steps,
                         const std::string& delta) {
  const auto j = json_of(run_dpbudget({"epsilon", "-q", q, "--sigma", sigma, "--steps", steps,
                                       "--delta", delta, "--format", "json"}));
  return j.at("results").at(0).at("epsilon").get<double>();
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
