// The fast set's QuantizeLinear and DequantizeLinear per tensor into and from 8 bits: one
// vector pass (kernels/fast/quant_loops.cpp) with the reference kernels' expressions, so the
// same bytes. Per-axis parameters, int32 and everything the reference kernels reject go to
// them (and their messages).
#include <cstdint>

#include "core/util.h"
#include "fast/quant_loops.h"
#include "reference/quant_common.h"

namespace graphfuse::kernels {

namespace {

// Scale and zero point (slots 1, 2) of a per-tensor (De)QuantizeLinear whose zero point,
// when given, has type `zp_type` (Undefined: uint8 or int8).
bool per_tensor(const KernelCall& c, DType zp_type) {
  const Tensor *s = c.input(1), *z = c.input(2);
  if (!quant::is_scalar_param(s) || s->dtype != DType::Float32 || s->shape.size() > 1) return false;
  if (!z) return true;
  if (!quant::is_scalar_param(z)) return false;
  return zp_type == DType::Undefined ? (z->dtype == DType::UInt8 || z->dtype == DType::Int8) : z->dtype == zp_type;
}

std::vector<Tensor> quantize_linear(const KernelCall& c) {
  const Tensor* x = c.input(0);
  if (!x || x->dtype != DType::Float32 || !x->has_data() || !per_tensor(c, DType::Undefined))
    return (*registry(KernelSet::Reference).find("QuantizeLinear"))(c);
  const Tensor* z = c.input(2);
  const DType out = z ? z->dtype : DType::UInt8;
  const float s = c.input(1)->as<float>()[0];
  const auto zp = static_cast<std::int32_t>(quant::param_z(z, 0));
  Tensor y = alloc_unfilled(out, x->shape);
  if (out == DType::UInt8)
    fast::quantize_floats(x->as<float>(), s, zp, x->num_elements(), mut<std::uint8_t>(y));
  else
    fast::quantize_floats(x->as<float>(), s, zp, x->num_elements(), mut<std::int8_t>(y));
  return {y};
}

std::vector<Tensor> dequantize_linear(const KernelCall& c) {
  const Tensor* x = c.input(0);
  if (!x || (x->dtype != DType::UInt8 && x->dtype != DType::Int8) || !x->has_data() || !per_tensor(c, x->dtype))
    return (*registry(KernelSet::Reference).find("DequantizeLinear"))(c);
  const float s = c.input(1)->as<float>()[0];
  const auto zp = static_cast<std::int32_t>(quant::param_z(c.input(2), 0));
  Tensor y = alloc_unfilled(DType::Float32, x->shape);
  if (x->dtype == DType::UInt8)
    fast::dequantize_bytes(x->as<std::uint8_t>(), s, zp, x->num_elements(), mut<float>(y));
  else
    fast::dequantize_bytes(x->as<std::int8_t>(), s, zp, x->num_elements(), mut<float>(y));
  return {y};
}

}  // namespace

void register_fast_quantize_linear(KernelRegistry& r) {
  r.add("QuantizeLinear", quantize_linear);
  r.add("DequantizeLinear", dequantize_linear);
}

}  // namespace graphfuse::kernels
