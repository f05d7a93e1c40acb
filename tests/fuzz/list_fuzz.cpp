// Fuzzes the number, list and range parser (parse.hpp) and the number-list
// reader of --coefficients and --matrix (cli/input/number_list.hpp). The first
// byte picks the domain; the rest is the flag value (and, whole, a number-list
// file). Every value returned must lie in the domain, integer lists must hold
// integers >= their minimum, a number list holds only finite numbers in at
// least one non-empty row, and bad input must be a UsageError naming the flag.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"
#include "cli/input/number_list.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using namespace dpb::cli;
  static const Domain kDomains[] = {kProbability, kOpenUnit, kPositive, kNonNegative, kOrder};
  const Domain& domain = kDomains[data[0] % 5];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  // Two texts as from a repeated flag: split at the first NUL.
  std::vector<std::string> texts;
  const auto nul = text.find('\0');
  if (nul == std::string::npos)
    texts = {text};
  else
    texts = {text.substr(0, nul), text.substr(nul + 1)};

  try {
    for (double v : parse_list("--x", texts, domain))
      if (!domain.contains(v)) dpb::fuzz::fail("parse_list value outside its domain", text);
  } catch (const UsageError&) {
  }
  try {
    for (std::int64_t v : parse_integer_list("--n", texts, 1))
      if (v < 1) dpb::fuzz::fail("parse_integer_list value below its minimum", text);
  } catch (const UsageError&) {
  }
  try {
    const double v = parse_real("--x", texts[0], domain);
    if (!domain.contains(v)) dpb::fuzz::fail("parse_real value outside its domain", text);
  } catch (const UsageError&) {
  }
  try {
    if (parse_integer("--n", texts[0], 0) < 0)
      dpb::fuzz::fail("parse_integer below its minimum", text);
  } catch (const UsageError&) {
  }
  try {
    const auto rows = parse_number_rows("--matrix", "fuzz.csv", text);
    if (rows.empty()) dpb::fuzz::fail("number list of no rows", text);
    for (const auto& row : rows)
      for (double v : row)
        if (!std::isfinite(v)) dpb::fuzz::fail("number list value not finite", text);
  } catch (const UsageError& e) {
    if (std::string(e.what()).rfind("--matrix: ", 0) != 0)
      dpb::fuzz::fail("number list message names no flag", e.what());
  }
  return 0;
}
