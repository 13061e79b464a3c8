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

std::string group_digits(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The line must fit the terminal without cutting a number: the bar narrows first, then the
// "graphfuse: " prefix goes, then the label is shortened in its middle; counts and the clock stay.
void Progress::draw_locked() {
  if (stop_) return;
  double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (elapsed < delay_s_) return;
  char clock[32];
  std::snprintf(clock, sizeof clock, "  %.1f s", elapsed);
  const std::string counts = total_ > 0 ? " " + group_digits(done_) + "/" + group_digits(total_) : "";
  const std::size_t width = terminal_width() - 1;
  std::string prefix = "graphfuse: ", label = label_;
  int bar = total_ > 0 ? 24 : 0;
  auto length = [&] { return prefix.size() + label.size() + (bar ? bar + 3 : 0) + counts.size() + std::strlen(clock); };
  while (length() > width && bar > 8) --bar;
  if (length() > width) prefix.clear();
  if (length() > width) bar = 0;
  if (length() > width && label.size() > 5) {
    std::size_t keep = label.size() - std::min(label.size() - 5, length() - width + 3);
    label = label.substr(0, keep / 2) + "..." + label.substr(label.size() - (keep - keep / 2));
  }
  std::string line = prefix + label;
  if (bar) {
    auto filled = static_cast<int>(bar * static_cast<double>(std::min(done_, total_)) / static_cast<double>(total_));
    line += " [" + std::string(static_cast<std::size_t>(filled), '#') +
            std::string(static_cast<std::size_t>(bar - filled), '.') + "]";
  }
  line += counts;
  line += clock;
  if (line.size() > width) line.resize(width);  // a terminal narrower than the numbers themselves
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace graphfuse::cli
