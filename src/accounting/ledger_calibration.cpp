#include "accounting/ledger_calibration.hpp"

#include <cmath>
#include <cstdint>

#include "accounting/dpsgd/calibration.hpp"
#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {

CalibratedLedger calibrate_ledger(const LedgerOf& ledger_of, RunUnknown unknown,
                                  const std::string& accountant, const AccountantOptions& options,
                                  double target, const RunTarget& what,
                                  const CalibrationSettings& settings) {
  const EpsilonOracle oracle{accountant, options, what.delta, what.measure, what.fpr};
  switch (unknown) {
    case RunUnknown::noise_multiplier: {
      // The σ search of docs/calibration.md#sigma on the marked value.
      auto s = smallest_noise_multiplier(ledger_of, oracle, target, settings.tolerance,
                                         settings.max_sigma);
      return {s.noise_multiplier, std::move(s.guarantee)};
    }
    case RunUnknown::steps: {
      // The count search of docs/calibration.md#steps on the marked count.
      auto s = largest_count([&](std::int64_t n) { return ledger_of(static_cast<double>(n)); },
                             oracle, target);
      return {static_cast<double>(s.count), std::move(s.guarantee)};
    }
    case RunUnknown::sampling_rate:
    case RunUnknown::none:
      break;
  }
  throw InvalidParameter("unknown", "a ledger solves for a noise parameter or a count");
}

namespace {

/// Σ values, each addition rounded up: at least the exact sum.
double sum_up(std::span<const double> values) {
  double s = 0;
  for (double v : values) s = outward::sum_up(s, v);
  return s;
}

/// total·s_i/Σs for each share, then every one stepped down a double at a
/// time until their sum, added rounded up, is at most `total` (a few steps at
/// most: each quotient and product is within an ulp or two of the exact one).
std::vector<double> shares_of(std::span<const double> shares, double sum, double total) {
  std::vector<double> out;
  for (double s : shares) out.push_back(total * (s / sum));
  while (sum_up(out) > total)
    for (double& v : out) v = outward::down(v, 1);
  return out;
}

}  // namespace

SplitBudget split_budget(std::span<const double> shares, double epsilon, double delta) {
  if (shares.empty()) throw InvalidParameter("split", "no share given");
  double sum = 0;
  for (double s : shares) {
    if (!(s > 0 && s <= 1))
      throw InvalidParameter("split", "each share must be in (0, 1], got " + shown_number(s));
    sum += s;
  }
  if (!(std::abs(sum - 1) <= kShareSumTolerance))
    throw InvalidParameter("split",
                           "the shares must sum to 1 (within 1e-9), got " + shown_number(sum));
  return {shares_of(shares, sum, epsilon), shares_of(shares, sum, delta)};
}

CalibratedSplit calibrate_split(std::span<const LedgerPart> parts, std::span<const double> shares,
                                const std::string& accountant, const AccountantOptions& options,
                                double epsilon, double delta, const CalibrationSettings& settings) {
  if (shares.size() != parts.size())
    throw InvalidParameter(
        "split", std::to_string(shares.size()) + " share" + (shares.size() == 1 ? "" : "s") +
                     " for " + std::to_string(parts.size()) + " part" +
                     (parts.size() == 1 ? "" : "s") + " (one share per part of the composition)");
  CalibratedSplit out;
  out.budget = split_budget(shares, epsilon, delta);
  std::vector<double> epsilons, deltas;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    try {
      out.parts.push_back(calibrate_ledger(
          parts[i].ledger_of, parts[i].unknown, accountant, options, out.budget.epsilons[i],
          RunTarget{Measure::epsilon, out.budget.deltas[i], 0}, settings));
    } catch (const NoSolution& e) {
      throw NoSolution("part " + std::to_string(i + 1) + ": " + e.what());
    }
    const Guarantee& g = out.parts.back().guarantee;
    // Basic composition adds guarantees under one relation only.
    if (i == 0) {
      out.neighbouring = g.neighbouring;
    } else if (g.neighbouring != out.neighbouring) {
      throw InvalidParameter("split", "part 1 is accounted under " +
                                          std::string(to_string(out.neighbouring)) + " and part " +
                                          std::to_string(i + 1) + " under " +
                                          std::string(to_string(g.neighbouring)) +
                                          ": their sum is a guarantee under no one relation");
    }
    if (g.bound != BoundKind::upper && out.bound == BoundKind::upper) out.bound = g.bound;
    epsilons.push_back(g.epsilon);
    deltas.push_back(g.delta);
  }
  // docs/composition.md#budget-split: the parts composed are
  // (Σ ε_i, Σ δ_i)-DP (Dwork & Roth 2014, Theorem 3.16); each ε_i ≤ its
  // target, so the sums, rounded up, are at most ε and δ.
  out.epsilon_sum = sum_up(epsilons);
  out.delta_sum = sum_up(deltas);
  return out;
}

}  // namespace dpb
