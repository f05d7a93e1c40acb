#include "accounting/composition_accountant.hpp"

#include <algorithm>
#include <boost/math/tools/minima.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "accounting/amplification.hpp"
#include "accounting/composition.hpp"
#include "accounting/errors.hpp"
#include "accounting/event_walk.hpp"
#include "accounting/gaussian_mechanism.hpp"
#include "accounting/laplace_mechanism.hpp"
#include "accounting/rdp_without_replacement.hpp"

namespace dpb {
namespace {

using Step = CompositionAccountant::Step;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The search for the split of the total δ between the steps (δ0) and the
// theorem. Every split gives a valid bound; these settings only trade how
// tight the reported split is against time.

/// Solver precision (bits) of optimal_epsilon while the split is searched
/// (~1.5e-11 relative: enough to rank splits; the winner is re-solved at kReportBits).
constexpr int kSearchBits = 36;
/// Solver precision (bits) of the reported ε: full double precision.
constexpr int kReportBits = 52;
/// Brent's precision on the split, in bits: about half of double's 52, the most
/// a minimiser can resolve (near a minimum f changes quadratically).
constexpr int kBrentBits = 24;
/// Brent iteration cap (each iteration evaluates the composed ε or δ once).
constexpr std::uintmax_t kBrentMaxIterations = 60;
/// ε(δ): log δ0 searched over [log δ0_max − 60, log δ0_max]; a δ0 below e^−60
/// (1e-26) of the largest only raises ε0 without buying any slack.
constexpr double kEpsilonSplitLogRange = 60;
/// ε(δ): grid points over that range before Brent (2 nats, ×7.4 in δ0, apart).
constexpr int kEpsilonSplitGrid = 30;
/// δ(ε): the lowest log δ0 searched, e^−700 ≈ 1e-304, next to the smallest
/// normal double (e^−708): the best δ0 can be tiny when the target ε is large.
constexpr double kDeltaSplitLogFloor = -700;
/// δ(ε): grid points over [−700, log δ0_max] before Brent (~10 nats apart).
constexpr int kDeltaSplitGrid = 70;
/// log of a zero total δ for the minimiser: below the log of every positive double.
constexpr double kLogOfZero = -1e300;

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw InvalidParameter("count", "too many steps");
  return r;
}

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here).
/// A leaf becomes one Step: its per-use (ε0, δ0) profile, amplified when
/// sampled (SPEC §5).
struct StepPlanner {
  Planned<Step> operator()(const GaussianEvent& e, const Sampling& s) const {
    if (const auto* p = std::get_if<PoissonSampling>(&s)) {
      if (p->probability == 1) return Step{Step::Kind::gaussian, e.noise_multiplier};
      return Step{Step::Kind::sampled_gaussian, e.noise_multiplier, p->probability, false};
    }
    if (const auto* w = std::get_if<WithoutReplacementSampling>(&s))
      // Replace-one moves the clipped sum by up to 2 clipping norms: the
      // Gaussian's noise relative to its sensitivity is σ/2.
      return Step{Step::Kind::sampled_gaussian, e.noise_multiplier / kReplaceOneSensitivity,
                  w->ratio(), true};
    return Step{Step::Kind::gaussian, e.noise_multiplier};
  }
  Planned<Step> operator()(const LaplaceEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return Planned<Step>::refuse(refuse_sampled("composition", s, "a gaussian", e.kName));
    return Step{Step::Kind::laplace, e.scale};
  }
  Planned<Step> operator()(const NoOpEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const NonPrivateEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const EpsilonDeltaEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const DiscreteLaplaceEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const DiscreteGaussianEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const RandomizedResponseEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const ZcdpEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const ExponentialMechanismEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const PermuteAndFlipEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const MixtureOfGaussiansEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const SingleEpochTreeAggregationEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const RepeatAndSelectEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
  Planned<Step> operator()(const TruncatedSubsampledGaussianEvent& e, const Sampling&) const {
    return Planned<Step>::refuse(std::string("composition: ") + std::string(e.kName) +
                                 " is not supported yet");
  }
};

constexpr const char* kHeterogeneous =
    "composition: only repetitions of one mechanism are supported (homogeneous composition, "
    "SPEC 4); this run mixes different mechanisms or parameters";

/// The one Step that `event` repeats (after `held`, what the accountant
/// already holds) and how often, or why the theorems do not apply.
struct Collected {
  std::optional<Step> step;
  std::int64_t count = 0;
  std::optional<std::string> error;
};

Collected collect(const DpEvent& event, std::int64_t mult, const std::optional<Step>& held) {
  Collected c;
  c.step = held;
  const Plan<Step> plan = plan_event<Step>(event, StepPlanner{}, "composition");
  if (plan.refusal) {
    c.error = plan.refusal;
    return c;
  }
  for (const auto& [step, n] : plan.terms) {
    if (n == 0) continue;
    if (c.step && !(*c.step == step)) {
      c.error = kHeterogeneous;
      return c;
    }
    c.step = step;
    c.count = checked_add(c.count, checked_count_product(mult, n));
  }
  return c;
}

// Per-step (ε0, δ0) profile of the mechanism, after amplification (§5).
// δ0 ≤ max_step_delta(step).
double max_step_delta(const Step& s) { return s.kind == Step::Kind::sampled_gaussian ? s.q : 1.0; }

double step_epsilon(const Step& s, double d0) {
  switch (s.kind) {
    case Step::Kind::gaussian:
      return gaussian_epsilon(s.parameter, d0);
    case Step::Kind::laplace:
      return laplace_epsilon(s.parameter, d0);
    case Step::Kind::sampled_gaussian:
      if (s.q == 0) return 0;
      return amplify_poisson(gaussian_epsilon(s.parameter, std::min(1.0, d0 / s.q)), 0, s.q)
          .epsilon;
  }
  return kInf;
}

double step_delta(const Step& s, double e0) {
  switch (s.kind) {
    case Step::Kind::gaussian:
      return gaussian_delta(s.parameter, e0);
    case Step::Kind::laplace:
      return laplace_delta(s.parameter, e0);
    case Step::Kind::sampled_gaussian:
      if (s.q == 0) return 0;
      return s.q * gaussian_delta(s.parameter, amplification_inner_epsilon(e0, s.q));
  }
  return 1;
}

// Minimises f over u ∈ [lo, hi]: a coarse grid, then Brent around the best
// grid point. Returns the argmin (any u is a valid split; this only tightens).
double minimise(const std::function<double(double)>& f, double lo, double hi, int grid) {
  if (!(hi > lo)) return hi;
  double best_u = hi;
  double best = f(hi);
  const double h = (hi - lo) / grid;
  int best_i = grid;
  for (int i = 0; i < grid; ++i) {
    const double u = lo + h * i;
    const double v = f(u);
    if (v < best) {
      best = v;
      best_u = u;
      best_i = i;
    }
  }
  if (!std::isfinite(best)) return best_u;
  const double a = std::max(lo, lo + h * (best_i - 1));
  const double b = std::min(hi, lo + h * (best_i + 1));
  std::uintmax_t iters = kBrentMaxIterations;
  const auto r = boost::math::tools::brent_find_minima(f, a, b, kBrentBits, iters);
  return r.second < best ? r.first : best_u;
}

}  // namespace

