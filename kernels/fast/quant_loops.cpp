// Quantized loops written so the compiler vectorizes them. This file is built with
// -fno-trapping-math (CMakeLists.txt): without it GCC keeps the float clamps as branches
// and the loops scalar.
#include "fast/quant_loops.h"
#include "fast/parallelism.h"


#include <algorithm>
#include <type_traits>
#include <vector>

// The inner loops are compiled three times, for AVX-512, AVX2 and the x86-64 baseline, and
// the CPU picks one at load time (GCC's target_clones). Every version computes the same
// bits: the arithmetic is IEEE single precision without contraction (-ffp-contract=off),
// whatever the vector width.
#define GRAPHFUSE_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

namespace graphfuse::kernels::fast {

namespace {

// round_half_even(v) + zp saturated to [lo, hi], for finite v: values beyond 2^22 saturate
// whatever their rounding; within it, adding and subtracting 1.5 * 2^23 rounds half to
// even exactly.
inline float quantize_value(float v, float zp, float lo, float hi) {
  v = std::min(std::max(v, -4194304.0f), 4194304.0f);
  v = (v + 12582912.0f) - 12582912.0f + zp;
  return std::min(std::max(v, lo), hi);
}

// The saturation bounds of an 8-bit type.
template <class T>
constexpr float type_lo = std::is_signed_v<T> ? -128.0f : 0.0f;
template <class T>
constexpr float type_hi = std::is_signed_v<T> ? 127.0f : 255.0f;

// `bias`, or `channels` zeros in its place when it is null: the loops always add one.
class BiasOrZeros {
 public:
  BiasOrZeros(const std::int32_t* bias, std::int64_t channels) : bias_(bias) {
    if (!bias_) {
      zeros_.assign(static_cast<std::size_t>(channels), 0);
      bias_ = zeros_.data();
    }
  }
  const std::int32_t* get() const { return bias_; }

