// How the process's allocator treats memory graphfuse frees: a choice for the program, not
// the library, so the library never makes it on its own.
#pragma once

#include <string>

namespace graphfuse {

/// What retain_freed_memory() changed.
struct MemoryRetention {
  bool applied = false;  ///< false where the C library offers no such setting (not glibc)
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
/// unmap can cost the whole working set its mappings (every page of a 128 MB graph faulted
/// again, 100-160 ms measured), which is what made single rewrites of the same graph take
/// 120 ms one run and 300 ms the next. Kept, the memory is reused warm.
///
/// The cost: the process's resident size does not shrink when a graph is destroyed, so a
/// long-lived program that loads one huge graph and then stays small should not call it.
/// The peak is the same (freed blocks are reused before the heap grows). The `graphfuse`
/// command and the benchmarks call it first thing; the library never does. Process-wide
/// and not undone; calling it twice is harmless.
MemoryRetention retain_freed_memory();

}  // namespace graphfuse
