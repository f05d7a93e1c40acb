#pragma once
// Lower bounds on ε from a membership-inference attack's outcome (docs/risk.md#audit-bound):
// what an audit with known members and non-members, or the one-run audit of
// Steinke, Nasr & Jagielski 2023, shows about the true privacy loss. No I/O.
#include <cstdint>
#include <vector>

namespace dpb {

/// One-sided Clopper–Pearson upper confidence bound on a binomial proportion
/// (Clopper & Pearson 1934): the p with P(Binomial(n, p) ≤ k) = α, i.e. the
/// (1 − α) quantile of Beta(k + 1, n − k); 1 when k = n. 0 ≤ k ≤ n, n ≥ 1,
/// α ∈ (0, 1).
double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha);

/// The one-sided lower bound: the p with P(Binomial(n, p) ≥ k) = α, the α
/// quantile of Beta(k, n − k + 1); 0 when k = 0.
double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha);

/// An attack's counts on known members (tp flagged, fn missed) and
/// non-members (fp flagged, tn not).
struct AttackCounts {
  std::int64_t tp = 0, fn = 0, fp = 0, tn = 0;
};

struct AuditBound {
  double fpr = 0, fnr = 0;              ///< observed rates
  double fpr_upper = 0, fnr_upper = 0;  ///< their Clopper–Pearson upper bounds
  double alpha = 0;                     ///< level of each bound
  double epsilon_lower = 0;             ///< rounded toward less privacy loss
};

/// ε_lower at `confidence` and δ (docs/risk.md#audit-bound; Kairouz, Oh & Viswanath 2015,
/// Thm 2.1: an (ε, δ)-DP mechanism's tests satisfy FPR + e^ε·FNR ≥ 1 − δ and
/// FNR + e^ε·FPR ≥ 1 − δ): with FPR_u and FNR_u one-sided upper bounds each
/// at level (1 − confidence)/(2·tests) (Bonferroni over `tests` thresholds
/// tried and the two rates), ε_lower = max(log((1 − δ − FPR_u)/FNR_u),
/// log((1 − δ − FNR_u)/FPR_u), 0) holds with probability ≥ confidence.
/// Throws InvalidParameter on no members, no non-members, or a level outside
/// (0, 1).
AuditBound audit_epsilon_lower(const AttackCounts& counts, double confidence, double delta,
                               std::int64_t tests = 1);

/// A scored attack: score and whether the example was a member.
struct Scored {
  double score;
  bool member;
};

/// The threshold τ (flag a member when score ≥ τ) with the largest ε_lower
/// among every distinct score, each bound at the Bonferroni level over all
/// of them; or at the given threshold alone.
struct ThresholdAudit {
  double threshold = 0;
  std::int64_t tests = 1;  ///< thresholds tried (the Bonferroni factor)
  AttackCounts counts;
  AuditBound bound;
};
ThresholdAudit audit_scores(const std::vector<Scored>& scores, double confidence, double delta);
ThresholdAudit audit_scores_at(const std::vector<Scored>& scores, double threshold,
                               double confidence, double delta);

/// The one-run audit (Steinke, Nasr & Jagielski 2023, "Privacy auditing with
/// one (1) training run", NeurIPS 2023, main theorem): m canaries, each
/// included independently with probability ½, r of them guessed in or out, v
/// guesses right. For an (ε, δ)-DP mechanism the p-value of v is at most
///   P(Binomial(r, q) ≥ v) + 2mδ·max_{1≤i≤v} P(v − i ≤ Binomial(r, q) < v)/i,
/// q = e^ε/(1 + e^ε). ε_lower is the largest ε whose p-value is below
/// 1 − confidence (found by bisection, kept on the side where it is), 0
/// when even ε = 0 is not rejected.
double one_run_p_value(std::int64_t canaries, std::int64_t guesses, std::int64_t correct,
                       double epsilon, double delta);
double one_run_epsilon_lower(std::int64_t canaries, std::int64_t guesses, std::int64_t correct,
                             double confidence, double delta);

}  // namespace dpb