 private:
  std::vector<std::int32_t> zeros_;
  const std::int32_t* bias_;
};

// One position's channels. Restrict pointers: Out is a char type, and a store through it
// may otherwise alias every pointer the loop reads, which keeps it scalar.
template <class Out>
GRAPHFUSE_VECTOR_CLONES
void requantize_channels(const std::int32_t* __restrict in, const std::int32_t* __restrict bias,
                         const float* __restrict scale, float fz, float flo, float fhi, std::int64_t channels,
                         Out* __restrict o) {
  for (std::int64_t m = 0; m < channels; ++m) {
    const float v = static_cast<float>(in[m] + bias[m]) * scale[m];
    o[m] = static_cast<Out>(static_cast<std::int32_t>(quantize_value(v, fz, flo, fhi)));
  }
}

// Tile rows [p0, p1) of `tile` (positions x channels) into columns of y (channels x positions).
template <class Out>
void transpose_tile(const Out* __restrict tile, std::int64_t p0, std::int64_t p1, std::int64_t channels,
                    std::int64_t positions, Out* __restrict y) {
  for (std::int64_t m = 0; m < channels; ++m)
    for (std::int64_t pos = p0; pos < p1; ++pos) y[m * positions + pos] = tile[(pos - p0) * channels + m];
}

template <class Out>
void requantize(const std::int32_t* sums, const std::int32_t* bias, const float* scale, std::int64_t zp,
                std::int64_t lo, std::int64_t hi, std::int64_t batch, std::int64_t positions, std::int64_t channels,
                Out* y) {
  constexpr std::int64_t kBlock = 16;  // positions per tile of the transpose
  const std::int64_t blocks = (positions + kBlock - 1) / kBlock;
  const float fz = static_cast<float>(zp), flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  const BiasOrZeros bias_or_zeros(bias, channels);
  bias = bias_or_zeros.get();
  fast::team_for(batch * blocks, 1, [&](std::int64_t r_begin, std::int64_t r_end) {
    std::vector<Out> tile(static_cast<std::size_t>(kBlock * channels));
    for (std::int64_t t = r_begin; t < r_end; ++t) {
      const std::int64_t n = t / blocks, p0 = t % blocks * kBlock, p1 = std::min(positions, p0 + kBlock);
      for (std::int64_t pos = p0; pos < p1; ++pos)
        requantize_channels(sums + (n * positions + pos) * channels, bias, scale, fz, flo, fhi, channels,
                            tile.data() + (pos - p0) * channels);
      transpose_tile(tile.data(), p0, p1, channels, positions, y + n * channels * positions);
    }
  });
}

}  // namespace

void requantize_nhwc_to_nchw(const std::int32_t* sums, const std::int32_t* bias, const float* scale,
                             std::int64_t zero_point, std::int64_t lo, std::int64_t hi, std::int64_t batch,
                             std::int64_t positions, std::int64_t channels, std::uint8_t* y) {
  requantize(sums, bias, scale, zero_point, lo, hi, batch, positions, channels, y);
}

void requantize_nhwc_to_nchw(const std::int32_t* sums, const std::int32_t* bias, const float* scale,
                             std::int64_t zero_point, std::int64_t lo, std::int64_t hi, std::int64_t batch,
                             std::int64_t positions, std::int64_t channels, std::int8_t* y) {
  requantize(sums, bias, scale, zero_point, lo, hi, batch, positions, channels, y);
}

namespace {

// Elements [begin, end): parameters by value and restrict pointers, so nothing the loop
// reads can change under its stores and it vectorizes.
template <bool Mul, class T>
GRAPHFUSE_VECTOR_CLONES
void binary_range(const T* __restrict a, float as, float az, const T* __restrict b, float bs, float bz, float ys,
                  float yz, float lo, float hi, std::int64_t begin, std::int64_t end, T* __restrict y) {
  for (std::int64_t i = begin; i < end; ++i) {
    const float fa = (static_cast<float>(a[i]) - az) * as, fb = (static_cast<float>(b[i]) - bz) * bs;
    const float v = Mul ? fa * fb : fa + fb;
    y[i] = static_cast<T>(static_cast<std::int32_t>(quantize_value(v / ys, yz, lo, hi)));
  }
}

// The same with b's value fixed (dequantized as fb) for the whole range.
template <bool Mul, class T>
GRAPHFUSE_VECTOR_CLONES
void binary_range_scalar(const T* __restrict a, float as, float az, float fb, float ys, float yz, float lo, float hi,
                         std::int64_t begin, std::int64_t end, T* __restrict y) {
  for (std::int64_t i = begin; i < end; ++i) {
    const float fa = (static_cast<float>(a[i]) - az) * as;
    const float v = Mul ? fa * fb : fa + fb;
    y[i] = static_cast<T>(static_cast<std::int32_t>(quantize_value(v / ys, yz, lo, hi)));
  }
}

}  // namespace

namespace {

template <class Out>
GRAPHFUSE_VECTOR_CLONES
void gemm_channels(const std::int32_t* __restrict in, const std::int32_t* __restrict bias,
                   const float* __restrict factor, float ys, float fz, float flo, float fhi, std::int64_t channels,
                   Out* __restrict o) {
  for (std::int64_t m = 0; m < channels; ++m) {
    const float v = static_cast<float>(in[m] + bias[m]) * factor[m];
    o[m] = static_cast<Out>(static_cast<std::int32_t>(quantize_value(v / ys, fz, flo, fhi)));
  }
}

GRAPHFUSE_VECTOR_CLONES
void gemm_channels_float(const std::int32_t* __restrict in, const std::int32_t* __restrict bias,
                         const float* __restrict factor, std::int64_t channels, float* __restrict o) {
  for (std::int64_t m = 0; m < channels; ++m) o[m] = static_cast<float>(in[m] + bias[m]) * factor[m];
}

// Calls row(r, bias) for every row, in parallel, with bias never null.
template <class Row>
void for_rows(const std::int32_t* bias, std::int64_t rows, std::int64_t channels, Row row) {
  const BiasOrZeros bias_or_zeros(bias, channels);
  bias = bias_or_zeros.get();
  fast::team_for(rows, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(channels, 1)), [&](std::int64_t r_begin, std::int64_t r_end) {
                      for (std::int64_t i = r_begin; i < r_end; ++i) row(i, bias);
                    });
}

template <class Out>
void requantize_rows_typed(const std::int32_t* sums, const std::int32_t* bias, const float* scale, std::int64_t zp,
                           std::int64_t lo, std::int64_t hi, std::int64_t rows, std::int64_t channels, Out* y) {
  const float fz = static_cast<float>(zp), flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  for_rows(bias, rows, channels, [&](std::int64_t r, const std::int32_t* b) {
    requantize_channels(sums + r * channels, b, scale, fz, flo, fhi, channels, y + r * channels);
  });
}

}  // namespace

