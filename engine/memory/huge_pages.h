// Internal to the graph: transparent huge pages for the big arrays a loader fills whole
// (node records, hot records, the id index), when a program asked for huge pages.
//
// Why they are asked for, not taken: each 4 KB page a process touches for the first time
// costs a page fault, and a 2 MB page is one fault for 512 of them, so where the memory
// behind a huge page is cheap to get, huge pages save most of a load's faults. But a VM whose balloon hands free
// memory back to its host (free page reporting, in blocks of 2 MB and more) must back a
// huge page again before the guest can zero it, and a huge page needs just such a free
// block, which after idle costs several times the small pages it replaces; a one-shot
// command meets the idle case. So huge pages are off until
// reserve_huge_page_heap() (graphfuse/process_memory.h) turns them on, for the heap and
// these arrays together.
//
// Only whole 2 MB pages inside a range that will be filled are advised: a huge page half
// used would count 2 MB of resident memory, and the pages at a range's ends may hold other
// objects. Where the kernel has transparent huge pages off ("never"), the advice is a
// no-op; with "always" it changes nothing.
#pragma once

#include <cstddef>
#include <new>

namespace graphfuse {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
/// Arrays from this size on are aligned to a huge page (a smaller one wastes too much of
/// its first and last page to the alignment).
inline constexpr std::size_t kHugeArrayFrom = std::size_t{4} << 20;

/// Whether huge pages are on for this process: off unless set_huge_pages(true), which
/// reserve_huge_page_heap() calls. While off, allocate_array() aligns nothing to a huge
/// page and advise_huge_pages() advises nothing.
bool huge_pages_on();
void set_huge_pages(bool on);

/// Raw memory for an array of `bytes`, with the alignment to free it with
/// (`::operator delete(data, align)`).
struct ArrayMemory {
  void* data;
  std::align_val_t align;
};

/// Allocates an array of `bytes` aligned to `small` (at least the type's own), or, for a big
/// one, to a huge page and rounded up to whole huge pages, so that the allocator's
/// bookkeeping for the rest of its block (a header written just past the array's end) does
/// not land in a huge page the array only partly fills, making all 2 MB of it resident.
/// With huge pages off, aligned to `small` whatever its size. Advises nothing: see
/// advise_huge_pages().
inline ArrayMemory allocate_array(std::size_t bytes, std::align_val_t small) {
  if (bytes < kHugeArrayFrom || !huge_pages_on()) return {::operator new(bytes, small), small};
  const std::align_val_t huge{kHugePageBytes};
  return {::operator new((bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes, huge), huge};
}

/// Asks the kernel to back the whole 2 MB pages inside [p, p + bytes) with huge pages
/// (madvise MADV_HUGEPAGE); the partial pages at the ends are left as they are. Call it
/// before the range is first touched. Does nothing while huge pages are off. Failures are
/// ignored (the pages are then small).
void advise_huge_pages(void* p, std::size_t bytes);

}  // namespace graphfuse
