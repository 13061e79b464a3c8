// Node-level MatMul / Gemm / FusedMatMul shared by both kernel sets.
#pragma once

#include <memory>

#include "core/util.h"
#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels {

/// A batched matrix product y[b] = alpha * op(A[b]) * op(B[b]) + beta * C, fully resolved.
/// A[b] is M x K after op (stored K x M when trans_a), B[b] is K x N after op; y is
/// [batch..., M, N] contiguous.
struct MatMulSpec {
  std::int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f;
  Shape batch;                            ///< broadcast batch dims (may be empty)
  std::vector<std::int64_t> a_off, b_off;  ///< element offset of A[b], B[b] per batch entry
  bool has_c = false;                     ///< Gemm's C, broadcast to [M, N]
  float beta = 1.0f;
  std::int64_t c_rs = 0, c_cs = 0;         ///< C[i, j] = c[i * c_rs + j * c_cs]
  ActivationSpec act;                     ///< applied last (com.microsoft.FusedGemm)
  std::int64_t batches() const { return static_cast<std::int64_t>(a_off.size()); }
};

/// A raw batched matmul implementation (reference or fast). b_owner owns B's bytes when
/// B is a constant (weights), null otherwise, so derived data may be cached.
using MatMulImpl = void (*)(const MatMulSpec&, const float* a, const float* b, const float* c,
                            float* y, std::shared_ptr<const void> b_owner);

/// Registers MatMul, Gemm, com.microsoft.FusedMatMul and com.microsoft.FusedGemm
/// computing through `impl`.
void register_matmul_ops(KernelRegistry& r, MatMulImpl impl);

namespace fast {
/// The fast set's MatMulImpl (oneDNN's matmul primitive, cached per shape), for kernels
/// whose inner products are matrix products (attention).
void fast_matmul(const MatMulSpec& s, const float* a, const float* b, const float* c, float* y,
                 std::shared_ptr<const void> b_owner);
}  // namespace fast

}  // namespace graphfuse::kernels
