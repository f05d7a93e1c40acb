#include <stdexcept>

#include "accounting/accountant.hpp"
#include "accounting/composition/composition_accountant.hpp"
#include "accounting/gdp/gdp_accountant.hpp"
#include "accounting/pld/pld_accountant.hpp"
#include "accounting/rdp/rdp_accountant.hpp"

namespace dpb {

std::string_view to_string(BoundKind b) {
  switch (b) {
    case BoundKind::upper:
      return "upper";
    case BoundKind::approximate:
      return "approximate";
    case BoundKind::lower:
      return "lower";
    case BoundKind::estimate:
      return "estimate";
  }
  return "?";
}

std::string_view to_string(LowerEnd l) {
  switch (l) {
    case LowerEnd::lower_bound:
      return "lower bound";
    case LowerEnd::accuracy:
      return "accuracy";
  }
  return "?";
}

const std::vector<AccountantInfo>& accountants() {
  static const std::vector<AccountantInfo> all = {
      {"rdp", "moments accountant: Renyi DP converted to (epsilon, delta)",
       [](const AccountantOptions& o) { return std::make_unique<RdpAccountant>(o); }},
      {"gdp", "Gaussian DP: exact for Gaussian releases, central-limit approximation for DP-SGD",
       [](const AccountantOptions& o) { return std::make_unique<GdpAccountant>(o); }},
      {"composition", "(epsilon, delta) composition theorems: basic, advanced, optimal",
       [](const AccountantOptions& o) { return std::make_unique<CompositionAccountant>(o); }},
      {"pld", "privacy loss distributions: tight epsilon interval [lower, upper] by FFT",
       [](const AccountantOptions& o) { return std::make_unique<PldAccountant>(o); }},
  };
  return all;
}

std::unique_ptr<Accountant> make_accountant(std::string_view name,
                                            const AccountantOptions& options) {
  for (const auto& info : accountants())
    if (info.name == name) return info.make(options);
  throw std::out_of_range("unknown accountant '" + std::string(name) + "'");
}

}  // namespace dpb
