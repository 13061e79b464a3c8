// Allocation for the graph's big arrays, on transparent huge pages where the kernel allows.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace graphfuse {

/// The graph's id index and node chunks are read at random (hash probes, pattern walks).
/// With 4 KiB pages nearly every such read of a big graph also misses the TLB, which
/// under virtualisation costs more than the cache miss; 2 MiB pages cover the arrays
/// with a few hundred TLB entries. Small arrays stay on the ordinary heap.
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

inline void* big_alloc(std::size_t bytes) {
  if (bytes < 2 * kHugePage) return ::operator new(bytes);
  std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
  ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves ordinary pages
  return p;
}

/// Frees what big_alloc(bytes) returned; `bytes` must be the same.
inline void big_free(void* p, std::size_t bytes) {
  if (!p) return;
  if (bytes < 2 * kHugePage) ::operator delete(p);
  else std::free(p);
}

}  // namespace graphfuse
