// Pad (constant, reflect, edge, wrap; any dtype) and Resize (nearest and linear, float32):
// the reference kernels the layout rules need to be verified numerically (rules/onnx/
// layout.yaml moves Transposes through both). Written for clarity: one pass over the output,
// each output coordinate mapped to input coordinates per axis.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/util.h"

namespace graphfuse::kernels {

namespace {

// Pads and output sizes beyond this are refused before any arithmetic (as the window
// attributes of the conv family are): a file can claim any int64.
constexpr std::int64_t kMaxExtent = std::numeric_limits<std::int32_t>::max();

enum class PadMode { Constant, Reflect, Edge, Wrap };

PadMode pad_mode(const std::string& m) {
  if (m == "constant") return PadMode::Constant;
  if (m == "reflect") return PadMode::Reflect;
  if (m == "edge") return PadMode::Edge;
  if (m == "wrap") return PadMode::Wrap;
  fail("Pad mode '" + m + "' is not one of constant, reflect, edge, wrap");
}

// Input index for output index `o` of an axis of length n padded by `begin` in front, or -1
// where the constant goes.
std::int64_t pad_source(std::int64_t o, std::int64_t begin, std::int64_t n, PadMode mode) {
  std::int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return i < 0 ? 0 : n - 1;
    case PadMode::Wrap: return ((i % n) + n) % n;
    case PadMode::Reflect: {
      if (n == 1) return 0;
      const std::int64_t period = 2 * (n - 1);
      i = ((i % period) + period) % period;
      return i < n ? i : period - i;
    }
  }
  return -1;
}

// Pad (opset >= 11: pads, constant_value?, axes? inputs; opset 2: pads, value attributes).
std::vector<Tensor> pad(const KernelCall& c) {
  const Tensor& x = c.required(0);
  check(x.has_data(), "input has no data");
  const std::size_t es = dtype_size(x.dtype);
  check(es > 0, "unsupported element type " + std::string(dtype_name(x.dtype)));
  check(x.data->size() / es >= static_cast<std::size_t>(checked_numel(x.shape, "Pad input")),
        "input data is shorter than its shape");
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const bool inputs = c.input(1) != nullptr;
  const auto spec = inputs ? int_values(c.required(1), "pads") : attr_ints(c.attrs, "pads");
  std::vector<std::int64_t> axes;
  if (const Tensor* a = c.input(3)) {
    for (std::int64_t v : int_values(*a, "axes")) axes.push_back(normalize_axis(v, rank));
  } else {
    for (std::int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const auto na = static_cast<std::int64_t>(axes.size());
  check(static_cast<std::int64_t>(spec.size()) == 2 * na,
        "Pad needs 2 pads per axis: " + std::to_string(spec.size()) + " for " + std::to_string(na) + " axes");
  std::vector<std::int64_t> begin(rank, 0), end(rank, 0);
  for (std::int64_t k = 0; k < na; ++k) {
    for (std::int64_t v : {spec[k], spec[k + na]})
      check(v >= -kMaxExtent && v <= kMaxExtent, "Pad pads must be within +-2^31: " + std::to_string(v));
    begin[axes[k]] = spec[k];
    end[axes[k]] = spec[k + na];
  }
  const PadMode mode = pad_mode(attr_string(c.attrs, "mode", "constant"));
  Shape out(rank);
  for (std::int64_t d = 0; d < rank; ++d) {
    out[d] = x.shape[d] + begin[d] + end[d];
    check(out[d] >= 0, "Pad gives axis " + std::to_string(d) + " a negative size");
    check(out[d] == 0 || x.shape[d] > 0 || mode == PadMode::Constant,
          "Pad mode '" + attr_string(c.attrs, "mode", "constant") + "' cannot pad an empty axis");
  }
  check_tensor_size(x.dtype, out, "Pad output");
  // The constant: the constant_value input (x's type) or the value attribute, else zero.
  std::vector<char> fill(es, 0);
  if (const Tensor* v = c.input(2)) {
    check(v->dtype == x.dtype && v->num_elements() == 1 && v->has_data() && v->data->size() >= es,
          "Pad constant_value must be one element of the input's type");
    std::memcpy(fill.data(), v->data->data(), es);
  } else if (!inputs && x.dtype == DType::Float32) {
    const float f = attr_float(c.attrs, "value", 0.0f);
    std::memcpy(fill.data(), &f, es);
  }
  // Per axis, the input index of each output index (-1: the constant).
  std::vector<std::vector<std::int64_t>> src(rank);
  std::vector<std::int64_t> in_stride(rank, 1);
  for (std::int64_t d = rank - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * x.shape[d];
  for (std::int64_t d = 0; d < rank; ++d) {
    src[d].resize(out[d]);
    for (std::int64_t o = 0; o < out[d]; ++o) src[d][o] = pad_source(o, begin[d], x.shape[d], mode);
  }
  Tensor y = alloc(x.dtype, out);
  const std::int64_t n = numel(out);
  if (n == 0) return {y};
  char* dst = mut<char>(y);
  const char* from = x.data->data();
  std::vector<std::int64_t> idx(rank, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t off = 0;
    bool constant = false;
    for (std::int64_t d = 0; d < rank && !constant; ++d) {
      const std::int64_t s = src[d][idx[d]];
      constant = s < 0;
      off += s * in_stride[d];
    }
    std::memcpy(dst + i * es, constant ? fill.data() : from + off * es, es);
    for (std::int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return {y};
}

// The input coordinate an output coordinate maps to (ONNX Resize's
// coordinate_transformation_mode), before rounding or interpolation. `resized` is the
// axis's resized length before rounding: in_len * scale when scales are given (ONNX's
// reference and expected outputs divide by it in align_corners, so a 0.6 downsample of 4
// spans 2.4, not the 2 output elements), the size itself when sizes are.
double source_coordinate(const std::string& mode, double o, double scale, std::int64_t out_len, double resized,
                         std::int64_t in_len) {
  if (mode == "half_pixel") return (o + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out_len > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (mode == "asymmetric") return o / scale;
  if (mode == "tf_half_pixel_for_nn") return (o + 0.5) / scale;
  if (mode == "align_corners")
    return resized == 1.0 ? 0.0 : o * static_cast<double>(in_len - 1) / (resized - 1.0);
  if (mode == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out_len) / (scale * static_cast<double>(in_len));
    const double center = static_cast<double>(in_len) / 2.0;
    return center * (1.0 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  fail("Resize coordinate_transformation_mode '" + mode + "' is not supported by the reference kernels");
}

std::int64_t nearest_index(const std::string& mode, double v) {
  double r;
  if (mode == "floor") r = std::floor(v);
  else if (mode == "ceil") r = std::ceil(v);
  else if (mode == "round_prefer_floor") r = v == std::floor(v) + 0.5 ? std::floor(v) : std::round(v);
  else if (mode == "round_prefer_ceil") r = v == std::floor(v) + 0.5 ? std::ceil(v) : std::round(v);
  else fail("Resize nearest_mode '" + mode + "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
  return static_cast<std::int64_t>(r);
}

// Resize (opset >= 11: X, roi?, scales?, sizes?; opset 10: X, scales), nearest or linear.
// Interpolation is separable: each output element is the weighted sum over the 2^rank corners
// of the cell its input coordinates fall in (nearest: one corner of weight 1).
std::vector<Tensor> resize(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const float* xp = f32(x, "Resize input");
  check(x.data->size() / sizeof(float) >= static_cast<std::size_t>(checked_numel(x.shape, "Resize input")),
        "input data is shorter than its shape");
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  check(rank > 0, "Resize needs an input of rank >= 1");
  check(!has_attr(c.attrs, "axes"), "Resize with an axes attribute is not supported by the reference kernels");
  check(attr_int(c.attrs, "antialias", 0) == 0, "Resize with antialias is not supported by the reference kernels");
  check(attr_string(c.attrs, "keep_aspect_ratio_policy", "stretch") == "stretch",
        "Resize keep_aspect_ratio_policy other than stretch is not supported by the reference kernels");
  const std::string mode = attr_string(c.attrs, "mode", "nearest");
  check(mode == "nearest" || mode == "linear", "Resize mode '" + mode + "' is not supported by the reference kernels");
  // Opset 10 has (X, scales); later opsets (X, roi, scales, sizes), either of the last two.
  const bool v10 = c.inputs.size() == 2;
  const std::string coord = attr_string(c.attrs, "coordinate_transformation_mode", v10 ? "asymmetric" : "half_pixel");
  const std::string nearest = attr_string(c.attrs, "nearest_mode", "round_prefer_floor");
  const Tensor* scales_t = c.input(v10 ? 1 : 2);
  const Tensor* sizes_t = v10 ? nullptr : c.input(3);
  if (scales_t && scales_t->num_elements() == 0) scales_t = nullptr;  // an empty scales with sizes
  check((scales_t != nullptr) != (sizes_t != nullptr), "Resize needs exactly one of scales and sizes");
  Shape out(rank);
  std::vector<double> scale(rank), resized(rank);
  if (scales_t) {
    const float* s = f32(*scales_t, "Resize scales");
    check(scales_t->num_elements() == rank, "Resize scales must have one value per input axis");
    for (std::int64_t d = 0; d < rank; ++d) {
      check(std::isfinite(s[d]) && s[d] > 0.0f, "Resize scales must be positive and finite");
      const double o = std::floor(static_cast<double>(x.shape[d]) * s[d]);
      check(o <= static_cast<double>(kMaxExtent), "Resize output axis is too large");
      out[d] = static_cast<std::int64_t>(o);
      scale[d] = s[d];
      resized[d] = static_cast<double>(x.shape[d]) * s[d];
    }
  } else {
    const auto sz = int_values(*sizes_t, "sizes");
    check(static_cast<std::int64_t>(sz.size()) == rank, "Resize sizes must have one value per input axis");
    for (std::int64_t d = 0; d < rank; ++d) {
      check(sz[d] >= 0 && sz[d] <= kMaxExtent, "Resize sizes must be within [0, 2^31)");
      out[d] = sz[d];
      resized[d] = static_cast<double>(sz[d]);
      check(x.shape[d] > 0 || sz[d] == 0, "Resize cannot fill an axis from an empty one");
      scale[d] = x.shape[d] > 0 ? static_cast<double>(sz[d]) / static_cast<double>(x.shape[d]) : 1.0;
    }
  }
  check_tensor_size(DType::Float32, out, "Resize output");
  // Per axis and output index: the two input indices and the weight of the second.
  std::vector<std::vector<std::int64_t>> lo(rank), hi(rank);
  std::vector<std::vector<double>> w(rank);
  for (std::int64_t d = 0; d < rank; ++d) {
    lo[d].resize(out[d]);
    hi[d].resize(out[d]);
    w[d].resize(out[d]);
    const std::int64_t n = x.shape[d];
    for (std::int64_t o = 0; o < out[d]; ++o) {
      const double v = source_coordinate(coord, static_cast<double>(o), scale[d], out[d], resized[d], n);
      if (mode == "nearest") {
        const std::int64_t i = std::clamp<std::int64_t>(nearest_index(nearest, v), 0, n - 1);
        lo[d][o] = hi[d][o] = i;
        w[d][o] = 0.0;
      } else {
        const double cv = std::clamp(v, 0.0, static_cast<double>(n - 1));
        const auto i0 = static_cast<std::int64_t>(std::floor(cv));
        lo[d][o] = i0;
        hi[d][o] = std::min(i0 + 1, n - 1);
        w[d][o] = cv - static_cast<double>(i0);
      }
    }
  }
  std::vector<std::int64_t> in_stride(rank, 1);
  for (std::int64_t d = rank - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * x.shape[d];
  Tensor y = alloc_f32(out);
  const std::int64_t total = numel(out);
  if (total == 0) return {y};
  float* yp = mut<float>(y);
  std::vector<std::int64_t> idx(rank, 0);
  const std::uint64_t corners = rank < 63 ? std::uint64_t{1} << rank : 0;
  check(corners > 0 && rank <= 8, "Resize supports inputs of rank <= 8");
  for (std::int64_t i = 0; i < total; ++i) {
    double acc = 0.0;
    for (std::uint64_t k = 0; k < corners; ++k) {
      double weight = 1.0;
      std::int64_t off = 0;
      for (std::int64_t d = 0; d < rank; ++d) {
        const bool upper = (k >> d) & 1U;
        const double wd = w[d][idx[d]];
        weight *= upper ? wd : 1.0 - wd;
        off += (upper ? hi[d][idx[d]] : lo[d][idx[d]]) * in_stride[d];
      }
      if (weight != 0.0) acc += weight * static_cast<double>(xp[off]);
    }
    yp[i] = static_cast<float>(acc);
    for (std::int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return {y};
}

}  // namespace

void register_reference_pad_resize(KernelRegistry& r) {
  r.add("Pad", pad);
  r.add("Resize", resize);
}

}  // namespace graphfuse::kernels
