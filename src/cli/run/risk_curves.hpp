#pragma once
// What `risk` and `report` share: the default false-positive rates and
// priors, and the drawn trade-off curves.
#include <vector>

#include "accounting/accountant.hpp"
#include "report/svg.hpp"

namespace dpb::cli {

/// Defaults of --fpr and --prior (issue 16): the low false-positive rates
/// membership-inference papers report, and a balanced and a rare-member prior.
inline const std::vector<double> kDefaultFprs{1e-3, 1e-2, 0.1};
inline const std::vector<double> kDefaultPriors{0.5, 0.01};

/// The false-positive rates a drawn curve is evaluated at: log-spaced from
/// 1e-4 (or `smallest`, when smaller) to 0.999.
std::vector<double> curve_fprs(double smallest);

/// Each accountant's TPR bound against the FPR (log axis), the random-guess
/// diagonal and vertical marks at `marks`. `curves` were evaluated at
/// curve_fprs(); not empty.
report::Chart tradeoff_chart(const std::vector<AttackBounds>& curves,
                             const std::vector<double>& marks);

}  // namespace dpb::cli
