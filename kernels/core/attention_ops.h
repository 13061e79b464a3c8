// ONNX Runtime's attention contrib ops (com.microsoft.Attention, MultiHeadAttention,
// GroupQueryAttention) and RotaryEmbedding, shared by both kernel sets: inputs, attributes
// and layouts are resolved here, the two products of attention (Q K^T and P V) are the
// only part a kernel set supplies.
#pragma once

#include "core/util.h"

namespace graphfuse::kernels {

/// y[b] = a[b] (m x k) times b[b] (k x n), or times b[b]^T with b[b] stored n x k when
/// trans_b; every operand contiguous, batch entries back to back.
using BatchedGemm = void (*)(const float* a, const float* b, float* y, std::int64_t batch,
                             std::int64_t m, std::int64_t n, std::int64_t k, bool trans_b);

/// Registers com.microsoft.Attention, MultiHeadAttention, GroupQueryAttention and
/// RotaryEmbedding computing their products through `gemm`.
void register_attention_ops(KernelRegistry& r, BatchedGemm gemm);

}  // namespace graphfuse::kernels