std::string_view to_string(CompositionMethod m) {
  switch (m) {
    case CompositionMethod::basic:
      return "basic";
    case CompositionMethod::advanced:
      return "advanced";
    case CompositionMethod::optimal:
      return "optimal";
  }
  return "optimal";
}

CompositionAccountant::CompositionAccountant(const AccountantOptions& options)
    : method_(options.composition) {}

std::optional<std::string> CompositionAccountant::unsupported_reason(const DpEvent& event) const {
  return collect(event, 1, step_).error;
}

void CompositionAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (count <= 0) {
    if (auto why = unsupported_reason(event)) throw UnsupportedEvent(*why);
    return;
  }
  const Collected c = collect(event, count, step_);
  if (c.error) throw UnsupportedEvent(*c.error);
  const std::int64_t total = checked_add(count_, c.count);
  step_ = c.step;
  count_ = total;
}

std::optional<std::int64_t> CompositionAccountant::max_count() const {
  if (method_ == CompositionMethod::optimal) return kMaxOptimalCount;
  return std::nullopt;
}

Guarantee CompositionAccountant::base() const {
  Guarantee g;
  g.accountant = "composition";
  g.bound = BoundKind::upper;
  g.neighbouring =
      step_ && step_->replace_one ? Neighbouring::replace_one : Neighbouring::add_remove;
  g.notes.push_back(std::string(to_string(method_)) + " composition of " + std::to_string(count_) +
                    " steps, each (epsilon_step, delta_step)-DP");
  return g;
}

