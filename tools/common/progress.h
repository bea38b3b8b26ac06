// Progress on stderr for long tool runs: shown only when stderr is a terminal (scripts and
// logs get no carriage-return noise) and redrawn at most every 100 ms.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ork::tools {

class Progress {
 public:
  // `enabled` = the caller wants progress (e.g. the shape is big); it is shown only when
  // stderr is also a terminal.
  Progress(std::string label, int64_t total, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(int64_t done);  // cheap when nothing needs drawing
  void finish();              // clears the line
  bool active() const { return active_; }

 private:
  std::string label_;
  int64_t total_;
  bool active_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// True when stderr is a terminal.
bool stderr_is_terminal();

}  // namespace ork::tools
