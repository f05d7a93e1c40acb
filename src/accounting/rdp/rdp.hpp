#pragma once
// Rényi differential privacy of the mechanisms dpbudget knows, and the
// conversion of an RDP curve to (ε, δ). docs/rdp.md#definition and
// docs/rdp.md#conversion.
#include <limits>
#include <span>
#include <vector>

#include "accounting/rdp/rdp_conversion.hpp"

namespace dpb {

/// RDP → (ε, δ): each candidate ε (or log δ) is rounded up by 8 machine
/// epsilons (16u) of the magnitude of its terms, more than the few roundings
/// in the conversion.
inline constexpr double kConversionRoundUp = 8 * std::numeric_limits<double>::epsilon();

/// The default order set: dp_accounting's DEFAULT_RDP_ORDERS
/// (1.1, 1.2, ..., 10.9, 11..63, 128, 256, 512, 1024) plus every integer 2..64,
/// sorted, without duplicates.
std::vector<double> default_rdp_orders();

/// log A_α of the Poisson-subsampled Gaussian (docs/rdp.md#subsampled-gaussian), α > 1, q ∈ [0, 1],
/// σ > 0. Exact to ~1e-10 relative in A_α and never below the truth by more
/// than that; +inf where A_α overflows the double range.
double log_a_poisson_gaussian(double q, double sigma, double alpha);

/// RDP ρ(α) of one Poisson-subsampled Gaussian step, add/remove:
/// log(A_α)/(α − 1). q = 0 gives 0, q = 1 gives α/(2σ²). May be +inf.
double rdp_poisson_gaussian(double q, double sigma, double alpha);

/// The same at every order of `orders`.
std::vector<double> rdp_poisson_gaussian(double q, double sigma, std::span<const double> orders);

/// Gaussian mechanism: α/(2σ²).
double rdp_gaussian(double sigma, double alpha);

/// Laplace mechanism (Mironov 2017, Prop. 6), docs/rdp.md#laplace.
double rdp_laplace(double scale, double alpha);

struct RdpEpsilon {
  double epsilon;    ///< +inf when every order gives +inf
  double order;      ///< the argmin
  bool kl_shortcut;  ///< ε = 0 from the Bretagnolle–Huber shortcut (docs/rdp.md#kl-shortcut)
};

/// The conversion term c(α) (docs/rdp.md#conversion), so that ε = ρ_T(α) + c(α) at order α:
/// classic −log δ/(α−1); improved log(1 − 1/α) − (log δ + log α)/(α−1).
/// `magnitude` bounds the absolute values summed, for rounding error.
struct ConversionTerm {
  double value;
  double magnitude;
};
ConversionTerm rdp_conversion_term(double alpha, double log_delta, RdpConversion conversion);

/// ε(δ) from an RDP curve (`rdp[i]` at `orders[i]`, already composed), docs/rdp.md#conversion.
RdpEpsilon epsilon_from_rdp(std::span<const double> orders, std::span<const double> rdp,
                            double delta, RdpConversion conversion);

struct RdpDelta {
  double delta;  ///< capped at 1
  double order;
};

/// δ(ε) from an RDP curve, docs/rdp.md#conversion.
RdpDelta delta_from_rdp(std::span<const double> orders, std::span<const double> rdp, double epsilon,
                        RdpConversion conversion);

}  // namespace dpb
