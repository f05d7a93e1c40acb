// Strategies, sensitivity and prefix-sum error of the matrix mechanism
// (docs/matrix.md) against closed forms, brute force over participation
// patterns and a second algorithm.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/matrix/error.hpp"
#include "accounting/matrix/sensitivity.hpp"
#include "accounting/matrix/strategy.hpp"
#include "support/close.hpp"

using dpb::test::close_rel;
using namespace dpb::matrix;

namespace {

/// Rounding of sums of a few hundred doubles, and the outward margins.
constexpr double kSumTolerance = 1e-12;

/// Σ_{j<n} (binom(2j, j)/4^j)², each term from lgamma in long double.
long double square_root_closed_form(int n) {
  long double sum = 0;
  for (int j = 0; j < n; ++j) {
    const long double log_c =
        std::lgamma(2.0L * j + 1) - 2 * std::lgamma(j + 1.0L) - 2.0L * j * std::log(2.0L);
    sum += std::exp(2 * log_c);
  }
  return sum;
}

/// C as a dense row-major matrix with `rows` rows, built from the definitions.
struct Explicit {
  std::int64_t rows = 0, n = 0;
  std::vector<double> c;
  double at(std::int64_t i, std::int64_t j) const { return c[static_cast<std::size_t>(i * n + j)]; }
};

Explicit explicit_toeplitz(const std::vector<double>& coefficients) {
  const auto n = static_cast<std::int64_t>(coefficients.size());
  Explicit e{n, n, std::vector<double>(static_cast<std::size_t>(n * n), 0.0)};
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j)
      e.c[static_cast<std::size_t>(i * n + j)] = coefficients[static_cast<std::size_t>(i - j)];
  return e;
}

/// One row per complete dyadic interval [p·2^l, (p+1)·2^l) of each block of
/// `restart` steps.
Explicit explicit_tree(std::int64_t n, std::int64_t restart) {
  std::vector<std::vector<double>> rows;
  for (std::int64_t start = 0; start < n; start += restart) {
    const std::int64_t length = std::min(restart, n - start);
    for (std::int64_t size = 1; size <= length; size *= 2)
      for (std::int64_t p = 0; (p + 1) * size <= length; ++p) {
        std::vector<double> row(static_cast<std::size_t>(n), 0.0);
        for (std::int64_t t = p * size; t < (p + 1) * size; ++t)
          row[static_cast<std::size_t>(start + t)] = 1;
        rows.push_back(row);
      }
  }
  Explicit e{static_cast<std::int64_t>(rows.size()), n, {}};
  for (const auto& r : rows) e.c.insert(e.c.end(), r.begin(), r.end());
  return e;
}

/// max over participation sets π (pairwise ≥ b apart, |π| ≤ k) and signs
/// s ∈ {±1}^π of ||Σ_{i∈π} s_i C e_i||²: the sensitivity with one-dimensional
/// gradients, exactly the sensitivity when C ≥ 0 (all signs +1), a lower bound
/// on it otherwise.
double brute_force(const Explicit& e, std::int64_t b, std::int64_t k) {
  double best = 0;
  std::vector<std::int64_t> chosen;
  std::function<void(std::int64_t)> walk = [&](std::int64_t next) {
    if (!chosen.empty()) {
      const std::size_t m = chosen.size();
      for (std::uint64_t signs = 0; signs < (std::uint64_t{1} << m); ++signs) {
        double norm = 0;
        for (std::int64_t row = 0; row < e.rows; ++row) {
          double v = 0;
          for (std::size_t a = 0; a < m; ++a)
            v += ((signs >> a) & 1 ? -1.0 : 1.0) * e.at(row, chosen[a]);
          norm += v * v;
        }
        best = std::max(best, norm);
      }
    }
    if (static_cast<std::int64_t>(chosen.size()) == k) return;
    for (std::int64_t i = next; i < e.n; ++i) {
      chosen.push_back(i);
      walk(i + b);
      chosen.pop_back();
    }
  };
  walk(0);
  return best;
}

Dense as_dense(const Explicit& e) { return dense_strategy(e.n, e.c); }

}  // namespace

TEST_CASE("matrix: the square root's sensitivity squared equals its max error, n = 64") {
  const Strategy s = square_root_strategy(64);
  const double closed = static_cast<double>(square_root_closed_form(64));
  CHECK(close_rel(closed, 2.3888, 1e-4));  // the figure, 2.3888...
  const Sensitivity sens = sensitivity(s, Participation{1, 1});
  CHECK(sens.exact);
  CHECK(sens.squared >= closed);
  CHECK(close_rel(sens.squared, closed, kSumTolerance));
  const PrefixSumError err = prefix_sum_error(s);
  CHECK(close_rel(err.max, closed, kSumTolerance));
  CHECK(close_rel(err.per_query.back(), closed, kSumTolerance));
}

