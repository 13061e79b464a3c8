// Reference batched matrix product: the textbook triple loop, accumulated in double.
#include "core/matmul_ops.h"

namespace graphfuse::kernels {

namespace {
void reference_matmul(const MatMulSpec& s, const float* a, const float* b, const float* c,
                      float* y, std::shared_ptr<const void>) {
  for (std::int64_t bi = 0; bi < s.batches(); ++bi) {
    const float* ab = a + s.a_off[bi];
    const float* bb = b + s.b_off[bi];
    float* yb = y + bi * s.m * s.n;
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double acc = 0.0;
        for (std::int64_t p = 0; p < s.k; ++p) {
          const float av = s.trans_a ? ab[p * s.m + i] : ab[i * s.k + p];
          const float bv = s.trans_b ? bb[j * s.k + p] : bb[p * s.n + j];
          acc += static_cast<double>(av) * bv;
        }
        acc *= s.alpha;
        if (s.has_c) acc += static_cast<double>(s.beta) * c[i * s.c_rs + j * s.c_cs];
        yb[i * s.n + j] = s.act.apply(static_cast<float>(acc));
      }
  }
}
}  // namespace

void register_reference_matmul(KernelRegistry& r) { register_matmul_ops(r, reference_matmul); }

}  // namespace graphfuse::kernels
