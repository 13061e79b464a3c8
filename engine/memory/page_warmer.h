// Internal to the graph: faulting in memory a loader is about to fill, on a second thread.
//
// Why: a loader writes each node record into fresh memory, and the first write to each
// 4 KB page stops the loading thread for a page fault (a 10^6-node JSON load took 62,000
// of them, about a quarter of its time). The records' chunks are reserved before the
// first node is read, so another thread can ask the kernel to map them
// (MADV_POPULATE_WRITE) while the reader parses: the loader then finds its pages mapped.
// Populating changes no byte, so it may run under the loader's writes. It is kernel work
// the loader would have done anyway; it only moves to the other CPU.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>
#include <thread>
#include <vector>

namespace graphfuse {

class PageWarmer {
 public:
  /// Populates `spans`, in order, on a thread of its own; does nothing on one CPU, for
  /// less than kMinBytes in all, or where the kernel does not know MADV_POPULATE_WRITE
  /// (before Linux 5.14): the loader then faults its pages in itself, as before. The
  /// spans hold `elements` records, filled in order; the warmer keeps at most kAhead
  /// bytes ahead of what filled() last reported.
  PageWarmer(std::vector<std::span<std::byte>> spans, std::size_t elements);
  /// Stops the thread (at the next step) and waits for it: the spans must stay mapped
  /// until then.
  ~PageWarmer();
  PageWarmer(const PageWarmer&) = delete;
  PageWarmer& operator=(const PageWarmer&) = delete;

  /// The loader has filled the first `n` records.
  void filled(std::size_t n) { filled_.store(n, std::memory_order_relaxed); }
  /// For loaders that count every record: passes `n` on to filled() every
  /// kReportEvery records, which is often enough for the pacing and keeps the shared
  /// counter's cache line off the loader's path.
  void progress(std::size_t n) {
    if (n % kReportEvery == 0) filled(n);
  }
  static constexpr std::size_t kReportEvery = 4096;

  /// Below this a thread costs more than the faults it saves (~1,000 pages).
  static constexpr std::size_t kMinBytes = std::size_t{4} << 20;
  /// How far the warmer may run ahead of the loader. A file whose node count promises
  /// more than it holds (a truncated or hostile .gfb, a JSON array of empty objects) then
  /// costs at most this much memory beyond what the loader really filled.
  static constexpr std::size_t kAhead = std::size_t{32} << 20;

 private:
  void run(std::vector<std::span<std::byte>> spans);
  /// Whether `done` bytes are already kAhead past the loader (waits a little when so).
  bool too_far_ahead(std::size_t done);
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> filled_{0};
  std::size_t elements_ = 0;
  std::size_t bytes_ = 0;
  std::thread thread_;
};

}  // namespace graphfuse
