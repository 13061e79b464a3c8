// The fast set's QLinearMatMul: rows times a constant-shaped int8 matrix (the weights of
// every linear layer of a quantized transformer) on oneDNN's int8 matmul
// (kernels/fast/int8_matmul.cpp), requantized by the vector loop with the reference
// expression, so the integers are the reference kernel's. Everything else (batched
// activation products such as attention's, uint8 weights, weight zero points other than
// 0, machines without VNNI) goes to the reference kernel, whose products are exact int16
// multiply-adds.
#include <algorithm>
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

std::vector<Tensor> qlinear_matmul(const KernelCall& c) {
  const KernelFn& reference = *registry(KernelSet::Reference).find("QLinearMatMul");
  const Tensor *a = c.input(0), *as = c.input(1), *b = c.input(3), *bs = c.input(4), *ys = c.input(6);
  const Tensor *az = c.input(2), *bz = c.input(5), *yz = c.input(7);
  if (!a || !b || !as || !bs || !ys || b->shape.size() != 2 || a->shape.size() < 2) return reference(c);
  const std::int64_t n = b->shape[1];
  if (!is_scalar_param(as) || !is_scalar_param(ys) || (az && !is_scalar_param(az)) || (yz && !is_scalar_param(yz)))
    return reference(c);
  if (!bs->has_data() || bs->dtype != DType::Float32 || (bs->num_elements() != 1 && bs->num_elements() != n))
    return reference(c);
  if (as->dtype != DType::Float32 || ys->dtype != DType::Float32) return reference(c);
  if (bz) {
    if (!bz->has_data()) return reference(c);
    for (std::int64_t j = 0; j < bz->num_elements(); ++j)
      if (int_at(*bz, j) != 0) return reference(c);
  }
  const DType out = yz ? yz->dtype : DType::UInt8;
  if (out != DType::UInt8 && out != DType::Int8) return reference(c);
  // The reference kernel's per-column factor a_scale * b_scale[j] / y_scale; the vector
  // requantization needs it finite.
  std::vector<float> scale(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    scale[static_cast<std::size_t>(j)] = as->as<float>()[0] * bs->as<float>()[bs->num_elements() == 1 ? 0 : j] / ys->as<float>()[0];
    if (!std::isfinite(scale[static_cast<std::size_t>(j)])) return reference(c);
  }
  const std::int64_t k = b->shape[0], rows = k ? a->num_elements() / k : 0;
  Tensor sums = alloc_unfilled(DType::Int32, {rows * n});
  if (!fast::int8_matmul_sums(*a, static_cast<std::int32_t>(param_z(az, 0)), *b, c.is_const(3), mut<std::int32_t>(sums)))
    return reference(c);
  Shape shape = a->shape;
  shape.back() = n;
  Tensor y = alloc_unfilled(out, shape);
  const auto [lo, hi] = type_range(out);
  if (out == DType::UInt8)
    fast::requantize_rows(sums.as<std::int32_t>(), nullptr, scale.data(), param_z(yz, 0), lo, hi, rows, n, mut<std::uint8_t>(y));
  else
    fast::requantize_rows(sums.as<std::int32_t>(), nullptr, scale.data(), param_z(yz, 0), lo, hi, rows, n, mut<std::int8_t>(y));
  return {y};
}

}  // namespace

void register_fast_qlinear_matmul(KernelRegistry& r) { r.add("QLinearMatMul", qlinear_matmul); }

}  // namespace graphfuse::kernels
