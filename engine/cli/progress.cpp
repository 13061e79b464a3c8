// Progress line on stderr: terminal detection, a bar, elapsed time, a redraw ticker.
#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace graphfuse::cli {

namespace {
std::size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}
}  // namespace

Progress::Progress(bool quiet) : start_(Clock::now()) {
  const char* term = std::getenv("TERM");
  enabled_ = !quiet && isatty(STDERR_FILENO) && std::getenv("CI") == nullptr &&
             !(term != nullptr && std::strcmp(term, "dumb") == 0);
  if (const char* d = std::getenv("GRAPHFUSE_PROGRESS_DELAY_MS")) delay_s_ = std::atof(d) / 1000.0;
  if (enabled_) ticker_ = std::thread([this] { tick(); });
}

Progress::~Progress() { finish(); }

void Progress::phase(std::string_view label) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  label_ = label;
  total_ = done_ = 0;
  draw_locked();
}

void Progress::bar(std::string_view label, std::size_t done, std::size_t total) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  label_ = label;
  done_ = done;
  total_ = total;
  draw_locked();
}

void Progress::finish() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
    if (drawn_) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

// Redraws every 100 ms so that a blocking step still shows its clock running.
void Progress::tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (!stop_) draw_locked();
  }
}

void Progress::draw_locked() {
  if (stop_) return;
  double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (elapsed < delay_s_) return;
  std::string line = "graphfuse: " + label_;
  if (total_ > 0) {
    constexpr int kBar = 24;
    auto filled = static_cast<int>(kBar * static_cast<double>(std::min(done_, total_)) / static_cast<double>(total_));
    line += " [" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(kBar - filled), '.') +
            "] " + std::to_string(done_) + "/" + std::to_string(total_);
  }
  char clock[32];
  std::snprintf(clock, sizeof clock, "  %.1f s", elapsed);
  line += clock;
  std::size_t width = terminal_width() - 1;
  if (line.size() > width) line.resize(width);
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace graphfuse::cli
