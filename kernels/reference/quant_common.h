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
#include <tuple>
#include <utility>

#include "core/util.h"
#include "graphfuse/kernels/conv.h"

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
// Called per element in the kernels' loops: the message is built only on failure.
inline float param_f(const Tensor& t, std::int64_t i, std::string_view what) {
  if (t.dtype != DType::Float32 || !t.has_data()) fail(std::string(what) + " must be float32 with data");
  return t.as<float>()[t.num_elements() == 1 ? 0 : i];
}
inline std::int64_t param_z(const Tensor* t, std::int64_t i) {
  if (!t) return 0;
  if (!t->has_data()) fail("a zero point has no data");
  return int_at(*t, t->num_elements() == 1 ? 0 : i);
}
// True for a per-tensor parameter: one element, with data. The fast kernels take their
// vector paths only for such scales and zero points.
inline bool is_scalar_param(const Tensor* t) { return t && t->has_data() && t->num_elements() == 1; }
// Input i of c when it is a per-tensor parameter, else null.
inline const Tensor* scalar_input(const KernelCall& c, std::size_t i) {
  const Tensor* t = c.input(i);
  return is_scalar_param(t) ? t : nullptr;
}
inline void check_param(const Tensor* t, std::int64_t n, std::string_view what) {
  if (!t) return;
  check(t->num_elements() == 1 || (t->shape.size() == 1 && t->shape[0] == n),
        std::string(what) + " must have one element or " + std::to_string(n) + ", has shape " + shape_str(t->shape));
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B)'s
// inputs checked and read, for the reference and the fast kernel alike.
struct QConv {
  ConvParams p;
  DType out = DType::UInt8;
  std::int64_t lo = 0, hi = 0;    // the output type's range
  const Tensor* bias = nullptr;   // int32 [c_out], or null
  float xs = 0, ys = 0;           // x_scale, y_scale
  std::int64_t xz = 0, yz = 0;    // x_zero_point, y_zero_point
  // x_scale * w_scale[m] / y_scale: the requantization of output channel m.
  float scale(const KernelCall& c, std::int64_t m) const { return xs * param_f(c.required(4), m, "w_scale") / ys; }
};

inline QConv read_qconv(const KernelCall& c) {
  const Tensor &x = c.required(0), &w = c.required(3);
  check(x.has_data() && w.has_data() && quantized_type(x.dtype) && quantized_type(w.dtype) &&
            x.dtype != DType::Int32 && w.dtype != DType::Int32,
        "QLinearConv's x and w must be uint8 or int8 with data");
  check(x.shape.size() == 4, "QLinearConv computes 2-D convolutions (rank-4 input), got " + shape_str(x.shape));
  QConv q;
  q.p = conv_params_onnx(c.attrs, x.shape, w.shape);
  q.p.finalize();
  const Tensor* yz = c.input(7);
  q.out = yz ? yz->dtype : DType::UInt8;
  check(q.out != DType::Int32, "y_zero_point must be uint8 or int8");
  std::tie(q.lo, q.hi) = type_range(q.out);
  check_param(c.input(4), q.p.c_out, "w_scale");
  check_param(c.input(5), q.p.c_out, "w_zero_point");
  q.bias = c.input(8);
  check(!q.bias || (q.bias->dtype == DType::Int32 && q.bias->num_elements() == q.p.c_out && q.bias->has_data()),
        "QLinearConv's bias must be int32 with one element per output channel");
  q.xs = param_f(c.required(1), 0, "x_scale");
  q.ys = param_f(c.required(6), 0, "y_scale");
  q.xz = param_z(c.input(2), 0);
  q.yz = param_z(yz, 0);
  return q;
}

}  // namespace graphfuse::kernels::quant
