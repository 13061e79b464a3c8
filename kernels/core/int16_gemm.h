// Exact int32 products of int16 matrices: the integer core of QLinearMatMul, MatMulInteger
// and MatMulIntegerToFloat, whose operands are int8/uint8 values minus their zero points
// (|v| <= 255). Pairwise int16 products summed into int32 lanes (pmaddwd) are exact whenever
// k * 255 * 255 < 2^31, so the result is the same integer on every instruction set.
#pragma once

#include <cstdint>

namespace graphfuse::kernels {

/// The longest inner dimension whose sums of products of centred 8-bit values (|v| <= 255)
/// cannot overflow int32: 33,025 * 65,025 < 2^31.
inline constexpr std::int64_t kMaxInt16GemmDepth = 33025;

/// acc[i * n + j] = sum_k a[i * k + kk] * bt[j * k + kk] for i < m, j < n: A is m x k and B
/// is given transposed (n x k), both row-major. Requires |values| <= 255 and k <=
/// kMaxInt16GemmDepth. Four rows of A at a time in parallel (fast::team_for); AVX-512BW, AVX2 or SSE2
/// by the CPU.
void int16_gemm_nt(const std::int16_t* a, const std::int16_t* bt, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::int32_t* acc);

}  // namespace graphfuse::kernels
