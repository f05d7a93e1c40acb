// Strategy matrices (docs/matrix.md#strategies).
#include "accounting/matrix/strategy.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb::matrix {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

void check_steps(std::int64_t n, std::int64_t most, const char* field) {
  if (n < 1 || n > most)
    throw InvalidParameter(field, "the number of steps must be in [1, " + std::to_string(most) +
                                      "], got " + std::to_string(n));
}

std::size_t at(std::int64_t i, std::int64_t j, std::int64_t n) {
  return static_cast<std::size_t>(i * n + j);
}

}  // namespace

std::int64_t steps(const Strategy& strategy) {
  return std::visit(
      Overloaded{[](const Toeplitz& t) { return static_cast<std::int64_t>(t.coefficients.size()); },
                 [](const Dense& d) { return d.n; }, [](const Tree& t) { return t.n; }},
      strategy);
}

Toeplitz square_root_strategy(std::int64_t n) {
  check_steps(n, kMaxToeplitzSteps, "steps");
  // (1 − x)^(−1/2) = Σ_j binom(2j, j)/4^j x^j, and binom(2j, j)/4^j =
  // c_{j−1}·(2j − 1)/(2j) (docs/matrix.md#square-root; Fichtenberger, Henzinger
  // & Upadhyay 2023, "Constant matters: fine-grained error bound on
  // differentially private continual observation").
  Toeplitz t;
  t.coefficients.resize(static_cast<std::size_t>(n));
  t.coefficients[0] = 1.0;
  for (std::int64_t j = 1; j < n; ++j)
    t.coefficients[static_cast<std::size_t>(j)] = t.coefficients[static_cast<std::size_t>(j - 1)] *
                                                  static_cast<double>(2 * j - 1) /
                                                  static_cast<double>(2 * j);
  return t;
}

Toeplitz banded_square_root_strategy(std::int64_t n, std::int64_t bands) {
  check_steps(n, kMaxToeplitzSteps, "steps");
  if (bands < 1 || bands > n)
    throw InvalidParameter("bands", "the number of bands must be in [1, steps = " +
                                        std::to_string(n) + "], got " + std::to_string(bands));
  Toeplitz t = square_root_strategy(bands);
  double sum = 0;
  for (double c : t.coefficients) sum += c * c;
  // The first column's squared norm is the largest. The divisor is widened so
  // that even the norm² rounded up (column_norms_squared) stays at most 1
  // (docs/matrix.md#banded): a sum of b squares is within γ_b ≈ b·u of its
  // true value either way, the square root and the divisions a few ulps more.
  const double margin = 8.0 * static_cast<double>(bands + 4) * kU;
  const double divisor = std::sqrt(sum) * (1.0 + margin);
  for (double& c : t.coefficients) c /= divisor;
  t.coefficients.resize(static_cast<std::size_t>(n), 0.0);
  return t;
}

Toeplitz toeplitz_strategy(std::vector<double> coefficients, std::int64_t n) {
  check_steps(n, kMaxToeplitzSteps, "steps");
  if (coefficients.empty()) throw InvalidParameter("coefficients", "no coefficients given");
  if (static_cast<std::int64_t>(coefficients.size()) > n)
    throw InvalidParameter("coefficients", std::to_string(coefficients.size()) +
                                               " coefficients for " + std::to_string(n) +
                                               " steps: at most one per step");
  for (std::size_t j = 0; j < coefficients.size(); ++j)
    if (!std::isfinite(coefficients[j]))
      throw InvalidParameter("coefficients",
                             "coefficient " + std::to_string(j) + " is not a finite number");
  if (coefficients[0] == 0)
    throw InvalidParameter("coefficients",
                           "the first coefficient (the diagonal) must be non-zero: C is inverted "
                           "to decode");
  coefficients.resize(static_cast<std::size_t>(n), 0.0);
  return Toeplitz{std::move(coefficients)};
}

