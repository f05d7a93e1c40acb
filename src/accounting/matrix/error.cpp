// The prefix-sum error of a factorization (docs/matrix.md#error).
#include "accounting/matrix/error.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "accounting/errors.hpp"

namespace dpb::matrix {
namespace {

PrefixSumError summarise(std::vector<double> per_query) {
  PrefixSumError e;
  e.max = *std::max_element(per_query.begin(), per_query.end());
  e.mean = std::accumulate(per_query.begin(), per_query.end(), 0.0) /
           static_cast<double>(per_query.size());
  e.per_query = std::move(per_query);
  return e;
}

void check_finite(const std::vector<double>& values, const char* field) {
  for (double v : values)
    if (!std::isfinite(v))
      throw InvalidParameter(field,
                             "the inverse of the strategy overflows a double: its error on "
                             "prefix sums cannot be computed");
}

}  // namespace

std::vector<double> inverse_coefficients(const Toeplitz& t) {
  const auto& c = t.coefficients;
  const std::size_t n = c.size();
  std::size_t bands = 0;
  for (std::size_t j = 0; j < n; ++j)
    if (c[j] != 0) bands = j + 1;
  // d_0 = 1/c_0, d_k = −(Σ_{j=1}^{k} c_j·d_{k−j})/c_0: O(n·b) for b bands.
  std::vector<double> d(n);
  d[0] = 1.0 / c[0];
  for (std::size_t k = 1; k < n; ++k) {
    double s = 0;
    for (std::size_t j = 1; j <= std::min(k, bands - 1); ++j) s += c[j] * d[k - j];
    d[k] = -s / c[0];
  }
  return d;
}

PrefixSumError prefix_sum_error(const Strategy& strategy) {
  const std::int64_t n = steps(strategy);
  std::vector<double> per_query(static_cast<std::size_t>(n));
  if (const auto* t = std::get_if<Toeplitz>(&strategy)) {
    // C⁻¹ is Toeplitz with coefficients d; B = A·C⁻¹ is Toeplitz with their
    // prefix sums e_k = Σ_{j≤k} d_j, so ||B_t||² = Σ_{k≤t} e_k²
    // (docs/matrix.md#error).
    const std::vector<double> d = inverse_coefficients(*t);
    double e = 0, sum = 0;
    for (std::size_t k = 0; k < d.size(); ++k) {
      e += d[k];
      sum += e * e;
      per_query[k] = sum;
    }
    check_finite(per_query, "coefficients");
  } else if (const auto* m = std::get_if<Dense>(&strategy)) {
    // Row t of B solves b·C = a_t (a_t: ones at steps 0..t); b_j = 0 beyond t.
    std::vector<double> b(static_cast<std::size_t>(n));
    for (std::int64_t row = 0; row < n; ++row) {
      double norm = 0;
      for (std::int64_t j = row; j >= 0; --j) {
        double s = 1.0;
        for (std::int64_t i = j + 1; i <= row; ++i)
          s -= b[static_cast<std::size_t>(i)] * m->at(i, j);
        b[static_cast<std::size_t>(j)] = s / m->at(j, j);
        norm += b[static_cast<std::size_t>(j)] * b[static_cast<std::size_t>(j)];
      }
      per_query[static_cast<std::size_t>(row)] = norm;
    }
    check_finite(per_query, "matrix");
  } else {
    // The prefix [0, t] is the whole trees before it and the first r steps of
    // its own; each splits into popcount(length) complete nodes, one noise
    // each (docs/matrix.md#tree).
    const Tree& tree = std::get<Tree>(strategy);
    for (std::int64_t q = 0; q < n; ++q) {
      const std::int64_t whole = (q + 1) / tree.restart;
      const std::int64_t rest = (q + 1) % tree.restart;
      per_query[static_cast<std::size_t>(q)] =
          static_cast<double>(whole * std::popcount(static_cast<std::uint64_t>(tree.restart)) +
                              std::popcount(static_cast<std::uint64_t>(rest)));
    }
  }
  return summarise(std::move(per_query));
}

}  // namespace dpb::matrix
