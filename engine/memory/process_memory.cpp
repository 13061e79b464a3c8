// retain_freed_memory(): glibc's mallopt settings that keep freed blocks in the heap;
// reserve_huge_page_heap(): huge pages on, the heap's next stretch advised as huge pages;
// huge_pages_from_environment(): the command's switch for it.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <string_view>

#include "graphfuse/error.h"
#include "graphfuse/process_memory.h"
#include "memory/huge_pages.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#include <sys/resource.h>
#endif

namespace graphfuse {
namespace {
std::atomic<bool> retained{false};  // retain_freed_memory() took
}  // namespace

MemoryRetention retain_freed_memory() {
#if defined(__GLIBC__)
  // No separate mapping for big blocks: a freed one would be unmapped at once. Setting
  // either value also stops glibc from moving its mapping threshold on its own.
  const bool no_maps = mallopt(M_MMAP_MAX, 0) == 1;
  // Never give the top of the heap back (the threshold is an int; INT_MAX is 2 GiB).
  const bool no_trim = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  if (no_maps && no_trim) {
    retained = true;
    return {true, "glibc: M_MMAP_MAX=0, M_TRIM_THRESHOLD=INT_MAX"};
  }
  return {false, std::string("glibc refused ") + (no_maps ? "" : "M_MMAP_MAX ") + (no_trim ? "" : "M_TRIM_THRESHOLD") +
                     " (an allocator replacing glibc's, such as a sanitizer's, may not take mallopt)"};
#else
  return {false, "not glibc: the C library's allocator is left as it is"};
#endif
}

MemoryRetention reserve_huge_page_heap(std::size_t bytes) {
  if (!retained) return {false, "retain_freed_memory() has not taken: the reservation would be trimmed away"};
  // Freed, the block must stay under the trim threshold (INT_MAX) with what is free beside it.
  bytes = std::min(bytes, kMaxHugePageHeapBytes);
  // Under a limit on address space or data (ulimit -v, -d) the reservation counts against
  // it: take a quarter at most, so that what the program maps besides still fits.
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit limit {};
    if (::getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      bytes = std::min<std::size_t>(bytes, static_cast<std::size_t>(limit.rlim_cur / 4));
  }
  if (bytes < 2 * kHugePageBytes)
    return {false, "under two huge pages to reserve (what was asked, or what an address-space or data limit leaves)"};
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  // With no separate mappings, a block this big grows the heap's top; freed, it joins the
  // top chunk again (never trimmed now), so the heap's next allocations come from it.
  void* block = std::malloc(bytes);
  if (!block) return {false, "the heap could not grow by " + std::to_string(bytes >> 20) + " MB"};
  set_huge_pages(true);  // for the block, and from now on for the graph's big arrays
  advise_huge_pages(block, bytes);
  std::free(block);
  return {true, "the heap's next " + std::to_string(bytes >> 20) +
                    " MB and the graph's big arrays advised as huge pages (MADV_HUGEPAGE)"};
#else
  return {false, "no transparent huge pages here (not glibc on Linux)"};
#endif
}

bool huge_pages_from_environment() {
  const char* raw = std::getenv(kHugePagesVariable);
  const std::string_view v = raw ? raw : "";
  if (v.empty() || v == "0" || v == "no" || v == "off") return false;
  if (v == "1" || v == "yes" || v == "on") return true;
  throw Error(std::string(kHugePagesVariable) + "='" + std::string(v) +
              "': expected 1, yes or on (huge pages) or 0, no, off or nothing (small pages)");
}

}  // namespace graphfuse