template <class Out>
void requantize_gemm_typed(const std::int32_t* sums, const std::int32_t* bias, const float* factor, float ys,
                           std::int64_t zp, std::int64_t lo, std::int64_t hi, std::int64_t rows, std::int64_t channels,
                           Out* y) {
  const float fz = static_cast<float>(zp), flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  for_rows(bias, rows, channels, [&](std::int64_t r, const std::int32_t* b) {
    gemm_channels(sums + r * channels, b, factor, ys, fz, flo, fhi, channels, y + r * channels);
  });
}

void requantize_gemm_rows(const std::int32_t* sums, const std::int32_t* bias, const float* factor, float y_scale,
                          std::int64_t zero_point, std::int64_t lo, std::int64_t hi, std::int64_t rows,
                          std::int64_t channels, std::uint8_t* y) {
  requantize_gemm_typed(sums, bias, factor, y_scale, zero_point, lo, hi, rows, channels, y);
}

void requantize_gemm_rows(const std::int32_t* sums, const std::int32_t* bias, const float* factor, float y_scale,
                          std::int64_t zero_point, std::int64_t lo, std::int64_t hi, std::int64_t rows,
                          std::int64_t channels, std::int8_t* y) {
  requantize_gemm_typed(sums, bias, factor, y_scale, zero_point, lo, hi, rows, channels, y);
}

void gemm_rows_to_float(const std::int32_t* sums, const std::int32_t* bias, const float* factor, std::int64_t rows,
                        std::int64_t channels, float* y) {
  for_rows(bias, rows, channels, [&](std::int64_t r, const std::int32_t* b) {
    gemm_channels_float(sums + r * channels, b, factor, channels, y + r * channels);
  });
}

void requantize_rows(const std::int32_t* sums, const std::int32_t* bias, const float* scale, std::int64_t zero_point,
                     std::int64_t lo, std::int64_t hi, std::int64_t rows, std::int64_t channels, std::uint8_t* y) {
  requantize_rows_typed(sums, bias, scale, zero_point, lo, hi, rows, channels, y);
}

void requantize_rows(const std::int32_t* sums, const std::int32_t* bias, const float* scale, std::int64_t zero_point,
                     std::int64_t lo, std::int64_t hi, std::int64_t rows, std::int64_t channels, std::int8_t* y) {
  requantize_rows_typed(sums, bias, scale, zero_point, lo, hi, rows, channels, y);
}

template <class T>
void qlinear_binary(const QLinearBinaryParams& q, const T* a, const T* b, std::int64_t n, std::int64_t inner, T* y) {
  const float lo = type_lo<T>, hi = type_hi<T>;
  // x - zero point is exact in float (both are 8-bit integers), as the reference's int64
  // difference converted to float is.
  const float faz = static_cast<float>(q.az), fbz = static_cast<float>(q.bz), fyz = static_cast<float>(q.yz);
  const float as = q.as, bs = q.bs, ys = q.ys;
  const bool mul = q.mul;
  constexpr std::int64_t kGrain = 16384;
  if (inner == 1) {
    fast::team_for(n, kGrain, [=](std::int64_t r_begin, std::int64_t r_end) {
      if (mul)
        binary_range<true>(a, as, faz, b, bs, fbz, ys, fyz, lo, hi, r_begin, r_end, y);
      else
        binary_range<false>(a, as, faz, b, bs, fbz, ys, fyz, lo, hi, r_begin, r_end, y);
    });
    return;
  }
  const std::int64_t rows = n / inner;
  fast::team_for(rows, std::max<std::int64_t>(1, kGrain / inner), [=](std::int64_t r_begin, std::int64_t r_end) {
                      for (std::int64_t row = r_begin; row < r_end; ++row) {
                        const float fb = (static_cast<float>(b[row]) - fbz) * bs;
                        if (mul)
                          binary_range_scalar<true>(a, as, faz, fb, ys, fyz, lo, hi, row * inner, (row + 1) * inner, y);
                        else
                          binary_range_scalar<false>(a, as, faz, fb, ys, fyz, lo, hi, row * inner, (row + 1) * inner, y);
                      }
                    });
}

