// Measures this machine's float32 FMA peak per core, to judge kernels against it honestly.
#include <immintrin.h>

#include <chrono>
#include <fstream>
#include <string>

namespace bench {

// 12 independent FMA chains hide the 4-cycle latency on both FMA ports; the values stay
// bounded (x*1 + 0) so no denormals or infinities slow the loop down.
__attribute__((target("avx512f"))) double fma_peak_gflops(double seconds) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
  long iters = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int k = 0; k < 100000; ++k)
      for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], one, zero);
    iters += 100000;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  // Stored and summed by hand: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized.
  alignas(64) float lanes[16];
  float sink = 0;
  for (int i = 0; i < 12; ++i) {
    _mm512_store_ps(lanes, acc[i]);
    for (float v : lanes) sink += v;
  }
  volatile float keep = sink;
  (void)keep;
  return static_cast<double>(iters) * 12 * 16 * 2 / elapsed / 1e9;
}

// The nominal clock from /proc/cpuinfo (MHz), 0 when unknown.
double cpu_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("cpu MHz", 0) == 0) return std::stod(line.substr(line.find(':') + 1));
  return 0;
}

}  // namespace bench
