// retain_freed_memory(): glibc's mallopt settings that keep freed blocks in the heap.
#include <climits>

#include "graphfuse/process_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace graphfuse {

MemoryRetention retain_freed_memory() {
#if defined(__GLIBC__)
  // No separate mapping for big blocks: a freed one would be unmapped at once. Setting
  // either value also stops glibc from moving its mapping threshold on its own.
  const bool no_maps = mallopt(M_MMAP_MAX, 0) == 1;
  // Never give the top of the heap back (the threshold is an int; INT_MAX is 2 GiB).
  const bool no_trim = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  if (no_maps && no_trim) return {true, "glibc: M_MMAP_MAX=0, M_TRIM_THRESHOLD=INT_MAX"};
  return {false, std::string("glibc refused ") + (no_maps ? "" : "M_MMAP_MAX ") + (no_trim ? "" : "M_TRIM_THRESHOLD") +
                     " (an allocator replacing glibc's, such as a sanitizer's, may not take mallopt)"};
#else
  return {false, "not glibc: the C library's allocator is left as it is"};
#endif
}

}  // namespace graphfuse
