// Vectorized transcendental elementwise functions (exp, logistic, tanh, erf, GELU, swish) on
// float arrays: AVX-512 or AVX2+FMA where oneDNN's effective ISA allows it, SSE2 otherwise.
#pragma once

#include <cstdint>

namespace graphfuse::kernels::fast::vmath {

enum class Fn {
  Exp,       ///< e^x
  Logistic,  ///< 1 / (1 + e^-x)
  Tanh,
  Erf,
  Gelu,      ///< 0.5 x (1 + erf(x / sqrt 2))
  GeluTanh,  ///< 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  Swish,     ///< x * logistic(alpha * x): SiLU at alpha 1, QuickGelu at 1.702
};

/// y[i] = f(x[i]) for 0 <= i < n on the calling thread; y may equal x. Accuracy: within
/// 4e-7 relative (2e-7 absolute near zero for erf/GELU) of the exact function; NaN in,
/// NaN out; +-inf give the function's limits. Results depend on the instruction set
/// (fused multiply-adds) but never on how the caller splits the array.
void apply(Fn f, const float* x, float* y, std::int64_t n, float alpha = 1.0f);

/// One softmax row: y[i] = exp(x[i] - max) / sum_j exp(x[j] - max); y may equal x. The same
/// accuracy and instruction-set dependence as apply(); a row of -inf (every key masked) gives
/// NaN, as the exact formula does.
void softmax_row(const float* x, float* y, std::int64_t n);

/// The instruction set apply() and softmax_row() run on: "avx512", "avx2" or "sse2". Follows
/// ONEDNN_MAX_CPU_ISA, so a restricted run restricts these kernels too.
const char* isa();

}  // namespace graphfuse::kernels::fast::vmath
