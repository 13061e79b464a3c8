// fast::team_for: the executor's own loops on oneDNN's OpenMP team.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "core/openmp.h"
#include "fast/parallelism.h"
#include "graphfuse/kernels/executor.h"

namespace gk = graphfuse::kernels;

namespace {

// Every index in [0, n) is visited exactly once, whatever n and grain, on 1 and 2 threads;
// no chunk is smaller than the grain unless the whole range is.
TEST(TeamFor, CoversTheRangeOnceInChunksOfAtLeastTheGrain) {
  for (int threads : {1, 2}) {
    gk::ThreadScope scope(threads);
    for (std::int64_t n : {0, 1, 7, 100, 16384, 100003})
      for (std::int64_t grain : {1, 10, 16384}) {
        std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
        std::atomic<int> chunks{0};
        std::atomic<bool> small{false};
        gk::fast::team_for(n, grain, [&](std::int64_t begin, std::int64_t end) {
          chunks.fetch_add(1);
          if (end - begin < grain && end - begin < n) small = true;
          for (std::int64_t i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)].fetch_add(1);
        });
        for (std::int64_t i = 0; i < n; ++i)
          ASSERT_EQ(seen[static_cast<std::size_t>(i)].load(), 1) << "n " << n << " grain " << grain << " index " << i;
        EXPECT_FALSE(small) << "n " << n << " grain " << grain;
        EXPECT_LE(chunks.load(), threads) << "n " << n << " grain " << grain;
        if (threads == 2 && n >= 2 * grain) {
          EXPECT_EQ(chunks.load(), 2) << "n " << n << " grain " << grain;
        }
      }
  }
}

// Called inside another parallel region (a caller's own OpenMP code), the nested team has
// one thread: it must still run every chunk rather than only the first.
TEST(TeamFor, InsideAnotherParallelRegionStillCoversTheRange) {
  gk::ThreadScope scope(2);
  struct Outer {
    std::atomic<int> seen[2][1000] = {};
  } outer;
  const bool ran = gk::openmp::run_team(2, [](void* data) {
    auto* o = static_cast<Outer*>(data);
    const int me = gk::openmp::thread_num();
    gk::fast::team_for(1000, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) o->seen[me][i].fetch_add(1);
    });
  }, &outer);
  ASSERT_TRUE(ran) << "no OpenMP runtime loaded";
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(outer.seen[t][i].load(), 1) << "outer thread " << t << " index " << i;
}

// A throw inside a chunk reaches the caller (a kernel's error message must not be lost or
// end the process inside the parallel region).
TEST(TeamFor, RethrowsWhatAChunkThrows) {
  gk::ThreadScope scope(2);
  EXPECT_THROW(gk::fast::team_for(1000, 1,
                                  [](std::int64_t begin, std::int64_t) {
                                    if (begin > 0) throw std::runtime_error("second chunk");
                                  }),
               std::runtime_error);
}

}  // namespace
