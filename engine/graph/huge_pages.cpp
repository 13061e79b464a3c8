// advise_huge_pages(): madvise(MADV_HUGEPAGE) over the whole 2 MB pages of a range.
#include "graph/huge_pages.h"

#include <cstdint>

#include <sys/mman.h>

namespace graphfuse {

void advise_huge_pages(void* p, std::size_t bytes) {
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
