#pragma once
// Tight (ε, δ) accounting with privacy loss distributions (docs/pld.md#privacy-loss).
//
// A privacy loss distribution (PLD) of a pair (P, Q) is the law of
// X = log(dP/dQ)(z), z ∼ P; its privacy profile is
//   δ(ε) = E[(1 − e^{ε − X})₊]                                  (Meiser & Mohammadi 2018)
// and composing mechanisms adds independent losses, so PLDs convolve
// (Koskela, Jälkö & Honkela 2020). Everything here works on one grid of loss
// values l_k = kΔ and returns a sound interval [lower, upper] around the exact
// ε(δ) (or δ(ε)); the method and its error terms are described stage by stage
// in internal.hpp, each stage implemented in one pld_*.cpp file.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dpb::pld {

/// Remove: P is the law with the record (for add/remove, P = (1−q)μ0 + qμ1
/// and Q = μ0); add swaps P and Q (docs/pld.md#directions).
enum class Direction { remove, add };

/// A point mass of a discrete privacy loss: P-mass `mass` at loss `loss`
/// (its Q-mass is mass·e^{−loss}); `loss` may be +∞.
struct Atom {
  double loss = 0;
  double mass = 0;
  bool operator==(const Atom&) const = default;
};

/// One release of a mechanism, as a pair (P, Q) of output laws whose privacy
/// loss is a monotone function of one real variable or takes finitely many
/// values (internal.hpp, stage (1)).
struct Mechanism {
  enum class Kind {
    gaussian,  ///< base N(0, σ²) vs N(1, σ²), optionally Poisson-subsampled (add/remove)
    laplace,   ///< base Lap(0, b) vs Lap(1, b), optionally Poisson-subsampled
    gaussian_replace,  ///< (1−q)N(0,σ²) + qN(1,σ²) vs (1−q)N(0,σ²) + qN(−1,σ²) (REPLACE pair)
    gaussian_mixture,   ///< Σ_i p_i N(c_i, s²) vs N(0, s²), c_i ≥ 0 (mixture of Gaussians)
    atoms,              ///< finitely many atoms of the loss (`atoms`, `add_atoms`)
    discrete_laplace,   ///< DLap(a) + shift vs DLap(a) on the integers
    discrete_gaussian,  ///< N_Z(shift, σ²) vs N_Z(0, σ²) on the integers
    blend,              ///< weights[i] of parts[i], which the output reveals (a mixture of PLDs)
    /// The symmetric pair whose profile at every ε ≥ 0 is parts[0]'s remove-direction
    /// profile, in both directions (docs/pld.md#symmetrised-pair): it dominates every
    /// ordered pair of a symmetric relation that parts[0] dominates at ε ≥ 0.
    symmetrised,
  };
  Mechanism() = default;
  /// A base release: kind, its noise parameter, its sampling probability.
  Mechanism(Kind k, double noise, double q = 1) : kind(k), parameter(noise), sampling(q) {}

  Kind kind = Kind::gaussian;
  double parameter = 1;  ///< σ (gaussian*, discrete_gaussian), b (laplace), a (discrete_laplace), s
  double sampling = 1;   ///< Poisson sampling probability q ∈ (0, 1] (gaussian, laplace, replace)
  double shift = 1;      ///< integer shift of the discrete kinds (the sensitivity)
  std::vector<double> shifts;    ///< gaussian_mixture: c_i
  std::vector<double> weights;   ///< gaussian_mixture: p_i; blend: the parts' weights
  std::vector<Atom> atoms;       ///< atoms: remove direction (P = the first law)
  std::vector<Atom> add_atoms;   ///< atoms: add direction; empty = the same as `atoms`
  std::vector<Mechanism> parts;  ///< blend; symmetrised: the one pair it symmetrises
  bool operator==(const Mechanism&) const = default;
};

/// Whether both directions have the same PLD (then only one is composed).
bool symmetric(const Mechanism& m);

/// The P-mass that `m` puts at +∞ in direction d by its definition (atoms at
/// +∞; not the truncated tails).
double infinite_mass(const Mechanism& m, Direction d);

/// `count` independent repetitions of `mechanism`.
struct Component {
  Mechanism mechanism;
  std::int64_t count = 1;
};

/// Connect-the-dots discretisation of one release on the grid kΔ
/// (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022): the P-mass of every
/// bucket (kΔ, (k+1)Δ] is split between its two end points so that both its
/// P-mass and its Q-mass are kept. The result dominates the true pair (its
/// profile interpolates the true one at the grid points, linearly in e^ε,
/// and the true profile is convex in e^ε).
struct DiscreteLoss {
  double interval = 0;           ///< Δ
  std::int64_t first_index = 0;  ///< mass[i] sits at loss (first_index + i)·Δ
  std::vector<double> mass;      ///< P-mass of the in-range part
  double dropped_mass = 0;       ///< P-mass put at +∞: truncated tails and `infinite_mass`
  double infinite_mass = 0;      ///< of which at +∞ by definition (atoms at +∞)
  double split_variance = 0;  ///< Σ_buckets p·w̄(1−w̄)·(width/Δ)², w̄ = share sent up (stage (3))
  /// Coarse tails (docs/pld.md#coarse-tails): outside the fine part, positions
  /// [fine_begin, fine_end) of `mass`, the points are `stride` grid steps apart
  /// (aligned on fine_begin and fine_end − 1) and every other entry is 0.
  std::size_t stride = 1;
  std::size_t fine_begin = 0, fine_end = 0;
  /// Bound on the probability that one release's true loss falls in a coarse
  /// bucket (between two points `stride` apart).
  double coarse_probability = 0;
};

