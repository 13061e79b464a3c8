// Quantized matrix products on oneDNN's int8 matmul (kernels/fast/int8_matmul.cpp).
#pragma once

#include <cstdint>

#include "graphfuse/kernels/kernel.h"

namespace graphfuse::kernels::fast {

/// acc (M x N, row-major) = the exact int32 sums (a - a_zero_point) x b, a being M x K
/// (any rank, its last dimension K, uint8 or int8) and b a K x N int8 matrix with zero
/// points 0, stored N x K when `b_transposed` (Gemm's transB); `b_is_const` lets the packed
/// copy of b be kept for later calls. Returns false,
/// touching nothing, where oneDNN's product would not be exact or fast: other types or
/// ranks, inner dimensions deep enough to overflow int32, or an instruction set without
/// VNNI (see int8_conv.cpp).
bool int8_matmul_sums(const Tensor& a, std::int32_t a_zero_point, const Tensor& b, bool b_is_const, std::int32_t* acc,
                      bool b_transposed = false);

}  // namespace graphfuse::kernels::fast
