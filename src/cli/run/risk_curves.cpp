// The trade-off curves `risk` and `report` draw: the false-positive rates a
// curve is evaluated at, and the chart of every accountant's curve.
#include "cli/run/risk_curves.hpp"

#include <algorithm>
#include <cmath>

#include "accounting/risk/attack_risk.hpp"
#include "cli/run/result_rows.hpp"
#include "report/svg.hpp"

namespace dpb::cli {
namespace {

/// The drawn curve: this many false-positive rates, log-spaced from
/// kCurveSmallestFpr (or the smallest --fpr) to kCurveLargestFpr.
constexpr int kCurvePoints = 120;
constexpr double kCurveSmallestFpr = 1e-4;
constexpr double kCurveLargestFpr = 0.999;

}  // namespace

std::vector<double> curve_fprs(double smallest) {
  const double lo = std::min(kCurveSmallestFpr, smallest);
  // Evenly spaced in log space, from the logs: kCurveLargestFpr / lo
  // overflows for a subnormal lo. The ends are exact.
  const double log_lo = std::log(lo), log_hi = std::log(kCurveLargestFpr);
  std::vector<double> x(kCurvePoints);
  for (int i = 0; i < kCurvePoints; ++i)
    x[static_cast<std::size_t>(i)] =
        i == 0 ? lo
        : i == kCurvePoints - 1
            ? kCurveLargestFpr
            : std::exp(log_lo + (log_hi - log_lo) * static_cast<double>(i) / (kCurvePoints - 1));
  return x;
}

report::Chart tradeoff_chart(const std::vector<AttackBounds>& curves,
                             const std::vector<double>& marks) {
  report::Chart chart;
  chart.title = "Membership inference: largest true-positive rate of any attack";
  chart.x_label = "false-positive rate";
  chart.y_label = "true-positive rate (upper bound)";
  chart.log_x = true;
  for (const auto& c : curves)
    chart.series.push_back(
        {c.accountant + ": " + claim_words(c.bound), c.fpr, c.tpr, c.bound != BoundKind::upper});
  chart.series.push_back({"random guess: TPR = FPR", curves.front().fpr, curves.front().fpr, true});
  // The asked rates as vertical marks, one series broken between them.
  report::Series m{"false-positive rates in the table", {}, {}, true};
  for (double x : marks) {
    m.x.insert(m.x.end(), {x, x, x});
    m.y.insert(m.y.end(), {0.0, 1.0, std::nan("")});
  }
  chart.series.push_back(std::move(m));
  chart.caption.push_back("TPR <= 1 - f(FPR), f the trade-off function (Dong, Roth & Su 2022)");
  return chart;
}

}  // namespace dpb::cli
