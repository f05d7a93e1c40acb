// Fuzzes spec files (parse_spec): malformed input must be a SpecError naming
// a JSON path, never a crash. A spec that parses must survive the round trip
// through its canonical JSON, and the RDP accountant (fast for any count)
// must answer for it without NaN.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "accounting/accountant.hpp"
#include "accounting/errors.hpp"
#include "cli/input/spec_input.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  dpb::cli::Spec spec;
  try {
    spec = dpb::cli::parse_spec(text);
  } catch (const dpb::cli::SpecError&) {
    return 0;
  }
  if (!spec.event) dpb::fuzz::fail("parse_spec returned no event", text);
  const std::string canonical = dpb::cli::event_to_json(*spec.event).dump();
  if (canonical != spec.json) dpb::fuzz::fail("json is not the canonical form", text);
  if (dpb::cli::parse_spec(canonical).json != canonical)
    dpb::fuzz::fail("canonical form does not round-trip", canonical);

  auto rdp = dpb::make_accountant("rdp", {});
  if (!rdp->supports(*spec.event)) return 0;
  try {
    rdp->compose(*spec.event);
    const auto g = rdp->epsilon(1e-5);
    if (std::isnan(g.epsilon) || g.epsilon < 0) dpb::fuzz::fail("rdp epsilon", canonical);
  } catch (const dpb::InvalidParameter&) {
  }
  return 0;
}
