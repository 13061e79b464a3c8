// The fast set's com.microsoft.QGemm: A (rows, uint8 or int8, not transposed) times an int8 B
// with zero points 0 (transposed or not) on oneDNN's int8 matmul (kernels/fast/int8_matmul.cpp),
// the output computed by the vector loop with the reference kernel's expression
// float(sum + C[n]) * (alpha * a_scale * b_scale[n]), divided by y_scale and quantized, or
// left float32 without y_scale. The same numbers as the reference kernel; every other case
// (transA, uint8 B, B zero points, C broadcast over rows, no VNNI) runs the reference kernel.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/util.h"
#include "fast/int8_matmul.h"
#include "fast/quant_loops.h"
#include "reference/quant_common.h"

namespace graphfuse::kernels {

namespace {

using namespace quant;

std::vector<Tensor> qgemm(const KernelCall& c) {
  const KernelFn& reference = *registry(KernelSet::Reference).find("com.microsoft.QGemm");
  const Tensor *a = c.input(0), *as = c.input(1), *az = c.input(2), *b = c.input(3), *bs = c.input(4), *bz = c.input(5);
  const Tensor *bias = c.input(6), *ys = c.input(7), *yz = c.input(8);
  if (!a || !b || a->shape.size() != 2 || b->shape.size() != 2 || attr_int(c.attrs, "transA", 0) != 0) return reference(c);
  const bool tb = attr_int(c.attrs, "transB", 0) != 0;
  const std::int64_t m = a->shape[0], k = a->shape[1], n = tb ? b->shape[0] : b->shape[1];
  if ((tb ? b->shape[1] : b->shape[0]) != k) return reference(c);
  if (!is_scalar_param(as) || as->dtype != DType::Float32 || (az && !is_scalar_param(az)) ||
      (ys && (!is_scalar_param(ys) || ys->dtype != DType::Float32)) || (yz && !is_scalar_param(yz)))
    return reference(c);
  if (!bs || !bs->has_data() || bs->dtype != DType::Float32 || (bs->num_elements() != 1 && bs->num_elements() != n))
    return reference(c);
  if (bz) {
    if (!bz->has_data() || (bz->num_elements() != 1 && bz->num_elements() != n)) return reference(c);
    for (std::int64_t j = 0; j < bz->num_elements(); ++j)
      if (int_at(*bz, j) != 0) return reference(c);
  }
  // C as one int32 per column ([N] or [1, N]).
  if (bias && (bias->dtype != DType::Int32 || !bias->has_data() || bias->num_elements() != n ||
               (bias->shape.size() == 2 && bias->shape[0] != 1) || bias->shape.size() > 2))
    return reference(c);
  const DType out = !ys ? DType::Float32 : yz ? yz->dtype : a->dtype;
  if (out != DType::Float32 && out != DType::UInt8 && out != DType::Int8) return reference(c);
  const float alpha = attr_float(c.attrs, "alpha", 1.0f);
  std::vector<float> factor(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    factor[static_cast<std::size_t>(j)] = alpha * as->as<float>()[0] * bs->as<float>()[bs->num_elements() == 1 ? 0 : j];
    if (!std::isfinite(factor[static_cast<std::size_t>(j)])) return reference(c);
  }
  const float y_scale = ys ? ys->as<float>()[0] : 1.0f;
  if (ys && (!std::isfinite(y_scale) || y_scale == 0.0f)) return reference(c);
  // |sum| <= K * 255 * 128; with C it must still fit int32 for the vector loop.
  std::int64_t max_bias = 0;
  for (std::int64_t j = 0; bias && j < n; ++j)
    max_bias = std::max<std::int64_t>(max_bias, std::abs(std::int64_t{bias->as<std::int32_t>()[j]}));
  if (k * 255 * 128 + max_bias > std::numeric_limits<std::int32_t>::max()) return reference(c);

  Tensor sums = alloc_unfilled(DType::Int32, {m * n});
  if (!fast::int8_matmul_sums(*a, static_cast<std::int32_t>(param_z(az, 0)), *b, c.is_const(3), mut<std::int32_t>(sums), tb))
    return reference(c);
  const std::int32_t* s = sums.as<std::int32_t>();
  const std::int32_t* cb = bias ? bias->as<std::int32_t>() : nullptr;
  Tensor y = alloc_unfilled(out, {m, n});
  if (out == DType::Float32) {
    fast::gemm_rows_to_float(s, cb, factor.data(), m, n, mut<float>(y));
  } else {
    const auto [lo, hi] = type_range(out);
    if (out == DType::UInt8)
      fast::requantize_gemm_rows(s, cb, factor.data(), y_scale, param_z(yz, 0), lo, hi, m, n, mut<std::uint8_t>(y));
    else
      fast::requantize_gemm_rows(s, cb, factor.data(), y_scale, param_z(yz, 0), lo, hi, m, n, mut<std::int8_t>(y));
  }
  return {y};
}

}  // namespace

void register_fast_qgemm(KernelRegistry& r) { r.add("com.microsoft.QGemm", qgemm); }

}  // namespace graphfuse::kernels
