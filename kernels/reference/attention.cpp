// Reference attention family (com.microsoft.Attention, MultiHeadAttention, GroupQueryAttention,
// RotaryEmbedding): core/attention_ops.cpp's semantics with the products as plain loops
// accumulated in double.
#include "core/attention_ops.h"

namespace graphfuse::kernels {

namespace {
void reference_batched_gemm(const float* a, const float* b, float* y, std::int64_t batch, std::int64_t m,
                            std::int64_t n, std::int64_t k, bool trans_b) {
  for (std::int64_t bi = 0; bi < batch; ++bi) {
    const float* ab = a + bi * m * k;
    const float* bb = b + bi * k * n;
    float* yb = y + bi * m * n;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (std::int64_t p = 0; p < k; ++p)
          acc += static_cast<double>(ab[i * k + p]) * (trans_b ? bb[j * k + p] : bb[p * n + j]);
        yb[i * n + j] = static_cast<float>(acc);
      }
  }
}
}  // namespace

void register_reference_attention(KernelRegistry& r) { register_attention_ops(r, reference_batched_gemm); }

}  // namespace graphfuse::kernels
