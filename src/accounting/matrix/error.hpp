#pragma once
// The error of a factorization on the prefix-sum workload
// (docs/matrix.md#error): with A = B·C and noise of standard deviation σ on
// each entry of C·x, the answer to query t errs by a Gaussian of variance
// σ²·||B_t||². No I/O.
#include <vector>

#include "accounting/matrix/strategy.hpp"

namespace dpb::matrix {

struct PrefixSumError {
  /// ||B_t||², t < n: the squared error of query t at unit noise (σ = 1).
  std::vector<double> per_query;
  double max = 0;
  double mean = 0;
};

/// B = A·C⁻¹ for a square C (Toeplitz: the power-series inverse; a full
/// matrix: triangular solves), the binary decoding for the tree. Throws
/// InvalidParameter ("coefficients" or "matrix") when C⁻¹ overflows.
PrefixSumError prefix_sum_error(const Strategy& strategy);

/// The coefficients d of C⁻¹ for Toeplitz c: Σ_j c_j x^j · Σ_j d_j x^j = 1.
std::vector<double> inverse_coefficients(const Toeplitz& t);

}  // namespace dpb::matrix
