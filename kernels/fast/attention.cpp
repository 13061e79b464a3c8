// Fast attention family: core/attention_ops.cpp's semantics with the products (the input
// projection, Q K^T and P V) on the fast set's oneDNN matmul.
#include "core/attention_ops.h"
#include "core/matmul_ops.h"

namespace graphfuse::kernels {

namespace {
void fast_batched_gemm(const float* a, const float* b, float* y, std::int64_t batch, std::int64_t m, std::int64_t n,
                       std::int64_t k, bool trans_b) {
  MatMulSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.trans_b = trans_b;
  s.batch = {batch};
  for (std::int64_t i = 0; i < batch; ++i) {
    s.a_off.push_back(i * m * k);
    s.b_off.push_back(i * k * n);
  }
  fast::fast_matmul(s, a, b, nullptr, y, nullptr);
}
}  // namespace

void register_fast_attention(KernelRegistry& r) { register_attention_ops(r, fast_batched_gemm); }

}  // namespace graphfuse::kernels
