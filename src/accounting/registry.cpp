#include <algorithm>
#include <stdexcept>

#include "accounting/accountant_descriptor.hpp"
#include "accounting/composition/composition_accountant.hpp"
#include "accounting/gdp/gdp_accountant.hpp"
#include "accounting/numerics/double_limits.hpp"
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

namespace {

// Where the settings' numbers lie (the command line names the description
// when it refuses one).
/// pld's AccountantDescriptor::reask_margin: its upper ends on two grids
/// chosen afresh for nearby questions differ by ~1e-9 relative (measured on
/// issue 45's schedules); a hundredth of a millionth of ε costs σ as little.
constexpr double kPldReaskMargin = 1e-8;
constexpr SettingDomain kAboveOne{1, kInf, true, true, "a finite number > 1"};
constexpr SettingDomain kAboveZero{0, kInf, true, true, "a finite number > 0"};
constexpr SettingDomain kInsideUnit{0, 1, true, true, "a number in (0, 1)"};

// The choices of --conversion and --composition: the names, and the values
// in the same order.
constexpr std::string_view kConversionNames[] = {"improved", "classic"};
constexpr RdpConversion kConversions[] = {RdpConversion::improved, RdpConversion::classic};
constexpr std::string_view kCompositionNames[] = {"basic", "advanced", "optimal"};
constexpr CompositionMethod kCompositionMethods[] = {
    CompositionMethod::basic, CompositionMethod::advanced, CompositionMethod::optimal};

/// The name of `value` in `names`, the values in `values` in the same order.
template <class E, std::size_t N>
std::string choice_named(const std::string_view (&names)[N], const E (&values)[N], E value) {
  for (std::size_t i = 0; i < N; ++i)
    if (values[i] == value) return std::string(names[i]);
  return std::string(names[0]);
}

constexpr AccountantSetting kRdpSettings[] = {
    {.flag = "--orders",
     .help = "Renyi orders > 1: comma list and start:stop:step ranges (default: dp_accounting's "
             "orders plus every integer 2..64)",
     .default_text = "dp_accounting's orders plus every integer 2..64",
     .form = SettingForm::numbers,
     .domain = kAboveOne,
     .set = [](AccountantOptions& o, const SettingValue& v) { o.rdp.orders = v.numbers; }},
    {.flag = "--conversion",
     .help = "RDP to (epsilon, delta): improved (Balle et al. 2020, default) | classic",
     .default_text = "improved",
     .form = SettingForm::choice,
     .choices = kConversionNames,
     .epsilon_delta_only = true,
     .set = [](AccountantOptions& o,
               const SettingValue& v) { o.rdp.conversion = kConversions[v.choice]; }},
};

constexpr AccountantSetting kCompositionSettings[] = {
    {.flag = "--composition",
     .help = "composition accountant's theorem: optimal (Kairouz et al., default) | advanced "
             "(Dwork-Rothblum-Vadhan) | basic",
     .default_text = "optimal",
     .form = SettingForm::choice,
     .choices = kCompositionNames,
     .set = [](AccountantOptions& o,
               const SettingValue& v) { o.composition.method = kCompositionMethods[v.choice]; }},
};

constexpr AccountantSetting kPldSettings[] = {
    {.flag = "--pld-interval",
     .help = "PLD: first discretisation step of the loss grid, > 0 (default automatic)",
     .default_text = "automatic",
     .form = SettingForm::number,
     .domain = kAboveZero,
     .shuffled_lower_bound = true,
     .set = [](AccountantOptions& o,
               const SettingValue& v) { o.pld.interval = v.numbers.front(); }},
    {.flag = "--pld-tolerance",
     .help = "PLD: the interval around the exact epsilon is at most this wide, relative to its "
             "upper end, so the upper end is within this share of the exact value (a note says "
             "when it cannot be met); in (0, 1) (default 1e-3)",
     .default_text = "1e-3",
     .form = SettingForm::number,
     .domain = kInsideUnit,
     .shuffled_lower_bound = true,
     .set = [](AccountantOptions& o,
               const SettingValue& v) { o.pld.tolerance = v.numbers.front(); }},
};

std::vector<ShownSetting> rdp_shown(const AccountantOptions& o) {
  std::vector<ShownSetting> out{
      {"conversion", choice_named(kConversionNames, kConversions, o.rdp.conversion)}};
  if (!o.rdp.orders.empty()) out.push_back({"orders", o.rdp.orders});
  return out;
}

std::vector<ShownSetting> composition_shown(const AccountantOptions& o) {
  return {
      {"composition", choice_named(kCompositionNames, kCompositionMethods, o.composition.method)}};
}

std::vector<ShownSetting> pld_shown(const AccountantOptions& o) {
  std::vector<ShownSetting> out{{"pld_tolerance", o.pld.tolerance}};
  if (o.pld.interval > 0) out.push_back({"pld_interval", o.pld.interval});
  return out;
}

std::vector<ShownSetting> nothing_shown(const AccountantOptions&) { return {}; }

template <class A>
std::unique_ptr<Accountant> construct_accountant(const AccountantOptions& options) {
  return std::make_unique<A>(options);
}

/// The descriptors, built on first use (a function's static: ready whenever
/// another file's static asks for them).
const std::vector<AccountantDescriptor>& registered() {
  static const std::vector<AccountantDescriptor> all = {
      {.name = "rdp",
       .summary = "moments accountant: Renyi DP converted to (epsilon, delta)",
       .make = construct_accountant<RdpAccountant>,
       .settings = kRdpSettings,
       .shown = rdp_shown,
       .report_method =
           "Renyi differential privacy of the sampled Gaussian (Mironov, Talwar & Zhang 2019), "
           "converted to (epsilon, delta) as in Balle et al. 2020",
       .report_default = true,
       .report_order = 1,
       .asked_by_default = true},
      {.name = "gdp",
       .summary =
           "Gaussian DP: exact for Gaussian releases, central-limit approximation for DP-SGD",
       .make = construct_accountant<GdpAccountant>,
       .shown = nothing_shown,
       .report_method =
           "Gaussian differential privacy (Dong, Roth & Su 2022): exact for unsampled Gaussian "
           "releases (a sound bound); for sampled steps the central limit theorem of Bu et al. "
           "2020, an approximation (then left out unless asked for)",
       .report_default = true,
       .report_order = 3,
       .dp_sgd_figure = DpSgdFigure::approximation},
      {.name = "composition",
       .summary = "(epsilon, delta) composition theorems: basic, advanced, optimal",
       .make = construct_accountant<CompositionAccountant>,
       .settings = kCompositionSettings,
       .shown = composition_shown,
       .report_method =
           "optimal composition of (epsilon, delta) steps (Kairouz, Oh & Viswanath 2015)",
       .report_order = 4},
      {.name = "pld",
       .summary = "privacy loss distributions: tight epsilon interval [lower, upper] by FFT",
       .make = construct_accountant<PldAccountant>,
       .settings = kPldSettings,
       .shown = pld_shown,
       .report_method =
           "privacy loss distributions composed by FFT with sound error bounds (Koskela, Jalko & "
           "Honkela 2020; Gopi, Lee & Wutschitz 2021; Doroshenko et al. 2022)",
       .report_default = true,
       .report_order = 2,
       // PLD composes on a grid of 10^5-10^6 points; rdp's σ is a few per
       // cent above its own (docs/calibration.md#sigma).
       .sigma_hint_from = "rdp",
       .reask_margin = kPldReaskMargin},
  };
  return all;
}

}  // namespace

std::span<const AccountantDescriptor> accountants() { return registered(); }

const AccountantDescriptor* find_accountant(std::string_view name) {
  for (const auto& d : accountants())
    if (d.name == name) return &d;
  return nullptr;
}

const AccountantDescriptor& default_accountant() {
  for (const auto& d : accountants())
    if (d.asked_by_default) return d;
  return accountants().front();
}

std::vector<const AccountantDescriptor*> accountants_in_report_order() {
  std::vector<const AccountantDescriptor*> out;
  for (const auto& d : accountants()) out.push_back(&d);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto* a, const auto* b) { return a->report_order < b->report_order; });
  return out;
}

std::vector<std::string_view> report_default_accountants() {
  std::vector<std::string_view> out;
  for (const auto* d : accountants_in_report_order())
    if (d->report_default) out.emplace_back(d->name);
  return out;
}

std::unique_ptr<Accountant> make_accountant(std::string_view name,
                                            const AccountantOptions& options) {
  if (const auto* d = find_accountant(name)) return d->make(options);
  throw std::out_of_range("unknown accountant '" + std::string(name) + "'");
}

}  // namespace dpb
