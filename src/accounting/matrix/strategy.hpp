#pragma once
// Strategy matrices of the matrix mechanism (docs/matrix.md#strategies): the
// workload A (prefix sums) is factored as A = B·C; the mechanism releases
// C·x + noise and answers B·(C·x + noise). Three forms: a lower-triangular
// Toeplitz C given by its coefficients, a full lower-triangular C, and the
// binary tree of online tree aggregation (optionally restarted). No I/O.
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace dpb::matrix {

/// C_ij = c_{i−j} for i ≥ j, 0 above the diagonal; n = coefficients.size().
struct Toeplitz {
  std::vector<double> coefficients;
};

/// A full lower-triangular n×n matrix, row-major (entries above the diagonal 0).
struct Dense {
  std::int64_t n = 0;
  std::vector<double> entries;
  double at(std::int64_t i, std::int64_t j) const {
    return entries[static_cast<std::size_t>(i * n + j)];
  }
};

/// Online tree aggregation over n steps (docs/matrix.md#tree): one row of C
/// per complete dyadic node of each tree, trees restarted every `restart`
/// steps (restart = n: one tree). Decoded by the binary decomposition of each
/// prefix into complete nodes.
struct Tree {
  std::int64_t n = 0;
  std::int64_t restart = 0;
};

using Strategy = std::variant<Toeplitz, Dense, Tree>;

/// The most steps of a full matrix, and of any strategy whose Gram matrix is
/// formed (the general sensitivity bound): that bound holds two n×n Gram
/// matrices of doubles, 256 MB at this n, and a full matrix's error takes
/// n³/3 operations (2·10¹⁰, about 10 s). Toeplitz coefficients and the tree
/// are n numbers.
inline constexpr std::int64_t kMaxDenseSteps = 4000;
inline constexpr std::int64_t kMaxToeplitzSteps = 10000000;

/// The number of steps n (columns of C).
std::int64_t steps(const Strategy& strategy);

/// c_j = binom(2j, j)/4^j, j < n: the coefficients of (1 − x)^(−1/2), the
/// Toeplitz square root of the prefix-sum matrix (docs/matrix.md#square-root).
Toeplitz square_root_strategy(std::int64_t n);

/// The square root truncated to its first `bands` coefficients and divided by
/// their L2 norm (rounded so that the largest column norm is at most 1,
/// docs/matrix.md#banded).
Toeplitz banded_square_root_strategy(std::int64_t n, std::int64_t bands);

/// Coefficients given (finite, c_0 ≠ 0), padded with zeros to n; more
/// coefficients than n steps are refused (InvalidParameter "coefficients").
Toeplitz toeplitz_strategy(std::vector<double> coefficients, std::int64_t n);

/// An n×n row-major matrix given: finite, lower-triangular, non-zero
/// diagonal (InvalidParameter "matrix" naming the entry otherwise).
Dense dense_strategy(std::int64_t n, std::vector<double> entries);

/// The tree over n steps restarted every `restart` steps (default n).
Tree tree_strategy(std::int64_t n, std::optional<std::int64_t> restart);

/// The Gram matrix X = CᵀC, n×n row-major; with `absolute`, |C|ᵀ|C| (the
/// bound on the rounding error of each entry, docs/matrix.md#rounding).
/// Refuses n above kMaxDenseSteps.
std::vector<double> gram(const Strategy& strategy, bool absolute = false);

/// ||C e_j||², j < n, each rounded up (every square and partial sum rounded
/// up: exact when the arithmetic is, e.g. 1 for the identity).
std::vector<double> column_norms_squared(const Strategy& strategy);

/// ||C e_j||², j < n, each rounded down (every square and partial sum rounded
/// down): a lower bound on each, for pairs that must not exceed the run's.
std::vector<double> column_norms_squared_down(const Strategy& strategy);

/// The smallest b with C_ij = 0 whenever i − j ≥ b (C lower-triangular with b
/// bands); nullopt for the tree (its C is not square).
std::optional<std::int64_t> bands_of(const Strategy& strategy);

/// c_j ≥ 0 and c_{j+1} ≤ c_j for every j (Toeplitz only; false otherwise).
bool non_negative_non_increasing(const Strategy& strategy);

/// Number of complete dyadic nodes of the tree holding both steps i and j.
std::int64_t tree_shared_nodes(const Tree& tree, std::int64_t i, std::int64_t j);

}  // namespace dpb::matrix