TEST_CASE("matrix: a b-banded strategy of unit column norm under min-sep b has sensitivity^2 k") {
  const Strategy s = banded_square_root_strategy(128, 4);
  const auto norms = column_norms_squared(s);
  CHECK(norms.front() <= 1.0);
  CHECK(close_rel(norms.front(), 1.0, kSumTolerance));
  CHECK(*bands_of(s) == 4);
  const Sensitivity sens = sensitivity(s, Participation{4, 8});
  CHECK(sens.exact);
  CHECK(sens.participations == 8);
  CHECK(close_rel(sens.squared, 8.0, kSumTolerance));
  // More participations than fit: ⌊127/4⌋ + 1 = 32 of them.
  const Sensitivity all = sensitivity(s, Participation{4, 1000});
  CHECK(all.participations == 32);
  CHECK(close_rel(all.squared, 32.0, kSumTolerance));
}

TEST_CASE("matrix: min-sep sensitivity against a brute force over patterns, n <= 16") {
  struct Case {
    const char* what;
    Explicit c;
    Strategy s;
  };
  std::vector<Case> cases;
  {
    const auto t = square_root_strategy(12);
    cases.push_back({"sqrt 12", explicit_toeplitz(t.coefficients), t});
  }
  {
    const auto t = banded_square_root_strategy(14, 3);
    cases.push_back({"banded 14/3", explicit_toeplitz(t.coefficients), t});
  }
  {
    // Not monotone: the general bound, never below the brute force.
    const std::vector<double> c{1.0, 0.2, 0.9, 0.1, 0.5, 0.0, 0.3, 0.05, 0.4, 0.0};
    cases.push_back({"non-monotone", explicit_toeplitz(c), toeplitz_strategy(c, 10)});
  }
  {
    // Signed coefficients: the brute force with signs is a lower bound on the truth.
    const std::vector<double> c{1.0, -0.6, 0.3, 0.2, -0.4, 0.1, 0.0, -0.2, 0.1};
    cases.push_back({"signed", explicit_toeplitz(c), toeplitz_strategy(c, 9)});
  }
  cases.push_back({"tree 13", explicit_tree(13, 13), tree_strategy(13, std::nullopt)});
  cases.push_back({"tree 16 restart 4", explicit_tree(16, 4), tree_strategy(16, 4)});
  {
    Explicit e{11, 11, std::vector<double>(121, 0.0)};
    for (int i = 0; i < 11; ++i)
      for (int j = 0; j <= i; ++j)
        e.c[static_cast<std::size_t>(i * 11 + j)] = 1.0 / (1.0 + (i * 7 + j * 3) % 5);
    cases.push_back({"dense", e, as_dense(e)});
  }
  for (const auto& c : cases)
    for (std::int64_t b : {1, 2, 3, 5})
      for (std::int64_t k : {1, 2, 3, 4}) {
        CAPTURE(c.what);
        CAPTURE(b);
        CAPTURE(k);
        const double brute = brute_force(c.c, b, k);
        const Sensitivity sens = sensitivity(c.s, Participation{b, k});
        CHECK(sens.squared >= brute);
        if (sens.exact) CHECK(close_rel(sens.squared, brute, kSumTolerance));
        const Sensitivity bound = general_sensitivity_bound(c.s, Participation{b, k});
        CHECK(bound.squared >= brute);
        CHECK_FALSE(bound.exact);
      }
}

TEST_CASE("matrix: which patterns are exact") {
  CHECK(sensitivity(square_root_strategy(50), Participation{7, 3}).method ==
        SensitivityMethod::toeplitz_monotone);
  CHECK(sensitivity(banded_square_root_strategy(50, 5), Participation{5, 3}).method ==
        SensitivityMethod::banded);
  // Banded with fewer than b steps between participations: monotone still exact.
  CHECK(sensitivity(banded_square_root_strategy(50, 5), Participation{3, 3}).method ==
        SensitivityMethod::toeplitz_monotone);
  const Sensitivity s = sensitivity(toeplitz_strategy({1.0, 0.2, 0.9}, 30), Participation{2, 3});
  CHECK(s.method == SensitivityMethod::general_bound);
  CHECK_FALSE(s.exact);
}

