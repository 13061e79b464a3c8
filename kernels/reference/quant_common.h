// Integer helpers shared by the reference quantized kernels (quant.cpp: ONNX's own ops;
// quant_ms.cpp: com.microsoft's QLinear ops and QGemm): element access, type ranges,
// round-half-to-even quantization with saturation, per-tensor or per-axis parameters.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "core/util.h"

namespace graphfuse::kernels::quant {

inline bool quantized_type(DType t) { return t == DType::UInt8 || t == DType::Int8 || t == DType::Int32; }

// Element i of an integer tensor (uint8, int8, int32) as int64.
inline std::int64_t int_at(const Tensor& t, std::int64_t i) {
  switch (t.dtype) {
    case DType::UInt8: return t.as<std::uint8_t>()[i];
    case DType::Int8: return t.as<std::int8_t>()[i];
    case DType::Int32: return t.as<std::int32_t>()[i];
    default: fail("expected uint8, int8 or int32, got " + std::string(dtype_name(t.dtype)));
  }
}

inline std::pair<std::int64_t, std::int64_t> type_range(DType t) {
  switch (t) {
    case DType::UInt8: return {0, 255};
    case DType::Int8: return {-128, 127};
    case DType::Int32: return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default: fail("unsupported quantized type " + std::string(dtype_name(t)));
  }
}

inline void store(Tensor& y, std::int64_t i, std::int64_t v) {
  switch (y.dtype) {
    case DType::UInt8: mut<std::uint8_t>(y)[i] = static_cast<std::uint8_t>(v); break;
    case DType::Int8: mut<std::int8_t>(y)[i] = static_cast<std::int8_t>(v); break;
    default: mut<std::int32_t>(y)[i] = static_cast<std::int32_t>(v); break;
  }
}

// round(v) half to even, plus the zero point, saturated to [lo, hi].
inline std::int64_t quantize(float v, std::int64_t zp, std::int64_t lo, std::int64_t hi) {
  const double r = std::nearbyint(static_cast<double>(v)) + static_cast<double>(zp);
  if (std::isnan(r)) return std::clamp<std::int64_t>(zp, lo, hi);
  return static_cast<std::int64_t>(std::clamp(r, static_cast<double>(lo), static_cast<double>(hi)));
}

// A per-tensor or per-row/column quantization parameter of the QLinear ops: one element, or
// `n` of them (1-D) indexed by i.
inline float param_f(const Tensor& t, std::int64_t i, std::string_view what) {
  check(t.dtype == DType::Float32 && t.has_data(), std::string(what) + " must be float32 with data");
  return t.as<float>()[t.num_elements() == 1 ? 0 : i];
}
inline std::int64_t param_z(const Tensor* t, std::int64_t i) {
  if (!t) return 0;
  check(t->has_data(), "a zero point has no data");
  return int_at(*t, t->num_elements() == 1 ? 0 : i);
}
inline void check_param(const Tensor* t, std::int64_t n, std::string_view what) {
  if (!t) return;
  check(t->num_elements() == 1 || (t->shape.size() == 1 && t->shape[0] == n),
        std::string(what) + " must have one element or " + std::to_string(n) + ", has shape " + shape_str(t->shape));
}

}  // namespace graphfuse::kernels::quant
