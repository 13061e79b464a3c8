// A one-line progress display on stderr, shown only on a terminal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace graphfuse::cli {

/// Shows what a long command is doing (loading, match rounds, saving) as one line on
/// stderr that redraws in place. Off when `quiet`, when stderr is not a terminal, when
/// TERM is "dumb" and when CI is set, so pipes and CI logs never see it. Nothing is
/// drawn during the first quarter second (GRAPHFUSE_PROGRESS_DELAY_MS overrides it, for
/// tests), so quick runs do not flicker. A ticker thread redraws the elapsed time while
/// a blocking step (a load, a save) runs.
/// 1999992 -> "1,999,992": progress lines are read at a glance.
std::string group_digits(std::size_t n);

class Progress {
 public:
  explicit Progress(bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  /// A step without a known size: "loading model.onnx".
  void phase(std::string_view label);
  /// A step with a known size: a bar of done / total.
  void bar(std::string_view label, std::size_t done, std::size_t total);
  /// Erases the line and stops drawing (call before printing results).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  void draw_locked();
  void tick();

  bool enabled_ = false;
  Clock::time_point start_;
  double delay_s_ = 0.25;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string label_;
  std::size_t done_ = 0, total_ = 0;
  bool drawn_ = false, stop_ = false;
  std::thread ticker_;
};

}  // namespace graphfuse::cli
