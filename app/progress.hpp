#pragma once
// Progress of a run: a bar with rate and ETA redrawn in place on a terminal, periodic log
// lines otherwise (CI logs, files), so long runs never look hung.
#include <chrono>
#include <cstdio>
#include <string>

namespace adi3d::app {

class Progress {
 public:
  Progress(std::string label, long total, bool interactive);
  void update(long done, const std::string& detail = "");
  void finish();

  static bool stderr_is_terminal();

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  long total_;
  bool interactive_;
  Clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

std::string format_duration(double seconds);

}  // namespace adi3d::app
