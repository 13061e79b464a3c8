// What a second thread can give on this machine, apart from graphfuse: the speed-up
// 1 -> 2 threads of three loops with no sharing between the threads, each thread on
// its own half of a 256 MB array.
//
// Why: the parallel apply phase's 1 -> 2 thread speed-up (docs/performance.md) is bound
// by more than its own code. Applying a rewrite is a string of random read-modify-writes
// of node records, mostly independent of each other, so the out-of-order core keeps many
// cache misses in flight at once. Where both CPUs of a (virtual) machine share the memory
// system, such loops stop scaling before 2x even though each thread has its own data. This program shows the
// ceiling that sets, next to a pure compute loop and a loop of one miss at a time.
//
//   thread_ceiling_bench [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::uint64_t lcg(std::uint64_t x) { return x * 6364136223846793005ull + 1442695040888963407ull; }

constexpr std::size_t kWords = std::size_t{64} << 20;  // 64 Mi x 4 bytes = 256 MB

// One thread's work on words [lo, hi); the result keeps the compiler from dropping it.
using Kernel = std::function<std::uint64_t(std::vector<std::uint32_t>&, std::size_t lo, std::size_t hi, std::uint64_t seed)>;

std::uint64_t compute(std::vector<std::uint32_t>&, std::size_t, std::size_t, std::uint64_t seed) {
  std::uint64_t x = seed;
  for (int i = 0; i < 200'000'000; ++i) x = lcg(x);
  return x;
}

// Dependent loads: the next index is the word just read (a random cycle per half), one
// miss in flight at a time.
std::uint64_t chase(std::vector<std::uint32_t>& a, std::size_t lo, std::size_t, std::uint64_t seed) {
  std::uint32_t p = static_cast<std::uint32_t>(lo + seed % 1024);
  for (int i = 0; i < 4'000'000; ++i) p = a[p];
  return p;
}

// Independent random read-modify-writes: the out-of-order core keeps many misses in flight,
// as the apply phase's rewrites do.
std::uint64_t update(std::vector<std::uint32_t>& a, std::size_t lo, std::size_t hi, std::uint64_t seed) {
  std::uint64_t x = seed;
  const std::size_t n = hi - lo;
  for (std::uint32_t i = 0; i < 20'000'000; ++i) {
    x = lcg(x);
    a[lo + (x >> 33) % n] += i;
  }
  return x;
}

double run(const Kernel& k, std::vector<std::uint32_t>& a, int threads) {
  std::vector<std::thread> ts;
  std::vector<std::uint64_t> sink(static_cast<std::size_t>(threads));
  auto t0 = Clock::now();
  for (int t = 0; t < threads; ++t) {
    std::size_t lo = kWords / 2 * static_cast<std::size_t>(t), hi = lo + kWords / 2;
    ts.emplace_back([&, t, lo, hi] { sink[static_cast<std::size_t>(t)] = k(a, lo, hi, 17 + static_cast<std::uint64_t>(t)); });
  }
  for (auto& t : ts) t.join();
  double ms = ms_since(t0);
  if (std::accumulate(sink.begin(), sink.end(), std::uint64_t{0}) == 42) std::puts("");
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: thread_ceiling_bench [--reps N]\n");
      return 2;
    }
  }
  // Each half is one random cycle, so a chase stays in its own half.
  std::vector<std::uint32_t> a(kWords);
  std::uint64_t x = 1;
  for (std::size_t half = 0; half < 2; ++half) {
    std::size_t lo = half * kWords / 2, n = kWords / 2;
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), static_cast<std::uint32_t>(lo));
    for (std::size_t i = n - 1; i > 0; --i) {
      x = lcg(x);
      std::swap(order[i], order[(x >> 33) % (i + 1)]);
    }
    for (std::size_t i = 0; i < n; ++i) a[order[i]] = order[(i + 1) % n];
  }
  std::printf("thread_ceiling_bench: speed-up of 2 threads doing twice the work of 1, median of %d\n", reps);
  struct Case {
    const char* name;
    Kernel k;
  } cases[] = {{"compute (registers only)", compute},
               {"chase (one miss in flight)", chase},
               {"update (random read-modify-writes, many misses in flight)", update}};
  for (const Case& c : cases) {
    std::vector<double> one, two;
    for (int r = 0; r < reps; ++r) {
      one.push_back(run(c.k, a, 1));
      two.push_back(run(c.k, a, 2));
    }
    double t1 = median(one), t2 = median(two);
    std::printf("RESULT kernel=\"%s\" one_thread_ms=%.1f two_threads_ms=%.1f speedup=%.2f\n", c.name, t1, t2, 2 * t1 / t2);
  }
}