/// Coarse tails (docs/pld.md#coarse-tails): outside a fine part that holds
/// all but `tail` of the P-mass at each end, points `stride` grid steps apart.
/// stride 1: one fine grid (the default, and what mechanisms without a
/// quantile function always get).
struct Coarsening {
  std::size_t stride = 1;
  double tail = 0;
  bool operator==(const Coarsening&) const = default;
};

/// Discretises one release. `tail_mass` bounds the P-mass cut off at each end.
DiscreteLoss discretise(const Mechanism& m, Direction d, double interval, double tail_mass,
                        Coarsening coarsening = {});

/// Exact privacy profile of one release in one direction, by the same CDFs
/// (for tests and for the q = 1 closed forms).
double exact_delta(const Mechanism& m, Direction d, double epsilon);

/// The composed, discretised loss of one direction and the error terms that
/// turn its profile into sound bounds on the true one.
class ComposedLoss {
 public:
  ComposedLoss() = default;
  ComposedLoss(double interval, std::int64_t first_index, std::vector<double> mass);

  double interval = 0;
  std::int64_t first_index = 0;
  std::vector<double> mass;  ///< composed P-mass at (first_index + i)·Δ, clamped ≥ 0
  double infinite_mass = 0;  ///< composed P-mass at +∞ (truncated tails and atoms at +∞)
  /// Lower bound on the composed P-mass at +∞ by definition (atoms at +∞): part
  /// of the true loss, so the lower bounds count it too.
  double certain_infinite_mass = 0;
  double alias_above = 0;  ///< bound on the mass that wrapped down from above the window
  double alias_below = 0;  ///< bound on the mass that wrapped up from below the window
  double roundoff = 0;     ///< bound on Σ|FFT round-off| over the array
  /// Bound on a relative error common to every mass (the releases' total
  /// masses raised to their counts, docs/pld.md#round-off).
  double relative_error = 0;
  /// Σ_steps of the largest conditional mean of Y − X (≤ Δ²/8 each), on the event that
  /// at most `coarse_releases` releases fall in a coarse bucket.
  double bias = 0;
  double variance = 0;       ///< Σ_steps Var(W), W the zero-mean part of Y − X
  std::size_t releases = 0;  ///< number of composed releases (0: identity)
  /// Coarse tails (docs/pld.md#coarse-tails): the widest bucket is `stride`·Δ;
  /// at most `coarse_releases` releases fall in a coarse bucket except with
  /// probability `coarse_excess`, which the lower bounds subtract.
  double stride = 1;
  double coarse_releases = 0;
  double coarse_excess = 0;

  /// Profile of the discrete distribution itself: Σ mass_i (1 − e^{ε − l_i})₊.
  double grid_delta(double epsilon) const;
  /// ε where grid_delta crosses d (exact between grid points in the array form;
  /// by bisection, rounded to the side asked for, in the spectral form); +∞ if d ≤ 0.
  double grid_epsilon(double d, bool upper_side = true) const;

  /// The spectral form: y_j = Σ_i Re(coefficients_i e^{2πi k_i j/N}) on the
  /// window j = 0 … N−1, used when few Fourier coefficients are not negligible.
  static ComposedLoss spectral(double interval, std::int64_t first_index, std::size_t period,
                               std::vector<std::size_t> frequencies,
                               std::vector<std::complex<double>> coefficients);
  bool is_spectral() const { return period_ > 0; }
  /// Number of grid points of the window.
  std::size_t grid_points() const { return period_ > 0 ? period_ : mass.size(); }

  double delta_upper(double epsilon) const;
  /// `second_order`: also the bound of docs/pld.md#second-order-lower-bound
  /// (tighter at fine grids and long runs, and costlier: a few thousand reads
  /// of the grid); without it, the coupling's first-order bound alone.
  double delta_lower(double epsilon, bool second_order = true) const;
  double epsilon_upper(double delta) const;
  double epsilon_lower(double delta) const;