template <class T>
void qlinear_binary_per_channel(const QLinearBinaryParams& q, const T* a, const T* b, std::int64_t batch,
                                std::int64_t positions, std::int64_t channels, std::int64_t b_batch_stride, T* y) {
  const float lo = type_lo<T>, hi = type_hi<T>;
  const float faz = static_cast<float>(q.az), fbz = static_cast<float>(q.bz), fyz = static_cast<float>(q.yz);
  const float as = q.as, bs = q.bs, ys = q.ys;
  const bool mul = q.mul;
  const std::int64_t rows = batch * positions;
  fast::team_for(rows, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(channels, 1)), [=](std::int64_t r_begin, std::int64_t r_end) {
                      for (std::int64_t row = r_begin; row < r_end; ++row) {
                        // Row `row` of a against b's row of its batch, both offset so that
                        // element i of the range is channel i.
                        const T* ar = a + row * channels;
                        const T* br = b + (row / positions) * b_batch_stride;
                        T* yr = y + row * channels;
                        if (mul)
                          binary_range<true>(ar, as, faz, br, bs, fbz, ys, fyz, lo, hi, 0, channels, yr);
                        else
                          binary_range<false>(ar, as, faz, br, bs, fbz, ys, fyz, lo, hi, 0, channels, yr);
                      }
                    });
}

template void qlinear_binary(const QLinearBinaryParams&, const std::uint8_t*, const std::uint8_t*, std::int64_t,
                             std::int64_t, std::uint8_t*);
template void qlinear_binary(const QLinearBinaryParams&, const std::int8_t*, const std::int8_t*, std::int64_t,
                             std::int64_t, std::int8_t*);
template void qlinear_binary_per_channel(const QLinearBinaryParams&, const std::uint8_t*, const std::uint8_t*,
                                         std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::uint8_t*);
template void qlinear_binary_per_channel(const QLinearBinaryParams&, const std::int8_t*, const std::int8_t*,
                                         std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int8_t*);

namespace {

template <class T>
GRAPHFUSE_VECTOR_CLONES
void quantize_range(const float* __restrict x, float scale, float zp, float lo, float hi, std::int64_t begin,
                    std::int64_t end, T* __restrict y) {
  for (std::int64_t i = begin; i < end; ++i) {
    float v = x[i] / scale;
    v = v == v ? v : 0.0f;  // NaN quantizes to the zero point
    y[i] = static_cast<T>(static_cast<std::int32_t>(quantize_value(v, zp, lo, hi)));
  }
}

template <class T>
GRAPHFUSE_VECTOR_CLONES
void dequantize_range(const T* __restrict x, float scale, float zp, std::int64_t begin, std::int64_t end,
                      float* __restrict y) {
  for (std::int64_t i = begin; i < end; ++i) y[i] = (static_cast<float>(x[i]) - zp) * scale;
}

constexpr std::int64_t kElementGrain = 16384;

}  // namespace

template <class T>
void quantize_floats(const float* x, float scale, std::int32_t zero_point, std::int64_t n, T* y) {
  const float lo = type_lo<T>, hi = type_hi<T>;
  const float zp = static_cast<float>(zero_point);
  fast::team_for(n, kElementGrain, [=](std::int64_t r_begin, std::int64_t r_end) {
    quantize_range(x, scale, zp, lo, hi, r_begin, r_end, y);
  });
}

template <class T>
void dequantize_bytes(const T* x, float scale, std::int32_t zero_point, std::int64_t n, float* y) {
  const float zp = static_cast<float>(zero_point);
  fast::team_for(n, kElementGrain, [=](std::int64_t r_begin, std::int64_t r_end) {
    dequantize_range(x, scale, zp, r_begin, r_end, y);
  });
}

template void quantize_floats(const float*, float, std::int32_t, std::int64_t, std::uint8_t*);
template void quantize_floats(const float*, float, std::int32_t, std::int64_t, std::int8_t*);
template void dequantize_bytes(const std::uint8_t*, float, std::int32_t, std::int64_t, float*);
template void dequantize_bytes(const std::int8_t*, float, std::int32_t, std::int64_t, float*);

}  // namespace graphfuse::kernels::fast
