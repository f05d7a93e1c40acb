#pragma once
// Items 0..count-1 computed in blocks on every core and handed over in their
// order, on the calling thread, as each block is ready. Workers run at most
// kMaxBlocksAhead blocks ahead of the consumer, so memory stays flat however
// many items there are. The first exception (a worker's, in item order, or the
// consumer's) stops the workers and is rethrown on the calling thread.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace dpb::util {

/// Items per block: enough to make a thread hand-over rare, few enough that
/// the first rows of a sweep appear at once.
inline constexpr std::size_t kBlockItems = 16;
/// Blocks the workers may compute before the consumer takes the first: the
/// bound on what is held in memory.
inline constexpr std::size_t kMaxBlocksAhead = 64;

/// `compute(i)` returns item i's results (a std::vector<T>); `consume(results,
/// done)` receives each block's results in item order, with the count of items
/// done so far.
template <typename T, typename Compute, typename Consume>
void compute_in_order(std::size_t count, Compute compute, Consume consume) {
  const std::size_t blocks = (count + kBlockItems - 1) / kBlockItems;
  struct Slot {
    bool done = false;
    std::vector<T> results;
    std::exception_ptr error;
  };
  // Block b waits in slot b % kMaxBlocksAhead: the workers never run further
  // ahead, so the slots are reused and their number does not grow with count.
  std::vector<Slot> slots(std::min(blocks, kMaxBlocksAhead));
  std::mutex m;
  std::condition_variable ready, room;
  std::size_t consumed = 0;  // blocks the consumer has taken (guarded by m)
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (std::size_t b; !stop && (b = next++) < blocks;) {
      {
        std::unique_lock lock(m);
        room.wait(lock, [&] { return stop || b < consumed + kMaxBlocksAhead; });
      }
      if (stop) break;
      Slot slot;
      try {
        const std::size_t first = b * kBlockItems;
        for (std::size_t i = first; i < std::min(count, first + kBlockItems); ++i)
          for (auto& r : compute(i)) slot.results.push_back(std::move(r));
      } catch (...) {
        slot.error = std::current_exception();
      }
      slot.done = true;
      std::lock_guard lock(m);
      slots[b % kMaxBlocksAhead] = std::move(slot);
      ready.notify_all();
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = blocks > 1 ? std::min<std::size_t>(cores, blocks) : 0;
  std::vector<std::jthread> pool;
  auto halt = [&] {
    {
      std::lock_guard lock(m);
      stop = true;
    }
    room.notify_all();
  };
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  if (threads == 0) work();
  try {
    for (std::size_t b = 0; b < blocks; ++b) {
      Slot slot;
      {
        std::unique_lock lock(m);
        Slot& waiting = slots[b % kMaxBlocksAhead];
        ready.wait(lock, [&] { return waiting.done; });
        slot = std::move(waiting);
        waiting = Slot{};
        consumed = b + 1;
      }
      room.notify_all();
      if (slot.error) std::rethrow_exception(slot.error);
      consume(std::move(slot.results), std::min(count, (b + 1) * kBlockItems));
    }
  } catch (...) {
    halt();
    throw;
  }
}

}  // namespace dpb::util
