// See int16_gemm.h. A 4 x 4 tile of outputs at a time: each vector of A's four rows and B's
// four columns is loaded once for 16 pairwise multiply-adds, and B (the weights, often
// megabytes) is streamed once per four rows of A instead of once per row.
#include "core/int16_gemm.h"
#include "fast/parallelism.h"

#include <immintrin.h>

namespace graphfuse::kernels {

namespace {

constexpr int kTile = 4;

// One output tile: rows [0, ri) of a (stride k) against rows [0, cj) of bt (stride k),
// written to out (row stride n). The scalar tail covers k beyond the last whole vector.
using Tile = void (*)(const std::int16_t* a, const std::int16_t* bt, std::int64_t k, std::int64_t n,
                      std::int32_t* out, int ri, int cj);

inline void tail(const std::int16_t* a, const std::int16_t* bt, std::int64_t from, std::int64_t k, std::int64_t n,
                 std::int32_t* out, int ri, int cj) {
  for (int r = 0; r < ri; ++r)
    for (int c = 0; c < cj; ++c) {
      std::int32_t t = 0;
      for (std::int64_t i = from; i < k; ++i) t += static_cast<std::int32_t>(a[r * k + i]) * bt[c * k + i];
      out[r * n + c] += t;
    }
}

__attribute__((target("avx512f,avx512bw"))) void tile_avx512(const std::int16_t* a, const std::int16_t* bt,
                                                               std::int64_t k, std::int64_t n, std::int32_t* out,
                                                               int ri, int cj) {
  __m512i s[kTile][kTile];
  for (auto& row : s)
    for (auto& v : row) v = _mm512_setzero_si512();
  std::int64_t i = 0;
  for (; i + 32 <= k; i += 32) {
    __m512i vb[kTile];
    for (int c = 0; c < cj; ++c) vb[c] = _mm512_loadu_si512(bt + c * k + i);
    for (int r = 0; r < ri; ++r) {
      const __m512i va = _mm512_loadu_si512(a + r * k + i);
      for (int c = 0; c < cj; ++c) s[r][c] = _mm512_add_epi32(s[r][c], _mm512_madd_epi16(va, vb[c]));
    }
  }
  // Lanes summed through memory: GCC 12's _mm512_reduce_add_epi32 warns (maybe-uninitialized).
  for (int r = 0; r < ri; ++r)
    for (int c = 0; c < cj; ++c) {
      alignas(64) std::int32_t lanes[16];
      _mm512_store_si512(lanes, s[r][c]);
      std::int32_t t = 0;
      for (std::int32_t v : lanes) t += v;
      out[r * n + c] = t;
    }
  tail(a, bt, i, k, n, out, ri, cj);
}

__attribute__((target("avx2"))) void tile_avx2(const std::int16_t* a, const std::int16_t* bt, std::int64_t k,
                                               std::int64_t n, std::int32_t* out, int ri, int cj) {
  __m256i s[kTile][kTile];
  for (auto& row : s)
    for (auto& v : row) v = _mm256_setzero_si256();
  std::int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    __m256i vb[kTile];
    for (int c = 0; c < cj; ++c) vb[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bt + c * k + i));
    for (int r = 0; r < ri; ++r) {
      const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + r * k + i));
      for (int c = 0; c < cj; ++c) s[r][c] = _mm256_add_epi32(s[r][c], _mm256_madd_epi16(va, vb[c]));
    }
  }
  for (int r = 0; r < ri; ++r)
    for (int c = 0; c < cj; ++c) {
      alignas(32) std::int32_t lanes[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s[r][c]);
      std::int32_t t = 0;
      for (std::int32_t v : lanes) t += v;
      out[r * n + c] = t;
    }
  tail(a, bt, i, k, n, out, ri, cj);
}

void tile_sse2(const std::int16_t* a, const std::int16_t* bt, std::int64_t k, std::int64_t n, std::int32_t* out,
               int ri, int cj) {
  __m128i s[kTile][kTile];
  for (auto& row : s)
    for (auto& v : row) v = _mm_setzero_si128();
  std::int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    __m128i vb[kTile];
    for (int c = 0; c < cj; ++c) vb[c] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bt + c * k + i));
    for (int r = 0; r < ri; ++r) {
      const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + r * k + i));
      for (int c = 0; c < cj; ++c) s[r][c] = _mm_add_epi32(s[r][c], _mm_madd_epi16(va, vb[c]));
    }
  }
  for (int r = 0; r < ri; ++r)
    for (int c = 0; c < cj; ++c) {
      alignas(16) std::int32_t lanes[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(lanes), s[r][c]);
      out[r * n + c] = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    }
  tail(a, bt, i, k, n, out, ri, cj);
}

Tile pick() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bw")) return tile_avx512;
  if (__builtin_cpu_supports("avx2")) return tile_avx2;
  return tile_sse2;
}

}  // namespace

void int16_gemm_nt(const std::int16_t* a, const std::int16_t* bt, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::int32_t* acc) {
  static const Tile tile = pick();
  const std::int64_t row_tiles = (m + kTile - 1) / kTile;
  fast::team_for(row_tiles, 1, [&](std::int64_t r_begin, std::int64_t r_end) {
    for (std::int64_t t = r_begin; t < r_end; ++t) {
      const std::int64_t i = t * kTile;
      const int ri = static_cast<int>(m - i < kTile ? m - i : kTile);
      for (std::int64_t j = 0; j < n; j += kTile) {
        const int cj = static_cast<int>(n - j < kTile ? n - j : kTile);
        tile(a + i * k, bt + j * k, k, n, acc + i * n + j, ri, cj);
      }
    }
  });
}

}  // namespace graphfuse::kernels
