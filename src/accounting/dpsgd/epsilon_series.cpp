#include "accounting/dpsgd/epsilon_series.hpp"

#include <algorithm>
#include <exception>
#include <thread>

namespace dpb {
namespace {

/// The name under which the PLD accountant reports its final grid interval.
constexpr const char* kPldIntervalDetail = "pld_interval";

/// Points [begin, end) in order on one thread; a PLD point starts from the
/// previous point's final interval unless the caller fixed one.
void run_slice(const std::string& name, const AccountantOptions& options,
               const std::function<EventPtr(std::int64_t)>& event_of,
               std::span<const std::int64_t> counts, double delta, std::size_t begin,
               std::size_t end, std::vector<Guarantee>& out) {
  AccountantOptions o = options;
  o.pld.share_releases = true;
  const bool seed = options.pld.interval <= 0;
  for (std::size_t i = begin; i < end; ++i) {
    auto accountant = make_accountant(name, o);
    accountant->compose(*event_of(counts[i]));
    out[i] = accountant->epsilon(delta);
    if (seed)
      for (const auto& [key, value] : out[i].details)
        if (key == kPldIntervalDetail && value > 0) o.pld.interval = value;
  }
}

}  // namespace

std::vector<Guarantee> epsilon_series(const std::string& name, const AccountantOptions& options,
                                      const std::function<EventPtr(std::int64_t)>& event_of,
                                      std::span<const std::int64_t> counts, double delta) {
  std::vector<Guarantee> out(counts.size());
  const std::size_t threads =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), counts.size());
  if (threads <= 1) {
    run_slice(name, options, event_of, counts, delta, 0, counts.size(), out);
    return out;
  }
  // Contiguous slices, so that each thread's points are neighbours.
  std::vector<std::exception_ptr> errors(threads);
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads; ++t) {
      const std::size_t begin = counts.size() * t / threads;
      const std::size_t end = counts.size() * (t + 1) / threads;
      pool.emplace_back([&, t, begin, end] {
        try {
          run_slice(name, options, event_of, counts, delta, begin, end, out);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    }
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace dpb