Dense dense_strategy(std::int64_t n, std::vector<double> entries) {
  check_steps(n, kMaxDenseSteps, "matrix");
  if (static_cast<std::int64_t>(entries.size()) != n * n)
    throw InvalidParameter("matrix", "expected " + std::to_string(n * n) + " entries, got " +
                                         std::to_string(entries.size()));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double v = entries[at(i, j, n)];
      const std::string where =
          "entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ")";
      if (!std::isfinite(v)) throw InvalidParameter("matrix", where + " is not a finite number");
      if (j > i && v != 0)
        throw InvalidParameter("matrix",
                               where +
                                   " is above the diagonal: the strategy must be "
                                   "lower-triangular (step i releases nothing of later steps)");
      if (j == i && v == 0)
        throw InvalidParameter("matrix", where +
                                             " is 0: the diagonal must be non-zero (C is inverted "
                                             "to decode)");
    }
  return Dense{n, std::move(entries)};
}

Tree tree_strategy(std::int64_t n, std::optional<std::int64_t> restart) {
  check_steps(n, kMaxToeplitzSteps, "steps");
  const std::int64_t r = restart.value_or(n);
  if (r < 1 || r > n)
    throw InvalidParameter("restart", "the restart period must be in [1, steps = " +
                                          std::to_string(n) + "], got " + std::to_string(r));
  return Tree{n, r};
}

std::int64_t tree_shared_nodes(const Tree& tree, std::int64_t i, std::int64_t j) {
  if (i / tree.restart != j / tree.restart) return 0;
  const std::int64_t start = (i / tree.restart) * tree.restart;
  const std::int64_t length = std::min(tree.restart, tree.n - start);
  const std::int64_t a = i - start;
  const std::int64_t b = j - start;
  // A node of level l is [p·2^l, (p + 1)·2^l); it is released once complete,
  // i.e. when it ends within the tree's steps (docs/matrix.md#tree).
  std::int64_t count = 0;
  for (int l = 0; (std::int64_t{1} << l) <= length; ++l)
    if ((a >> l) == (b >> l) && (((a >> l) + 1) << l) <= length) ++count;
  return count;
}

std::vector<double> gram(const Strategy& strategy, bool absolute) {
  const std::int64_t n = steps(strategy);
  check_steps(n, kMaxDenseSteps, "steps");
  std::vector<double> x(static_cast<std::size_t>(n * n), 0.0);
  auto mag = [absolute](double v) { return absolute ? std::fabs(v) : v; };
  std::visit(Overloaded{[&](const Toeplitz& t) {
                          // For i ≤ j = i + d: X_ij = Σ_{s=0}^{n−1−j} c_{s+d}·c_s, a
                          // prefix sum over s for each d (docs/matrix.md#gram).
                          const auto& c = t.coefficients;
                          for (std::int64_t d = 0; d < n; ++d) {
                            double sum = 0;
                            std::vector<double> prefix(static_cast<std::size_t>(n - d));
                            for (std::int64_t s = 0; s < n - d; ++s) {
                              sum += mag(c[static_cast<std::size_t>(s + d)]) *
                                     mag(c[static_cast<std::size_t>(s)]);
                              prefix[static_cast<std::size_t>(s)] = sum;
                            }
                            for (std::int64_t i = 0; i + d < n; ++i) {
                              const double v = prefix[static_cast<std::size_t>(n - 1 - (i + d))];
                              x[at(i, i + d, n)] = v;
                              x[at(i + d, i, n)] = v;
                            }
                          }
                        },
                        [&](const Dense& m) {
                          for (std::int64_t t = 0; t < n; ++t)
                            for (std::int64_t i = 0; i <= t; ++i) {
                              const double ci = mag(m.at(t, i));
                              if (ci == 0) continue;
                              for (std::int64_t j = 0; j <= i; ++j)
                                x[at(i, j, n)] += ci * mag(m.at(t, j));
                            }
                          for (std::int64_t i = 0; i < n; ++i)
                            for (std::int64_t j = 0; j < i; ++j) x[at(j, i, n)] = x[at(i, j, n)];
                        },
                        [&](const Tree& tree) {
                          for (std::int64_t i = 0; i < n; ++i)
                            for (std::int64_t j = 0; j < n; ++j)
                              x[at(i, j, n)] = static_cast<double>(tree_shared_nodes(tree, i, j));
                        }},
             strategy);
  return x;
}

