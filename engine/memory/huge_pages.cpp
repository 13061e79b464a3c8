// advise_huge_pages(): madvise(MADV_HUGEPAGE) over the whole 2 MB pages of a range, when
// the process has huge pages on.
#include "memory/huge_pages.h"

#include <atomic>
#include <cstdint>

#include <sys/mman.h>

namespace graphfuse {

namespace {
std::atomic<bool> huge_pages{false};
}  // namespace

bool huge_pages_on() { return huge_pages.load(std::memory_order_relaxed); }
void set_huge_pages(bool on) { huge_pages.store(on, std::memory_order_relaxed); }

void advise_huge_pages(void* p, std::size_t bytes) {
  if (!huge_pages_on()) return;
#ifdef MADV_HUGEPAGE
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHugePageBytes - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace graphfuse
