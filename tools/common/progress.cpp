#include "tools/common/progress.h"

#include <unistd.h>

#include <cstdio>

namespace ork::tools {

namespace {
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)), total_(total > 0 ? total : 1),
      active_(enabled && stderr_is_terminal()) {}

Progress::~Progress() { finish(); }

void Progress::update(int64_t done) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < kRedrawInterval) return;
  last_ = now;
  drawn_ = true;
  const double pct = 100.0 * static_cast<double>(done) / static_cast<double>(total_);
  std::fprintf(stderr, "\r%s: %5.1f%% (%lld/%lld)", label_.c_str(), pct,
               static_cast<long long>(done), static_cast<long long>(total_));
  std::fflush(stderr);
}

void Progress::finish() {
  if (!active_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");  // carriage return + erase line
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace ork::tools
