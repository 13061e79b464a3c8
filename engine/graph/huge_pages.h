// Internal to the graph: transparent huge pages for the big arrays a loader fills whole
// (node records, hot records, the id index).
//
// Why: each 4 KB page a process touches for the first time costs a page fault, and on a
// virtual machine whose hypervisor shadows the guest's page tables a second, dearer one
// (5-16 us a page measured on a 2-vCPU VM: 128 MB took 165-240 ms to populate and read).
// A 2 MB page is one fault for 512 of those. On that VM, 128 MB advised as huge pages took
// 7-10 ms when the guest had the memory backed already (a run shortly after another) and
// 184-211 ms when the host had to back it again (after 5 s idle; its balloon hands free
// 2 MB blocks back to the host), against 186-277 ms for small pages either way.
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
/// Advises nothing: see advise_huge_pages().
inline ArrayMemory allocate_array(std::size_t bytes, std::align_val_t small) {
  if (bytes < kHugeArrayFrom) return {::operator new(bytes, small), small};
  const std::align_val_t huge{kHugePageBytes};
  return {::operator new((bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes, huge), huge};
}

/// Asks the kernel to back the whole 2 MB pages inside [p, p + bytes) with huge pages
/// (madvise MADV_HUGEPAGE); the partial pages at the ends are left as they are. Call it
/// before the range is first touched. Failures are ignored (the pages are then small).
void advise_huge_pages(void* p, std::size_t bytes);

}  // namespace graphfuse