Guarantee CompositionAccountant::epsilon(double delta) const {
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  Guarantee g = base();
  g.delta = delta;
  if (!step_ || count_ == 0) {
    g.epsilon = 0;
    return g;
  }
  const Step s = *step_;
  const std::int64_t k = count_;
  const double kd = static_cast<double>(k);
  const bool pure = s.kind == Step::Kind::laplace;
  double d0 = 0;
  double eps = kInf;
  double slack = 0;
  // ε of the composition for a per-step δ0; `bits` is the solver precision.
  auto total_eps = [&](double step_d, int bits) -> double {
    try {
      const double e0 = step_epsilon(s, step_d);
      if (!std::isfinite(e0)) return kInf;
      switch (method_) {
        case CompositionMethod::basic:
          return basic_epsilon(e0, step_d, k, delta);
        case CompositionMethod::advanced:
          return advanced_epsilon(e0, step_d, k, delta);
        case CompositionMethod::optimal:
          return optimal_epsilon(e0, step_d, k, delta, bits);
      }
    } catch (const NoSolution&) {
    }
    return kInf;
  };
  if (method_ == CompositionMethod::basic) {
    d0 = std::min(delta / kd, max_step_delta(s));
    while (kd * d0 > delta) d0 = std::nextafter(d0, 0.0);
    eps = total_eps(d0, kReportBits);
  } else {
    // Largest per-step δ0 that leaves room for the theorem's own δ.
    double d0_max =
        method_ == CompositionMethod::advanced ? delta / kd : -std::expm1(std::log1p(-delta) / kd);
    d0_max = std::min(d0_max, max_step_delta(s));
    const double u_hi = std::log(d0_max);
    const double u = minimise([&](double v) { return total_eps(std::exp(v), kSearchBits); },
                              u_hi - kEpsilonSplitLogRange, u_hi, kEpsilonSplitGrid);
    d0 = std::exp(u);
    eps = total_eps(d0, kReportBits);
    if (pure) {
      const double e_pure = total_eps(0, kReportBits);
      if (e_pure <= eps) {
        eps = e_pure;
        d0 = 0;
      }
    }
  }
  if (method_ == CompositionMethod::optimal)
    slack = delta + std::expm1(kd * std::log1p(-d0));  // δ − (1 − (1−δ0)^k)
  else
    slack = delta - kd * d0;
  g.epsilon = eps;
  g.add_count("composed_count", k);
  g.details.insert(
      g.details.end(),
      {{"epsilon_step", step_epsilon(s, d0)}, {"delta_step", d0}, {"delta_slack", slack}});
  return g;
}

Guarantee CompositionAccountant::delta(double epsilon) const {
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  Guarantee g = base();
  g.epsilon = epsilon;
  if (!step_ || count_ == 0) {
    g.delta = 0;
    return g;
  }
  const Step s = *step_;
  const std::int64_t k = count_;
  const double kd = static_cast<double>(k);
  const bool pure = s.kind == Step::Kind::laplace;
  // δ of the composition at ε for a per-step δ0 (ε0 from the step's profile).
  auto total_delta = [&](double step_d) -> double {
    const double e0 = step_epsilon(s, step_d);
    if (!std::isfinite(e0)) return 1;
    if (method_ == CompositionMethod::advanced) {
      try {
        return advanced_delta(e0, step_d, k, epsilon);
      } catch (const NoSolution&) {
        return 1;  // ε at or below the theorem's kε0(e^ε0 − 1): only the trivial δ = 1
      }
    }
    return optimal_delta(e0, step_d, k, epsilon);
  };
  double d0 = 0;
  double total = 1;
  double e0 = 0;
  if (method_ == CompositionMethod::basic) {
    e0 = epsilon / kd;
    d0 = step_delta(s, e0);
    total = std::min(1.0, kd * d0);
  } else {
    const double u_hi = std::log(max_step_delta(s));
    const double u = minimise(
        [&](double v) {
          const double t = total_delta(std::exp(v));
          return t > 0 ? std::log(t) : kLogOfZero;
        },
        kDeltaSplitLogFloor, u_hi, kDeltaSplitGrid);
    d0 = std::exp(u);
    total = total_delta(d0);
    if (pure) {
      const double t0 = total_delta(0);
      if (t0 <= total) {
        total = t0;
        d0 = 0;
      }
    }
    e0 = step_epsilon(s, d0);
  }
  const double slack = method_ == CompositionMethod::optimal
                           ? total + std::expm1(kd * std::log1p(-d0))
                           : total - kd * d0;
  g.delta = total;
  g.add_count("composed_count", k);
  g.details.insert(g.details.end(),
                   {{"epsilon_step", e0}, {"delta_step", d0}, {"delta_slack", slack}});
  return g;
}

}  // namespace dpb
