#include "accounting/fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cstring>
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
struct PlanDestroy {
  void operator()(fftw_plan p) const {
    std::lock_guard<std::mutex> lock(planner_mutex());
    fftw_destroy_plan(p);
  }
};
using Plan = std::unique_ptr<std::remove_pointer_t<fftw_plan>, PlanDestroy>;

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

std::vector<std::complex<double>> forward(std::span<const double> x, std::size_t n) {
  auto in = alloc<double>(n);
  auto out = alloc<fftw_complex>(n / 2 + 1);
  std::fill(in.get(), in.get() + n, 0.0);
  for (std::size_t j = 0; j < x.size(); ++j) in[j % n] += x[j];  // fold: circular aliasing
  Plan plan;
  {
    std::lock_guard<std::mutex> lock(planner_mutex());
    plan.reset(fftw_plan_dft_r2c_1d(as_int(n), in.get(), out.get(), FFTW_ESTIMATE));
  }
  if (!plan) throw std::runtime_error("fft: FFTW could not plan a transform");
  fftw_execute(plan.get());
  std::vector<std::complex<double>> result(n / 2 + 1);
  std::memcpy(static_cast<void*>(result.data()), out.get(), sizeof(fftw_complex) * (n / 2 + 1));
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
  Plan plan;
  {
    std::lock_guard<std::mutex> lock(planner_mutex());
    plan.reset(fftw_plan_dft_c2r_1d(as_int(n), in.get(), out.get(), FFTW_ESTIMATE));
  }
  if (!plan) throw std::runtime_error("fft: FFTW could not plan a transform");
  fftw_execute(plan.get());  // unnormalised: FFTW returns n·y
  std::vector<double> y(n);
  const double scale = 1.0 / static_cast<double>(n);
  for (std::size_t j = 0; j < n; ++j) y[j] = out[j] * scale;
  return y;
}

const char* library_name() { return "FFTW 3 (double)"; }

}  // namespace dpb::fft