TEST_CASE("matrix: the tree's single-participation sensitivity^2 is the event's depth") {
  for (std::int64_t n = 1; n <= 70; ++n) {
    CAPTURE(n);
    const std::int64_t steps[] = {n};
    const Sensitivity s = sensitivity(tree_strategy(n, std::nullopt), Participation{1, 1});
    CHECK(s.exact);
    CHECK(close_rel(s.squared, static_cast<double>(dpb::tree_aggregation_depth(steps)), 1e-14));
  }
  // The shared-node count against the explicit nodes.
  for (auto [n, r] : {std::pair<std::int64_t, std::int64_t>{13, 13}, {20, 6}, {16, 16}}) {
    const Explicit e = explicit_tree(n, r);
    const Tree t = tree_strategy(n, r);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double shared = 0;
        for (std::int64_t row = 0; row < e.rows; ++row) shared += e.at(row, i) * e.at(row, j);
        CHECK(static_cast<double>(tree_shared_nodes(t, i, j)) == shared);
      }
  }
}

TEST_CASE("matrix: prefix-sum error, Toeplitz by power series against triangular solves") {
  // Identity: B = A, query t errs by t + 1 unit noises.
  const PrefixSumError id = prefix_sum_error(toeplitz_strategy({1.0}, 20));
  for (std::size_t t = 0; t < 20; ++t) CHECK(id.per_query[t] == static_cast<double>(t + 1));
  CHECK(id.mean == doctest::Approx(10.5));
  // A = C: B = I, unit error per query.
  const PrefixSumError prefix = prefix_sum_error(toeplitz_strategy(std::vector<double>(9, 1.0), 9));
  for (double e : prefix.per_query) CHECK(close_rel(e, 1.0, 1e-15));
  for (const auto& c :
       {banded_square_root_strategy(25, 4).coefficients, square_root_strategy(25).coefficients,
        std::vector<double>{2.0, -0.5, 0.7, 0.0, 0.1}}) {
    std::vector<double> padded = c;
    padded.resize(25, 0.0);
    const PrefixSumError fast = prefix_sum_error(toeplitz_strategy(padded, 25));
    const PrefixSumError slow = prefix_sum_error(as_dense(explicit_toeplitz(padded)));
    for (std::size_t t = 0; t < 25; ++t)
      CHECK(close_rel(fast.per_query[t], slow.per_query[t], 1e-10));
  }
}

TEST_CASE("matrix: the tree's error is the number of nodes of each prefix") {
  const PrefixSumError e = prefix_sum_error(tree_strategy(12, std::nullopt));
  const double nodes[] = {1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2};  // popcount(t + 1)
  for (std::size_t t = 0; t < 12; ++t) CHECK(e.per_query[t] == nodes[t]);
  // Restarted every 3 steps: whole trees cost 2 nodes each (3 = 2 + 1).
  const PrefixSumError r = prefix_sum_error(tree_strategy(7, 3));
  const double restarted[] = {1, 1, 2, 3, 3, 4, 5};
  for (std::size_t t = 0; t < 7; ++t) CHECK(r.per_query[t] == restarted[t]);
}

TEST_CASE("matrix: refusals") {
  CHECK_THROWS_AS(toeplitz_strategy({0.0, 1.0}, 4), dpb::InvalidParameter);
  CHECK_THROWS_AS(toeplitz_strategy({1.0, 1.0, 1.0}, 2), dpb::InvalidParameter);
  CHECK_THROWS_AS(toeplitz_strategy({1.0, NAN}, 4), dpb::InvalidParameter);
  CHECK_THROWS_AS(dense_strategy(2, {1.0, 0.5, 1.0, 1.0}), dpb::InvalidParameter);
  CHECK_THROWS_AS(dense_strategy(2, {1.0, 0.0, 1.0, 0.0}), dpb::InvalidParameter);
  CHECK_THROWS_AS(banded_square_root_strategy(10, 11), dpb::InvalidParameter);
  CHECK_THROWS_AS(tree_strategy(10, 0), dpb::InvalidParameter);
  CHECK_THROWS_AS(sensitivity(square_root_strategy(10), Participation{0, 1}),
                  dpb::InvalidParameter);
}

TEST_CASE("matrix: best separated sums") {
  const std::vector<double> w{5, 1, 4, 4, 0, 3};
  const auto best = best_separated_sums(w, 2, 3);
  CHECK(best[1] == 5);
  CHECK(best[2] == 9);   // 5 + 4
  CHECK(best[3] == 12);  // 5 + 4 + 3
}
