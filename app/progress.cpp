#include "app/progress.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

namespace adi3d::app {

std::string format_duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  const long s = static_cast<long>(seconds + 0.5);
  if (s < 3600) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
}

bool Progress::stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

Progress::Progress(std::string label, long total, bool interactive)
    : label_(std::move(label)), total_(std::max(1L, total)), interactive_(interactive),
      start_(Clock::now()), last_draw_(start_) {}

void Progress::update(long done, const std::string& detail) {
  const auto now = Clock::now();
  const double since_draw = std::chrono::duration<double>(now - last_draw_).count();
  // Redraw a terminal bar 10 times a second; log a line every 10 seconds otherwise.
  if (done < total_ && since_draw < (interactive_ ? 0.1 : 10.0)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  const double eta = done > 0 ? elapsed * (1.0 - fraction) / fraction : 0.0;
  if (interactive_) {
    constexpr int width = 30;
    const int filled = static_cast<int>(fraction * width);
    std::fprintf(stderr, "\r%s [%s%s] %3d%% %ld/%ld  %s elapsed, ETA %s %s\x1b[K", label_.c_str(),
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                 static_cast<int>(fraction * 100), done, total_, format_duration(elapsed).c_str(),
                 format_duration(eta).c_str(), detail.c_str());
    std::fflush(stderr);
    drawn_ = true;
  } else {
    spdlog::info("{} {}/{} ({:.0f}%), {} elapsed, ETA {} {}", label_, done, total_, fraction * 100,
                 format_duration(elapsed), format_duration(eta), detail);
  }
}

void Progress::finish() {
  if (interactive_ && drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace adi3d::app