 private:
  /// Deviation t with P(Σ(Y − X) > t) ≤ eta (Bernstein plus the bias).
  double deviation(double eta) const;
  /// Relative error of δ and tail sums read off the masses: the summation's
  /// and relative_error.
  double mass_error() const;
  /// The first array index i with l_i > x (mass.size() if none).
  std::size_t first_above(double x) const;
  /// P(S_Y > x) of the discrete distribution (the window's computed masses).
  double grid_tail(double x) const;
  /// The lower bound of (3), second order (docs/pld.md#second-order-lower-bound):
  /// what δ_Y(ε) overstates the true δ(ε) by, at most.
  double curvature_penalty(double epsilon) const;
  /// Σ_{l_j > ε} y_j (1 − e^{ε − l_j}) (weighted) or Σ_{l_j > ε} y_j, in the spectral form.
  double spectral_delta(double epsilon, bool weighted = true) const;
  std::size_t period_ = 0;
  std::vector<std::size_t> freq_;
  std::vector<std::complex<double>> coef_, one_minus_rot_, one_minus_damped_;
  std::vector<double> tail_p_;  ///< Σ_{j ≥ i} mass_j
  std::vector<double> tail_q_;  ///< Σ_{j ≥ i} mass_j e^{l_i − l_j}
};

/// Composes all components in direction d on the grid Δ: one forward FFT per
/// component, Π X_c^{count_c} pointwise, one inverse FFT. The window is chosen
/// by Chernoff bounds so that at most `window_tail` mass wraps from each side.
/// With `coarsening`, the releases that allow it get coarse tails, and at most
/// K of them fall in a coarse bucket except with probability ≤ window_tail.
ComposedLoss compose(std::span<const Component> components, Direction d, double interval,
                     double tail_mass, double window_tail, Coarsening coarsening = {});

/// Number of grid points compose() would use (without computing it).
std::size_t grid_size(std::span<const Component> components, Direction d, double interval,
                      double tail_mass, double window_tail);

// Grid limits, in grid points. Each bounds the span of one release's grid and
// the composed window when it is transformed as a whole; a window with only a
// few Fourier coefficients left (spectral form) is never held as an array and
// is bounded by kMaxSpectralWindow alone.

/// The accountant's limit (Options::max_grid): 2^23 points, 64 MiB per array
/// of doubles, keeps one refinement round within a few hundred MiB and seconds.
inline constexpr std::size_t kDefaultMaxGrid = std::size_t{1} << 23;
/// The limit of discretise() and compose() called directly with a chosen Δ
/// (tests): 2^26 points, 512 MiB per array, a guard against exhausting memory.
inline constexpr std::size_t kDirectMaxGrid = std::size_t{1} << 26;
/// Largest composed window in any form: 2^32 points keeps the integer phase
/// reductions k·j mod N (k, j < N) exact in 64 bits.
inline constexpr std::uint64_t kMaxSpectralWindow = std::uint64_t{1} << 32;

struct Options {
  double interval = 0;      ///< first Δ; 0 = automatic
  double tolerance = 1e-3;  ///< target (upper − lower) / upper; ≤ 0: no refinement
  /// Largest grid held in memory: one release, and the composed window when it
  /// has to be transformed as a whole (after many compositions only a few
  /// Fourier coefficients are kept and the window may be larger).
  std::size_t max_grid = kDefaultMaxGrid;
  /// Round each release's tail mass down to a power of two, so that queries
  /// about nearby run lengths share discretised releases (a series of
  /// points); the bounds stay sound, their last digits may differ from a
  /// query made alone.
  bool share_releases = false;
};

struct Interval {
  double lower = 0;
  double upper = 0;
  double interval = 0;    ///< Δ of the final grid
  std::size_t grid = 0;   ///< composed grid size of the final grid
  int refinements = 0;    ///< grids tried
  bool converged = true;  ///< width target met
  std::vector<std::string> notes;
};

/// Bounds on membership-inference attacks against the composition
/// (docs/pld.md#trade-off-curve): at each false-positive rate, [lower, upper] around the largest
/// true-positive rate of any test, and [lower, upper] around the advantage
/// max_x (TPR(x) − x) = δ(0).
struct TradeoffInterval {
  std::vector<double> tpr_lower, tpr_upper;
  double advantage_lower = 0, advantage_upper = 0;
  double interval = 0;   ///< Δ of the grid the curves were read on
  std::size_t grid = 0;  ///< its composed grid size
  std::vector<std::string> notes;
};

/// The curves of `upper` (both directions: the upper bound holds for tests
/// in either direction) and of `lower` (the remove direction: a member's
/// output against a non-member's), on the grid that the advantage's δ(0)
/// refinement reaches. The two lists are the same but for random allocation,
/// which has a pessimistic and an optimistic discretisation.
TradeoffInterval tradeoff_interval(std::span<const Component> upper,
                                   std::span<const Component> lower, std::span<const double> fprs,
                                   const Options& options);

/// [lower, upper] around ε(δ) of the composition, max over both directions.
Interval epsilon_interval(std::span<const Component> components, double delta,
                          const Options& options);
/// [lower, upper] around δ(ε).
Interval delta_interval(std::span<const Component> components, double epsilon,
                        const Options& options);

}  // namespace dpb::pld
