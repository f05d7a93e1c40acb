#pragma once
// A progress line on stderr for long computations: shown only when stderr is
// a terminal and only once the work has run for a second, redrawn at most
// five times a second, and erased before anything else is written.
#include <chrono>
#include <cstddef>
#include <string>

namespace dpb::util {

class ProgressLine {
 public:
  /// `what` names the work ("sweep"); `total` is the count it reaches.
  ProgressLine(std::string what, std::size_t total);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// "\rdpbudget: WHAT DONE/TOTAL", when due.
  void update(std::size_t done);
  /// Erases the line, so that what is written next starts on a line of its
  /// own (it comes back at the next update).
  void clear();

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  std::size_t total_;
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_, last_{};
};

}  // namespace dpb::util