namespace {

/// ‖C e_j‖² for every column j, each square taken by `square` and each partial sum by `add`
/// (both rounded the same way: every norm² is then rounded that way).
template <class Square, class Add>
std::vector<double> column_sums_of_squares(const Strategy& strategy, Square square, Add add) {
  const std::int64_t n = steps(strategy);
  std::vector<double> norms(static_cast<std::size_t>(n), 0.0);
  std::visit(Overloaded{[&](const Toeplitz& t) {
                          // Column j holds c_0..c_{n−1−j}.
                          double sum = 0;
                          for (std::int64_t s = 0; s < n; ++s) {
                            sum = add(sum, square(t.coefficients[static_cast<std::size_t>(s)]));
                            norms[static_cast<std::size_t>(n - 1 - s)] = sum;
                          }
                        },
                        [&](const Dense& m) {
                          for (std::int64_t t = 0; t < n; ++t)
                            for (std::int64_t j = 0; j <= t; ++j)
                              norms[static_cast<std::size_t>(j)] =
                                  add(norms[static_cast<std::size_t>(j)], square(m.at(t, j)));
                        },
                        [&](const Tree& tree) {
                          for (std::int64_t j = 0; j < n; ++j)
                            norms[static_cast<std::size_t>(j)] =
                                static_cast<double>(tree_shared_nodes(tree, j, j));
                        }},
             strategy);
  return norms;
}

}  // namespace

std::vector<double> column_norms_squared(const Strategy& strategy) {
  // Every square and every partial sum rounded up (docs/matrix.md#rounding):
  // each norm² is an upper bound, exact when the arithmetic is.
  return column_sums_of_squares(
      strategy, [](double c) { return outward::product_up(std::fabs(c), std::fabs(c)); },
      [](double a, double b) { return outward::sum_up(a, b); });
}

std::vector<double> column_norms_squared_down(const Strategy& strategy) {
  return column_sums_of_squares(
      strategy, [](double c) { return outward::product_down(std::fabs(c), std::fabs(c)); },
      [](double a, double b) { return outward::sum_down(a, b); });
}

std::optional<std::int64_t> bands_of(const Strategy& strategy) {
  return std::visit(
      Overloaded{[](const Toeplitz& t) -> std::optional<std::int64_t> {
                   std::int64_t b = 0;
                   for (std::size_t j = 0; j < t.coefficients.size(); ++j)
                     if (t.coefficients[j] != 0) b = static_cast<std::int64_t>(j) + 1;
                   return b;
                 },
                 [](const Dense& m) -> std::optional<std::int64_t> {
                   std::int64_t b = 0;
                   for (std::int64_t i = 0; i < m.n; ++i)
                     for (std::int64_t j = 0; j <= i; ++j)
                       if (m.at(i, j) != 0) b = std::max(b, i - j + 1);
                   return b;
                 },
                 [](const Tree&) -> std::optional<std::int64_t> { return std::nullopt; }},
      strategy);
}

bool non_negative_non_increasing(const Strategy& strategy) {
  const auto* t = std::get_if<Toeplitz>(&strategy);
  if (!t) return false;
  const auto& c = t->coefficients;
  for (std::size_t j = 0; j < c.size(); ++j) {
    if (c[j] < 0) return false;
    if (j > 0 && c[j] > c[j - 1]) return false;
  }
  return true;
}

}  // namespace dpb::matrix
