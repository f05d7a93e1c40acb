#include "accounting/numerics/fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace dpb::fft {
namespace {

// FFTW's planner is not thread-safe; executing a plan is (FFTW manual §5.1).
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

struct FftwFree {
  void operator()(void* p) const { fftw_free(p); }
};

template <class T>
std::unique_ptr<T[], FftwFree> alloc(std::size_t n) {
  void* p = fftw_malloc(sizeof(T) * n);
  if (!p) throw std::bad_alloc();
  return std::unique_ptr<T[], FftwFree>(static_cast<T*>(p));
}

int as_int(std::size_t n) {
  if (n > static_cast<std::size_t>(1) << 30) throw std::length_error("fft: size too large");
  return static_cast<int>(n);
}

enum class Kind { forward, inverse };

struct PlanDestroy {
  void operator()(fftw_plan p) const {
    std::lock_guard<std::mutex> lock(planner_mutex());
    fftw_destroy_plan(p);
  }
};
using Plan = std::shared_ptr<std::remove_pointer_t<fftw_plan>>;

/// Plans are kept for the process. FFTW_ESTIMATE planning computes the plan's
/// twiddle factors, which costs more than the transform itself (2–4 ms for
/// 2^18 points, 13 ms for 1.2·10^6, against 1 and 5–9 ms to execute; issue
/// 17), and the PLD accountant transforms the same sizes again: both
/// directions of a query, the neighbouring points of a series, a solver's
/// iterates. A kept plan is executed on new arrays (FFTW's new-array execute,
/// safe from several threads at once; every array comes from fftw_malloc, so
/// all share the plan's alignment) and computes what a new plan would: the
/// planner's choice under FFTW_ESTIMATE depends on the size and alignment
/// only. At most kKeptPlans plans of at most kKeptPoints points in all (their
/// twiddles take about 8 bytes a point, 34 MiB for one plan of 2^22 points
/// measured here: about that much at most).
constexpr std::size_t kKeptPlans = 8;
constexpr std::size_t kKeptPoints = std::size_t{1} << 22;

Plan plan_for(Kind kind, std::size_t n, double* real, fftw_complex* complex) {
  struct Kept {
    Kind kind;
    std::size_t n;
    Plan plan;
  };
  std::mutex& mutex = planner_mutex();  // constructed first, so destroyed after `kept`
  static std::deque<Kept> kept;
  std::vector<Kept> evicted;  // destroyed after the lock is released (PlanDestroy locks)
  std::unique_lock<std::mutex> lock(mutex);
  for (auto it = kept.begin(); it != kept.end(); ++it)
    if (it->kind == kind && it->n == n) {
      Kept hit = std::move(*it);
      kept.erase(it);
      kept.push_front(hit);
      return hit.plan;
    }
  fftw_plan raw = kind == Kind::forward
                      ? fftw_plan_dft_r2c_1d(as_int(n), real, complex, FFTW_ESTIMATE)
                      : fftw_plan_dft_c2r_1d(as_int(n), complex, real, FFTW_ESTIMATE);
  if (!raw) throw std::runtime_error("fft: FFTW could not plan a transform");
  Plan plan(raw, PlanDestroy{});
  if (n <= kKeptPoints) {
    kept.push_front({kind, n, plan});
    std::size_t points = 0, count = 0;
    for (auto it = kept.begin(); it != kept.end();) {
      points += it->n;
      if (++count > kKeptPlans || points > kKeptPoints) {
        evicted.push_back(std::move(*it));
        it = kept.erase(it);
      } else {
        ++it;
      }
    }
  }
  lock.unlock();
  return plan;
}

}  // namespace

std::size_t good_size(std::size_t n) {
  if (n <= 1) return 1;
  for (std::size_t m = n;; ++m) {
    std::size_t r = m;
    for (std::size_t p : {2u, 3u, 5u, 7u})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

namespace {

/// The forward transform of x folded to length n, in FFTW's output array.
std::unique_ptr<fftw_complex[], FftwFree> transformed(std::span<const double> x, std::size_t n) {
  auto in = alloc<double>(n);
  auto out = alloc<fftw_complex>(n / 2 + 1);
  std::fill(in.get(), in.get() + n, 0.0);
  for (std::size_t j = 0; j < x.size(); ++j) in[j % n] += x[j];  // fold: circular aliasing
  const Plan plan = plan_for(Kind::forward, n, in.get(), out.get());
  fftw_execute_dft_r2c(plan.get(), in.get(), out.get());
  return out;
}

}  // namespace

std::vector<std::complex<double>> forward(std::span<const double> x, std::size_t n) {
  const auto out = transformed(x, n);
  std::vector<std::complex<double>> result(n / 2 + 1);
  std::memcpy(static_cast<void*>(result.data()), out.get(), sizeof(fftw_complex) * (n / 2 + 1));
  return result;
}

std::vector<double> forward_modulus(std::span<const double> x, std::size_t n) {
  const auto out = transformed(x, n);
  std::vector<double> result(n / 2 + 1);
  for (std::size_t k = 0; k < result.size(); ++k)
    result[k] = std::abs(std::complex<double>(out[k][0], out[k][1]));
  return result;
}

std::vector<double> inverse(std::vector<std::complex<double>> spectrum, std::size_t n) {
  if (spectrum.size() != n / 2 + 1) throw std::invalid_argument("fft: spectrum size");
  auto in = alloc<fftw_complex>(n / 2 + 1);
  auto out = alloc<double>(n);
  std::memcpy(in.get(), static_cast<const void*>(spectrum.data()),
              sizeof(fftw_complex) * (n / 2 + 1));
  spectrum.clear();
  spectrum.shrink_to_fit();
  const Plan plan = plan_for(Kind::inverse, n, out.get(), in.get());
  fftw_execute_dft_c2r(plan.get(), in.get(), out.get());  // unnormalised: FFTW returns n·y
  std::vector<double> y(n);
  const double scale = 1.0 / static_cast<double>(n);
  for (std::size_t j = 0; j < n; ++j) y[j] = out[j] * scale;
  return y;
}

const char* library_name() { return "FFTW 3 (double)"; }

}  // namespace dpb::fft
