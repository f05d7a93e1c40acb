// Sensitivity of a strategy under a participation pattern
// (docs/matrix.md#sensitivity).
#include "accounting/matrix/sensitivity.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb::matrix {
namespace {

/// A bound on the relative rounding error of a sum of m non-negative doubles
/// (or of m products of them): γ_m = m·u/(1 − m·u) (Higham 2002, Lemma 3.1),
/// taken as 1.01·m·u, valid while m·u < 0.01 (n ≤ 10⁷ keeps it below 10⁻⁸).
double gamma(std::int64_t m) { return 1.01 * static_cast<double>(m) * kU; }

/// A non-negative sum of m terms, each within relative γ of its value, rounded
/// up to a sound bound (the general bound's last step, docs/matrix.md#rounding).
double widened(double sum, std::int64_t terms) {
  return outward::up(sum * (1.0 + gamma(terms + 2)), 2);
}

std::int64_t fitting(std::int64_t n, const Participation& p) {
  return std::min(p.participations, (n - 1) / p.min_separation + 1);
}

void check_pattern(const Participation& p) {
  if (p.min_separation < 1)
    throw InvalidParameter("min_separation",
                           "must be at least 1, got " + std::to_string(p.min_separation));
  if (p.participations < 1)
    throw InvalidParameter("participations",
                           "must be at least 1, got " + std::to_string(p.participations));
}

/// The X-bandwidth: X_ij = 0 whenever |i − j| ≥ it (a tree restarted every r
/// steps: r, its blocks being disjoint).
std::int64_t gram_bandwidth(const Strategy& strategy) {
  if (const auto* tree = std::get_if<Tree>(&strategy)) return tree->restart;
  return *bands_of(strategy);
}

/// Non-negative non-increasing Toeplitz c under k participations b apart:
/// the sensitivity is attained by the participations 0, b, …, (k − 1)·b
/// (Kalinin & Lampert 2024, "Banded square root matrix factorization for
/// differentially private model training", arXiv 2405.13763, Thm 2;
/// docs/matrix.md#toeplitz-monotone): ||y||² with
/// y_t = Σ_{i<k, i·b≤t} c_{t−i·b}, computed as z_t − z_{t−k·b} from the
/// running sums z_t = c_t + z_{t−b}.
double toeplitz_monotone_squared(const Toeplitz& t, std::int64_t b, std::int64_t k) {
  const auto& c = t.coefficients;
  const auto n = static_cast<std::int64_t>(c.size());
  // z rounded up and down (every addition directed), so that
  // y_t ≤ z↑_t − z↓_{t−kb}, rounded up (docs/matrix.md#rounding).
  std::vector<double> up(c.size()), down(c.size());
  double total = 0;
  for (std::int64_t s = 0; s < n; ++s) {
    const auto i = static_cast<std::size_t>(s);
    const auto back = static_cast<std::size_t>(b);
    up[i] = s >= b ? outward::sum_up(up[i - back], c[i]) : c[i];
    down[i] = s >= b ? outward::sum_down(down[i - back], c[i]) : c[i];
    double y = up[i];
    if (s >= k * b)
      y = std::max(0.0,
                   -outward::difference_down(down[i - static_cast<std::size_t>(k * b)], up[i]));
    total = outward::sum_up(total, outward::product_up(y, y));
  }
  return total;
}

/// The largest sum of at most k diagonal entries at positions b apart (exact
/// when X_ij = 0 for |i − j| ≥ b, docs/matrix.md#banded-sensitivity).
double banded_squared(const std::vector<double>& diagonal, std::int64_t b, std::int64_t k) {
  const auto n = static_cast<std::int64_t>(diagonal.size());
  if (std::is_sorted(diagonal.rbegin(), diagonal.rend())) {
    // Non-increasing: the i-th of any b-separated set sits at i·b or later.
    double sum = 0;
    for (std::int64_t i = 0; i < k && i * b < n; ++i)
      sum = outward::sum_up(sum, diagonal[static_cast<std::size_t>(i * b)]);
    return sum;
  }
  return widened(best_separated_sums(diagonal, b, k).back(), k);
}

void check_bound_size(std::int64_t n, std::int64_t k) {
  const double work = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(k);
  if (n > kMaxDenseSteps || work > kMaxBoundWork)
    throw InvalidParameter(
        "participations", "the general sensitivity bound for " + std::to_string(n) + " steps and " +
                              std::to_string(k) +
                              " participations is too large to compute here (n^2 k above 1e10)");
}

}  // namespace

std::string_view to_string(SensitivityMethod method) {
  switch (method) {
    case SensitivityMethod::single:
      return "single";
    case SensitivityMethod::toeplitz_monotone:
      return "toeplitz_monotone";
    case SensitivityMethod::banded:
      return "banded";
    case SensitivityMethod::general_bound:
      return "general_bound";
  }
  return "";
}

