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
/// unmap can cost the whole working set its mappings (every page of a warm array faulted
/// again), so the same rewrite can take twice as long from one run to the next. Kept, the memory is reused warm.
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

/// Turns huge pages on for the process: backs the next `bytes` of the C library's heap
/// with transparent huge pages (grows the heap by `bytes`, address space, nothing touched;
/// advises the kernel to use 2 MB pages there, madvise MADV_HUGEPAGE; gives the block back
/// to the heap, whose later allocations are carved from it), and from then on has the
/// graph advise the same for its big record arrays (node records, hot records, id index)
/// as a loader reserves them. Needs retain_freed_memory() first, or the heap would be
/// trimmed back at once; returns applied = false and does nothing without it, where the
/// kernel has no such advice, or where the block cannot be had. Under a limit on address
/// space or data (`ulimit -v`, `-d`) it reserves a quarter of the limit at most.
///
/// Without it, the process uses small pages throughout (the library never turns huge
/// pages on by itself). Whether they pay depends on what the memory behind a 2 MB page
/// costs: where it is at hand (bare metal; a VM run after run) a big graph's load and
/// rewrite fault once per 2 MB instead of 512 times. On a VM whose balloon hands free
/// memory back to the host, the host must back every huge page again, and a
/// run after idle is then slower with them than without. The cost besides:
/// memory is resident 2 MB at a time, so a process's peak grows by a few MB (6-24 MB for
/// the 10^6-node graphs, 2-9%). Process-wide and not undone; the `graphfuse` command and
/// the benchmarks call it after retain_freed_memory() when GRAPHFUSE_HUGE_PAGES asks for it
/// (huge_pages_from_environment()). With transparent huge pages set to "never" in
/// /sys/kernel/mm/transparent_hugepage/enabled the advice changes nothing.
MemoryRetention reserve_huge_page_heap(std::size_t bytes = kHugePageHeapBytes);

/// The environment variable the `graphfuse` command and the benchmarks read to decide
/// whether to call reserve_huge_page_heap().
inline constexpr const char* kHugePagesVariable = "GRAPHFUSE_HUGE_PAGES";

/// Whether GRAPHFUSE_HUGE_PAGES asks for huge pages: "1", "yes" or "on" for yes; unset,
/// empty, "0", "no" or "off" for no. Anything else throws graphfuse::Error naming the
/// variable, its value and the values it takes.
bool huge_pages_from_environment();

}  // namespace graphfuse
