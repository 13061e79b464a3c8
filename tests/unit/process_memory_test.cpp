// retain_freed_memory(): after it, a big block the program frees stays in the process for
// reuse (no mapping of its own, no trim), which is what keeps loads and rewrites from
// unmapping and faulting pages in again between phases. reserve_huge_page_heap(): the
// heap's next allocations lie in memory advised as huge pages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>
#include <sys/resource.h>
#include <memory>
#include <string>

#include "graphfuse/error.h"
#include "graphfuse/process_memory.h"
#include "memory/huge_pages.h"
#include "vm_flags.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GRAPHFUSE_OWN_ALLOCATOR 1  // a sanitizer's allocator replaces glibc's
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define GRAPHFUSE_OWN_ALLOCATOR 1
#endif
#endif

namespace {

#if defined(__GLIBC__) && !defined(GRAPHFUSE_OWN_ALLOCATOR)
constexpr std::size_t kBig = 64u << 20;  // far above glibc's 128 KB default for a mapped block

std::size_t mapped_bytes() { return mallinfo2().hblkhd; }
std::size_t free_in_heap() { return mallinfo2().fordblks; }

// Declared first: gtest runs a file's tests in order, and the ones after it retain.
TEST(ProcessMemory, NoHugePageHeapWithoutRetention) {
  graphfuse::MemoryRetention r = graphfuse::reserve_huge_page_heap(64u << 20);
  EXPECT_FALSE(r.applied) << "the reservation would have been trimmed away: " << r.detail;
  EXPECT_NE(r.detail.find("retain_freed_memory"), std::string::npos) << r.detail;
  EXPECT_FALSE(graphfuse::huge_pages_on()) << "a reservation that did not take turned huge pages on";
}

TEST(ProcessMemory, TheHeapsNextBlocksAreAdvisedHuge) {
  ASSERT_TRUE(graphfuse::retain_freed_memory().applied);
  graphfuse::MemoryRetention r = graphfuse::reserve_huge_page_heap(128u << 20);
  ASSERT_TRUE(r.applied) << r.detail;
  EXPECT_TRUE(graphfuse::huge_pages_on()) << "the graph's big arrays would stay in small pages";
  // What a loader allocates next comes out of the reservation: past its first (partial)
  // 2 MB page, the memory is in a mapping the kernel backs with huge pages. The block is
  // bigger than any free block the heap can hold from tests run before in this process
  // (glibc mapped blocks of 32 MB and more apart until retention), so it is carved from
  // the reservation, not from a free block elsewhere in the heap.
  std::unique_ptr<char[]> next(new char[48u << 20]);
  const std::string flags = graphfuse::testing::vm_flags_at(next.get() + (24u << 20));
  ASSERT_FALSE(flags.empty()) << "no mapping found in /proc/self/smaps";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << "not advised as huge pages: " << flags;
}

TEST(ProcessMemory, AnAddressSpaceLimitBoundsTheReservation) {
  ASSERT_TRUE(graphfuse::retain_freed_memory().applied);
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &saved), 0);
  // A limit 1 GiB above what the process maps now (the test binary maps its libraries):
  // the reservation takes a quarter of the limit, which fits in the GiB left.
  std::size_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const std::size_t limit = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) + (std::size_t{1} << 30);
  const std::size_t expected = std::min(graphfuse::kHugePageHeapBytes, limit / 4);
  struct rlimit tight = saved;
  tight.rlim_cur = std::min<rlim_t>(saved.rlim_max, static_cast<rlim_t>(limit));
  if (tight.rlim_cur != static_cast<rlim_t>(limit)) GTEST_SKIP() << "the hard limit is lower";
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &tight), 0);
  graphfuse::MemoryRetention r = graphfuse::reserve_huge_page_heap(graphfuse::kMaxHugePageHeapBytes);
  ::setrlimit(RLIMIT_AS, &saved);
  ASSERT_TRUE(r.applied) << r.detail;
  EXPECT_NE(r.detail.find("next " + std::to_string(expected >> 20) + " MB"), std::string::npos)
      << r.detail << " (expected " << (expected >> 20) << " MB)";
}

TEST(ProcessMemory, ABigFreedBlockStaysForReuse) {
  graphfuse::MemoryRetention r = graphfuse::retain_freed_memory();
  ASSERT_TRUE(r.applied) << r.detail;
  const std::size_t mapped_before = mapped_bytes();
  {
    std::unique_ptr<char[]> big(new char[kBig]);
    std::memset(big.get(), 1, kBig);
    // Without the setting glibc maps a block this big on its own and unmaps it when freed.
    EXPECT_EQ(mapped_bytes(), mapped_before) << "the 64 MB block got a mapping of its own";
  }
  // Freed, it is still the process's: free space in the heap, not trimmed away.
  EXPECT_GE(free_in_heap(), kBig) << "the heap gave the freed block back";
  // And the next block of that size is carved from it instead of growing the heap.
  const std::size_t heap_before = mallinfo2().arena;
  {
    std::unique_ptr<char[]> again(new char[kBig]);
    std::memset(again.get(), 2, kBig);
    EXPECT_EQ(mallinfo2().arena, heap_before) << "the heap grew for a block it already had free";
  }
}

TEST(ProcessMemory, CallingTwiceIsHarmless) {
  EXPECT_TRUE(graphfuse::retain_freed_memory().applied);
  graphfuse::MemoryRetention again = graphfuse::retain_freed_memory();
  EXPECT_TRUE(again.applied) << again.detail;
  EXPECT_NE(again.detail.find("M_MMAP_MAX=0"), std::string::npos) << again.detail;
}
#else
TEST(ProcessMemory, SaysWhyNothingWasSet) {
  graphfuse::MemoryRetention r = graphfuse::retain_freed_memory();
  if (!r.applied) {
    EXPECT_FALSE(r.detail.empty());
  }
  GTEST_SKIP() << "glibc's allocator is not the one in use here: " << r.detail;
}
#endif

// The command's switch: GRAPHFUSE_HUGE_PAGES. What it does not know is an error that names
// it, not a silent default.
TEST(ProcessMemory, TheEnvironmentSwitchTakesItsWordsAndNothingElse) {
  const char* saved = std::getenv(graphfuse::kHugePagesVariable);
  const std::string keep = saved ? saved : "";
  ::unsetenv(graphfuse::kHugePagesVariable);
  EXPECT_FALSE(graphfuse::huge_pages_from_environment());
  for (const char* yes : {"1", "yes", "on"}) {
    ::setenv(graphfuse::kHugePagesVariable, yes, 1);
    EXPECT_TRUE(graphfuse::huge_pages_from_environment()) << yes;
  }
  for (const char* no : {"", "0", "no", "off"}) {
    ::setenv(graphfuse::kHugePagesVariable, no, 1);
    EXPECT_FALSE(graphfuse::huge_pages_from_environment()) << no;
  }
  for (const char* bad : {"2", "YES", "true ", "huge"}) {
    ::setenv(graphfuse::kHugePagesVariable, bad, 1);
    try {
      graphfuse::huge_pages_from_environment();
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const graphfuse::Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("GRAPHFUSE_HUGE_PAGES='") + bad + "'"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("expected 1, yes or on"), std::string::npos) << e.what();
    }
  }
  if (saved) ::setenv(graphfuse::kHugePagesVariable, keep.c_str(), 1);
  else ::unsetenv(graphfuse::kHugePagesVariable);
}

}  // namespace
