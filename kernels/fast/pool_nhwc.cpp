// MaxPool and AveragePool over channels-last float32, vectorized along the channels.
//
// oneDNN 2.6's jit pooling took 0.85-1.0 ms for the 3x3/2 max pools after resnet18's and
// squeezenet's stems (64 channels, 112x112 in) on one AVX2 core, where ONNX Runtime takes
// 0.2-0.4 ms; its average pools were 2-3x ONNX Runtime's too (densenet121's transitions).
// Here each output pixel reduces the window's input pixels, every one a contiguous run of C
// floats: whole vectors, no gathers, no layout change.
#include "fast/pool_nhwc.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "core/window.h"
#include "fast/parallelism.h"
#include "fast/vmath.h"

namespace graphfuse::kernels::fast {

namespace {

#define GF_INLINE [[gnu::always_inline]] inline

template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(W * 4)));
};

// One output pixel's c channels. `taps` are the window's input pixels inside the image (for
// max, after the -inf row), each c floats.
template <class F>
GF_INLINE void max_pixel(const float* const* taps, int ntaps, std::int64_t c, float* out) {
  constexpr std::int64_t W = sizeof(F) / sizeof(float);
  std::int64_t k = 0;
  for (; k + W <= c; k += W) {
    F m;
    std::memcpy(&m, taps[0] + k, sizeof m);
    for (int t = 1; t < ntaps; ++t) {
      F v;
      std::memcpy(&v, taps[t] + k, sizeof v);
      m = m < v ? v : m;  // a NaN in v never replaces m (the reference's std::max(m, v))
    }
    std::memcpy(out + k, &m, sizeof m);
  }
  for (; k < c; ++k) {
    float m = taps[0][k];
    for (int t = 1; t < ntaps; ++t) m = m < taps[t][k] ? taps[t][k] : m;
    out[k] = m;
  }
}

// A float sum in tap order, divided once: the reference sums in double, so an average
// differs from it by float rounding (under 1e-6 relative for the windows of CNNs).
template <class F>
GF_INLINE void average_pixel(const float* const* taps, int ntaps, float divisor, std::int64_t c, float* out) {
  constexpr std::int64_t W = sizeof(F) / sizeof(float);
  std::int64_t k = 0;
  for (; k + W <= c; k += W) {
    F s = F{};
    for (int t = 0; t < ntaps; ++t) {
      F v;
      std::memcpy(&v, taps[t] + k, sizeof v);
      s += v;
    }
    s = s / divisor;
    std::memcpy(out + k, &s, sizeof s);
  }
  for (; k < c; ++k) {
    float s = 0.0f;
    for (int t = 0; t < ntaps; ++t) s += taps[t][k];
    out[k] = s / divisor;
  }
}

// Output rows [row_begin, row_end) (a row: one image's output line).
template <class F>
GF_INLINE void rows(const PoolParams& p, const float* x, float* y, std::int64_t row_begin, std::int64_t row_end) {
  const std::int64_t c = p.c;
  std::vector<const float*> taps(static_cast<std::size_t>(p.kh * p.kw + 1));
  // For max, tap 0 of every window is a row of -inf, the reference's starting value: a NaN
  // in the first input tap is then passed over like any other, and a window wholly in the
  // padding gives -inf.
  std::vector<float> ninf(p.max ? static_cast<std::size_t>(c) : 0, -std::numeric_limits<float>::infinity());
  for (std::int64_t row = row_begin; row < row_end; ++row) {
    const std::int64_t n = row / p.out_h, oh = row % p.out_h;
    const float* image = x + n * p.h * p.w * c;
    for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
      int ntaps = 0;
      std::int64_t padded = 0;
      if (p.max) taps[static_cast<std::size_t>(ntaps++)] = ninf.data();
      for_each_tap(p, oh, ow, [&](std::int64_t ih, std::int64_t iw, bool inside) {
        // Positions in the explicit padding count for count_include_pad; past it (ceil_mode's
        // overhang) they never do.
        if (ih < p.h + p.pad_b && iw < p.w + p.pad_r) ++padded;
        if (inside) taps[static_cast<std::size_t>(ntaps++)] = image + (ih * p.w + iw) * c;
      });
      float* out = y + (row * p.out_w + ow) * c;
      if (p.max) {
        max_pixel<F>(taps.data(), ntaps, c, out);
      } else {
        const std::int64_t count = p.count_include_pad ? padded : ntaps;
        average_pixel<F>(taps.data(), ntaps, static_cast<float>(std::max<std::int64_t>(1, count)), c, out);
      }
    }
  }
}

#undef GF_INLINE

// One entry per instruction set. The parallel loop's body must call these rather than
// hold the vector code itself: a lambda is compiled for the baseline ISA, where the wide
// vector type would be emulated.
using RowsFn = void (*)(const PoolParams&, const float*, float*, std::int64_t, std::int64_t);
__attribute__((target("avx512f"))) void rows_avx512(const PoolParams& p, const float* x, float* y, std::int64_t b,
                                                     std::int64_t e) {
  rows<Lanes<16>::F>(p, x, y, b, e);
}
__attribute__((target("avx2"))) void rows_avx2(const PoolParams& p, const float* x, float* y, std::int64_t b,
                                                std::int64_t e) {
  rows<Lanes<8>::F>(p, x, y, b, e);
}
void rows_sse2(const PoolParams& p, const float* x, float* y, std::int64_t b, std::int64_t e) {
  rows<Lanes<4>::F>(p, x, y, b, e);
}

}  // namespace

void pool_nhwc(const PoolParams& p, const float* x, float* y) {
  const std::string_view isa = vmath::isa();  // oneDNN's effective ISA, as the other SIMD loops
  const RowsFn rows_of = isa == "avx512" ? rows_avx512 : isa == "avx2" ? rows_avx2 : rows_sse2;
  const std::int64_t total_rows = p.n * p.out_h;
  const std::int64_t per_row = std::max<std::int64_t>(1, p.out_w * p.c * p.kh * p.kw);
  const std::int64_t grain = std::max<std::int64_t>(1, serial_elements() / per_row);
  team_for(total_rows, grain, [&](std::int64_t begin, std::int64_t end) { rows_of(p, x, y, begin, end); });
}

}  // namespace graphfuse::kernels::fast
