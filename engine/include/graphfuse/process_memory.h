// How the process's allocator treats memory graphfuse frees: a choice for the program, not
// the library, so the library never makes it on its own.
#pragma once

#include <cstddef>
#include <string>

namespace graphfuse {

/// What retain_freed_memory() or reserve_huge_page_heap() changed.
struct MemoryRetention {
  bool applied = false;  ///< false where the setting is not to be had (see each function)
  std::string detail;    ///< what was set, or why nothing was
};

/// Asks the C library's allocator (glibc) to keep every block the program frees for its
/// later allocations instead of handing it back to the kernel: no block gets a mapping of
/// its own (M_MMAP_MAX 0) and the heap is never trimmed (M_TRIM_THRESHOLD at its maximum).
///
/// Why: loading, rewriting and saving a big graph allocates and frees buffers of tens of
/// megabytes between phases. Handed back, each one is a `munmap`, which flushes the TLBs of
/// every CPU running the process, and the next buffer comes as fresh pages, each faulted in
/// again. On virtual machines whose hypervisor shadows the guest's page tables, one such
/// unmap can cost the whole working set its mappings (every page of a warm 128 MB array
/// faulted again: 105-164 ms measured, in 3 of 6 tries), one reason why single rewrites of
/// the same graph took 120 ms one run and 300 ms the next. Kept, the memory is reused warm.
///
/// The cost: the process's resident size does not shrink when a graph is destroyed, so a
/// long-lived program that loads one huge graph and then stays small should not call it.
/// The peak is the same (freed blocks are reused before the heap grows). The `graphfuse`
/// command and the benchmarks call it first thing; the library never does. Process-wide
/// and not undone; calling it twice is harmless.
MemoryRetention retain_freed_memory();

/// The heap reservation reserve_huge_page_heap() makes unless told otherwise: address space
/// only, resident as it is used.
inline constexpr std::size_t kHugePageHeapBytes = std::size_t{1} << 30;
/// The most reserve_huge_page_heap() reserves (a bigger block, freed, would be trimmed).
inline constexpr std::size_t kMaxHugePageHeapBytes = std::size_t{3} << 29;

/// Backs the next `bytes` of the C library's heap with transparent huge pages: grows the
/// heap by `bytes` (address space, nothing touched), advises the kernel to use 2 MB pages
/// there (madvise MADV_HUGEPAGE) and gives the block back to the heap, whose later
/// allocations are carved from it. Needs retain_freed_memory() first, or the heap would be
/// trimmed back at once; returns applied = false and does nothing without it, where the
/// kernel has no such advice, or where the block cannot be had. Under a limit on address
/// space or data (`ulimit -v`, `-d`) it reserves a quarter of the limit at most.
///
/// Why: a loaded graph is a million small blocks (input lists, use lists) besides its big
/// arrays, and each 4 KB page of them is a page fault when first touched; on a VM whose
/// hypervisor shadows the guest's page tables, a dear one. With 2 MB pages the 10^6-node
/// .gfb loads took 127-131 ms instead of 240-302 and the wide graph's rewrite at 2 threads
/// 228 ms instead of 304 (medians; docs/performance.md). The cost: memory is resident 2 MB
/// at a time, so a process's peak grows by a few MB (6-17 MB for those graphs, 2-7%).
/// Process-wide and not undone; the `graphfuse` command and the benchmarks call it after
/// retain_freed_memory(); the library never does. With transparent huge pages set to
/// "never" in /sys/kernel/mm/transparent_hugepage/enabled the advice changes nothing.
MemoryRetention reserve_huge_page_heap(std::size_t bytes = kHugePageHeapBytes);

}  // namespace graphfuse
