#include "util/progress_line.hpp"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace dpb::util {
namespace {

/// The line appears only for work that has run this long (a quick run never
/// flickers one) and is redrawn at most this often.
constexpr auto kQuietStart = std::chrono::seconds(1);
constexpr auto kRedrawEvery = std::chrono::milliseconds(200);

}  // namespace

ProgressLine::ProgressLine(std::string what, std::size_t total)
    : what_(std::move(what)),
      total_(total),
      enabled_(::isatty(STDERR_FILENO) == 1),
      start_(Clock::now()) {}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::update(std::size_t done) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - start_ < kQuietStart || now - last_ < kRedrawEvery) return;
  last_ = now;
  shown_ = true;
  std::fprintf(stderr, "\rdpbudget: %s %zu/%zu", what_.c_str(), done, total_);
  std::fflush(stderr);
}

void ProgressLine::clear() {
  if (!shown_) return;
  shown_ = false;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace dpb::util
