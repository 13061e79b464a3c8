// The fast kernels' quantized inner loops, vectorized: requantizing int32 sums, and the
// element-wise QLinearAdd / QLinearMul.
#pragma once

#include <cstdint>

namespace graphfuse::kernels::fast {

/// y (NCHW) = the requantized NHWC `sums` (batch x positions x channels), channel m as
/// quantize(float(sum + bias[m]) * scale[m]) of kernels/reference/quant_common.h: rounded
/// half to even, plus `zero_point`, saturated to [lo, hi]. The same integers as that
/// expression provided every scale is finite and every sum + bias fits int32 (the caller
/// checks). `bias` may be null.
void requantize_nhwc_to_nchw(const std::int32_t* sums, const std::int32_t* bias, const float* scale,
                             std::int64_t zero_point, std::int64_t lo, std::int64_t hi, std::int64_t batch,
                             std::int64_t positions, std::int64_t channels, std::uint8_t* y);
void requantize_nhwc_to_nchw(const std::int32_t* sums, const std::int32_t* bias, const float* scale,
                             std::int64_t zero_point, std::int64_t lo, std::int64_t hi, std::int64_t batch,
                             std::int64_t positions, std::int64_t channels, std::int8_t* y);

/// y (rows x channels, row-major: QLinearMatMul's output, or QLinearConv's in NHWC) =
/// `sums` of the same layout requantized as above; `bias` may be null.
void requantize_rows(const std::int32_t* sums, const std::int32_t* bias, const float* scale, std::int64_t zero_point,
                     std::int64_t lo, std::int64_t hi, std::int64_t rows, std::int64_t channels, std::uint8_t* y);
void requantize_rows(const std::int32_t* sums, const std::int32_t* bias, const float* scale, std::int64_t zero_point,
                     std::int64_t lo, std::int64_t hi, std::int64_t rows, std::int64_t channels, std::int8_t* y);

/// y = QuantizeLinear(x) per tensor into uint8/int8, as the reference kernel computes it:
/// round_half_even(x / scale) + zero_point saturated, NaN to the zero point.
template <class T>
void quantize_floats(const float* x, float scale, std::int32_t zero_point, std::int64_t n, T* y);
/// y = DequantizeLinear(x) per tensor from uint8/int8: float(x - zero_point) * scale.
template <class T>
void dequantize_bytes(const T* x, float scale, std::int32_t zero_point, std::int64_t n, float* y);

/// QGemm's output from its int32 sums (rows x channels): v = float(sum + bias[n]) * factor[n]
/// (factor = alpha * a_scale * b_scale[n]), then quantize(v / y_scale) as above into y, or v
/// itself into float32 `y_float` when there is no y_scale (y_float non-null). `bias` may be
/// null; the caller checks that sums plus bias fit int32 and the factors are finite.
void requantize_gemm_rows(const std::int32_t* sums, const std::int32_t* bias, const float* factor, float y_scale,
                          std::int64_t zero_point, std::int64_t lo, std::int64_t hi, std::int64_t rows,
                          std::int64_t channels, std::uint8_t* y);
void requantize_gemm_rows(const std::int32_t* sums, const std::int32_t* bias, const float* factor, float y_scale,
                          std::int64_t zero_point, std::int64_t lo, std::int64_t hi, std::int64_t rows,
                          std::int64_t channels, std::int8_t* y);
void gemm_rows_to_float(const std::int32_t* sums, const std::int32_t* bias, const float* factor, std::int64_t rows,
                        std::int64_t channels, float* y);

/// The scalars of a QLinearAdd (mul = false) or QLinearMul (mul = true): the inputs' scales
/// and zero points and the output's.
struct QLinearBinaryParams {
  bool mul;
  float as;
  std::int32_t az;
  float bs;
  std::int32_t bz;
  float ys;
  std::int32_t yz;
};

/// y = QLinearAdd or QLinearMul of a (n elements) and b (n / inner elements, each paired
/// with `inner` consecutive elements of a: 1 for inputs of one shape, H * W for a
/// per-channel [N, C, 1, 1] against NCHW [N, C, H, W], n for a scalar):
/// quantize(op(float(a - az) * as, float(b - bz) * bs) / ys) as the reference kernels'
/// DequantizeLinear -> op -> QuantizeLinear compute it. Needs finite scales and ys != 0
/// (the caller checks). T is uint8 or int8, for the inputs and y alike.
template <class T>
void qlinear_binary(const QLinearBinaryParams& q, const T* a, const T* b, std::int64_t n, std::int64_t inner, T* y);
/// The same for a in NHWC (batch x positions x channels) and a per-channel b: element
/// (n, p, c) of a pairs with b[n * b_batch_stride + c].
template <class T>
void qlinear_binary_per_channel(const QLinearBinaryParams& q, const T* a, const T* b, std::int64_t batch,
                                std::int64_t positions, std::int64_t channels, std::int64_t b_batch_stride, T* y);

}  // namespace graphfuse::kernels::fast
