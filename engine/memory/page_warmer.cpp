#include "memory/page_warmer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <tbb/info.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace graphfuse {

namespace {

// Steps small enough to stop soon after the loader fails, large enough that the calls
// cost nothing next to the faults.
constexpr std::size_t kStep = std::size_t{1} << 20;

/// Reads a byte of each page that [from, to) touches, each inside [from, to): the pages at
/// the ends hold other objects, which are not ours to read. Populated pages are mapped in
/// the kernel's tables, but on some virtual machines the first access from user space still stops for the hypervisor; a
/// read is enough to take that stop here rather than in the loader. The loads are atomic
/// and their values unused: the loader may be writing the same bytes.
void touch(std::uintptr_t from, std::uintptr_t to, std::uintptr_t page) {
  unsigned char sink = 0;
  for (std::uintptr_t p = from; p < to; p = (p & ~(page - 1)) + page)
    sink |= __atomic_load_n(reinterpret_cast<const unsigned char*>(p), __ATOMIC_RELAXED);
  asm volatile("" : : "r"(sink));
}

}  // namespace

PageWarmer::PageWarmer(std::vector<std::span<std::byte>> spans, std::size_t elements) : elements_(elements) {
  for (const auto& s : spans) bytes_ += s.size();
  if (bytes_ < kMinBytes || elements_ == 0 || tbb::info::default_concurrency() < 2) return;
  thread_ = std::thread([this, spans = std::move(spans)]() mutable { run(std::move(spans)); });
}

PageWarmer::~PageWarmer() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

bool PageWarmer::too_far_ahead(std::size_t done) {
  // The records are spread evenly enough over the spans (each chunk of node records comes
  // with its chunk of hot records) for the loader's share of the bytes to follow its share
  // of the records.
  const auto filled = static_cast<double>(filled_.load(std::memory_order_relaxed));
  const auto allowed = static_cast<double>(bytes_) * filled / static_cast<double>(elements_) + kAhead;
  if (static_cast<double>(done) < allowed) return false;
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return true;
}

void PageWarmer::run(std::vector<std::span<std::byte>> spans) {
#ifdef MADV_POPULATE_WRITE
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::size_t done = 0;
  for (const auto& s : spans) {
    // madvise takes whole pages; the partial pages at the ends hold other live data, which
    // populating leaves as it is.
    const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(s.data());
    std::uintptr_t at = begin & ~(page - 1);
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(s.data() + s.size());
    while (at < end) {
      if (stop_.load(std::memory_order_relaxed)) return;
      if (too_far_ahead(done)) continue;
      const std::uintptr_t len = std::min<std::uintptr_t>(kStep, end - at);
      // Any failure (an older kernel: EINVAL; no memory: ENOMEM) ends the warming; the
      // loader's own faults then do the work, or report what is wrong.
      if (::madvise(reinterpret_cast<void*>(at), len, MADV_POPULATE_WRITE) != 0) return;
      touch(std::max(at, begin), std::min(at + len, end), page);
      at += len;
      done += len;
    }
  }
#else
  (void)spans;
#endif
}

}  // namespace graphfuse