std::vector<double> best_separated_sums(std::span<const double> weights, std::int64_t separation,
                                        std::int64_t k) {
  const auto n = static_cast<std::int64_t>(weights.size());
  std::vector<double> best(static_cast<std::size_t>(k + 1), 0.0);
  if (n == 0) return best;
  // g_m(j): the largest sum of at most m picks among positions [0, j];
  // g_m(j) = max(g_m(j − 1), w_j + g_{m−1}(j − b)).
  std::vector<double> prev(static_cast<std::size_t>(n), 0.0), cur(static_cast<std::size_t>(n));
  for (std::int64_t m = 1; m <= k; ++m) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto i = static_cast<std::size_t>(j);
      const double take =
          weights[i] + (j >= separation ? prev[i - static_cast<std::size_t>(separation)] : 0.0);
      cur[i] = std::max(j > 0 ? cur[i - 1] : 0.0, take);
    }
    best[static_cast<std::size_t>(m)] = cur.back();
    std::swap(prev, cur);
  }
  return best;
}

Sensitivity general_sensitivity_bound(const Strategy& strategy, const Participation& pattern) {
  check_pattern(pattern);
  const std::int64_t n = steps(strategy);
  const std::int64_t b = pattern.min_separation;
  const std::int64_t k = fitting(n, pattern);
  check_bound_size(n, k);
  // ||C·G||_F² = Σ_{i,j∈π} X_ij·<g_i, g_j> ≤ Σ_{i∈π} Σ_{j∈π} |X_ij| ≤ Σ_{i∈π} r_i, with r_i the
  // largest Σ_{j∈π'} |X_ij| over b-separated π' ∋ i of at most k steps
  // (docs/matrix.md#general-bound). Each |X_ij| is bounded by |X̂_ij| + γ·(|C|ᵀ|C|)_ij.
  const std::vector<double> x = gram(strategy, false);
  const std::vector<double> x_abs = gram(strategy, true);
  const double err = gamma(n + 2);
  std::vector<double> r(static_cast<std::size_t>(n));
  std::vector<double> w(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto ij = static_cast<std::size_t>(i * n + j);
      w[static_cast<std::size_t>(j)] = std::fabs(x[ij]) + err * x_abs[ij];
    }
    std::vector<double> left(1, 0.0), right(1, 0.0);
    if (k > 1 && i - b >= 0)
      left = best_separated_sums(std::span(w).first(static_cast<std::size_t>(i - b + 1)), b, k - 1);
    if (k > 1 && i + b < n)
      right = best_separated_sums(std::span(w).subspan(static_cast<std::size_t>(i + b)), b, k - 1);
    double best = 0;
    for (std::size_t k1 = 0; k1 < left.size(); ++k1)
      for (std::size_t k2 = 0; k2 < right.size() && k1 + k2 <= static_cast<std::size_t>(k - 1);
           ++k2)
        best = std::max(best, left[k1] + right[k2]);
    r[static_cast<std::size_t>(i)] = w[static_cast<std::size_t>(i)] + best;
  }
  const double total = best_separated_sums(r, b, k).back();
  return Sensitivity{widened(total, 2 * k + 2), false, SensitivityMethod::general_bound, k};
}

SensitivityMethod sensitivity_method(const Strategy& strategy, const Participation& pattern) {
  check_pattern(pattern);
  const std::int64_t n = steps(strategy);
  const std::int64_t k = fitting(n, pattern);
  if (k == 1) return SensitivityMethod::single;
  if (gram_bandwidth(strategy) <= pattern.min_separation) return SensitivityMethod::banded;
  if (non_negative_non_increasing(strategy)) return SensitivityMethod::toeplitz_monotone;
  check_bound_size(n, k);
  return SensitivityMethod::general_bound;
}

Sensitivity sensitivity(const Strategy& strategy, const Participation& pattern) {
  const std::int64_t n = steps(strategy);
  const std::int64_t b = pattern.min_separation;
  const SensitivityMethod method = sensitivity_method(strategy, pattern);
  const std::int64_t k = fitting(n, pattern);
  switch (method) {
    case SensitivityMethod::single: {
      const auto norms = column_norms_squared(strategy);
      return Sensitivity{*std::max_element(norms.begin(), norms.end()), true, method, 1};
    }
    case SensitivityMethod::banded:
      return Sensitivity{banded_squared(column_norms_squared(strategy), b, k), true, method, k};
    case SensitivityMethod::toeplitz_monotone:
      return Sensitivity{toeplitz_monotone_squared(std::get<Toeplitz>(strategy), b, k), true,
                         method, k};
    case SensitivityMethod::general_bound:
      break;
  }
  return general_sensitivity_bound(strategy, pattern);
}

}  // namespace dpb::matrix
