#pragma once
// One epoch of random allocation ("balls-in-bins"; Feldman & Shenfeld 2025,
// arXiv 2502.08202; Chua et al. 2025, "Balls-and-bins sampling for DP-SGD")
// as privacy loss distributions for the PLD accountant: each record is in
// exactly one of t steps, chosen uniformly and independently of the other
// records; each step releases its batch's sum of clipped gradients (norm ≤ 1)
// plus N(0, σ²) noise; add/remove neighbours (replace_special is the same pair).
//
// The pair (docs/pld.md#random-allocation). With every other record's contribution known, the
// epoch's output is y ∈ ℝ^t with P = (1/t)·Σ_i N(e_i, σ²I) (the record present,
// in step i) against Q = N(0, σ²I). With X_i = exp((2y_i − 1)/(2σ²)),
// dP/dQ(y) = S/t, S = Σ_i X_i: the privacy loss depends on y only through S.
//   remove (first law P): L = log(S/t), S = X⁺ + Σ_{i<t} X_i with
//     log X_i ~ N(−1/(2σ²), 1/σ²) i.i.d. and log X⁺ ~ N(+1/(2σ²), 1/σ²);
//   add (first law Q): L = −log(S/t), S = Σ_{i≤t} X_i, all log X_i ~ N(−1/(2σ²), 1/σ²).
//
// Soundness by domination (Meiser & Mohammadi 2018, privacy buckets):
// composing epochs adds independent losses and δ(ε) = E[(1 − e^{ε−L})₊] is
// nondecreasing in each loss, so a discrete law that is first-order
// stochastically larger than the true loss law gives upper bounds after any
// composition, and one that is stochastically smaller (or has lost mass) gives
// lower bounds. The method and its error terms are in random_allocation.cpp.
#include <cstdint>

#include "accounting/pld/pld.hpp"

namespace dpb {

struct RandomAllocationPlds {
  /// Kind::atoms; `atoms` the remove direction, `add_atoms` the add
  /// direction; losses stochastically ≥ the truth (extra mass at +∞).
  pld::Mechanism upper;
  /// Kind::atoms; losses stochastically ≤ the truth (some mass dropped).
  pld::Mechanism lower;
};

/// One epoch of random allocation over `steps` (t ≥ 1) steps with noise
/// multiplier `sigma`. `loss_resolution` is the wanted gap between the upper
/// and the lower losses; the grid may be coarser (never finer) where the
/// heavy tail of the likelihood ratio needs a wide window (small σ). t = 1 is
/// the Gaussian mechanism itself. Throws InvalidParameter when the bound
/// would be useless (σ too small for the grid limit).
RandomAllocationPlds random_allocation_plds(std::int64_t steps, double sigma,
                                            double loss_resolution);

}  // namespace dpb
