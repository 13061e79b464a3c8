// Reference quantized kernels with ONNX's integer semantics: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, QLinearConv, QLinearMatMul, MatMulInteger and com.microsoft's
// MatMulIntegerToFloat. Quantizing rounds half to even (std::nearbyint under the default
// rounding mode) and saturates to the output type; zero points default to 0 (uint8);
// scales and zero points are per tensor or, along `axis`, per channel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "core/util.h"
#include "reference/quant_common.h"
#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels {

namespace {

using namespace quant;

// Scale and zero point of a (De)QuantizeLinear: per tensor (one element) or per channel along
// `axis` of x (1-D of x's dim there). `channels` is 1 for per tensor.
struct QuantParams {
  const Tensor* scale;
  const Tensor* zp;  // null: 0
  std::int64_t outer = 1, channels = 1, inner = 1;
  bool per_channel = false;
  float s(std::int64_t c) const { return scale->as<float>()[per_channel ? c : 0]; }
  std::int64_t z(std::int64_t c) const { return zp ? int_at(*zp, per_channel && zp->num_elements() > 1 ? c : 0) : 0; }
};

QuantParams quant_params(const KernelCall& c, const Tensor& x) {
  QuantParams p{&c.required(1), c.input(2)};
  check(p.scale->dtype == DType::Float32 && p.scale->has_data(), "the scale must be a float32 tensor with data");
  check(!p.zp || (p.zp->has_data() && (p.zp->num_elements() == p.scale->num_elements() || p.zp->num_elements() == 1)),
        "the zero point must have data and one element or as many as the scale");
  const std::int64_t n = p.scale->num_elements();
  if (n == 1 && p.scale->shape.size() <= 1) return p;
  check(p.scale->shape.size() == 1, "a per-axis scale must be 1-D, has shape " + shape_str(p.scale->shape));
  const std::int64_t rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", 1), rank);
  check(x.shape[static_cast<std::size_t>(axis)] == n,
        "the scale has " + std::to_string(n) + " elements, the input's axis " + std::to_string(axis) +
            " has " + std::to_string(x.shape[static_cast<std::size_t>(axis)]));
  p.per_channel = true;
  p.channels = n;
  for (std::int64_t i = 0; i < axis; ++i) p.outer *= x.shape[static_cast<std::size_t>(i)];
  for (std::int64_t i = axis + 1; i < rank; ++i) p.inner *= x.shape[static_cast<std::size_t>(i)];
  return p;
}

std::vector<Tensor> quantize_linear(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const float* xp = f32(x, "QuantizeLinear's input");
  QuantParams p = quant_params(c, x);
  const DType out = p.zp ? p.zp->dtype : DType::UInt8;
  // int32 is graphfuse's own extension (ONNX's QuantizeLinear stops at 8 bits): rules quantize
  // a float bias with it, and constant folding leaves only the int32 constant in the graph.
  check(out == DType::UInt8 || out == DType::Int8 || out == DType::Int32, "the zero point must be uint8, int8 or int32");
  const auto [lo, hi] = type_range(out);
  Tensor y = alloc(out, x.shape);
  const std::int64_t inner = p.per_channel ? p.inner : x.num_elements();
  for (std::int64_t o = 0, i = 0; o < p.outer; ++o)
    for (std::int64_t ch = 0; ch < p.channels; ++ch) {
      const float s = p.s(ch);
      const std::int64_t z = p.z(ch);
      for (std::int64_t k = 0; k < inner; ++k, ++i) store(y, i, quantize(xp[i] / s, z, lo, hi));
    }
  return {y};
}

std::vector<Tensor> dequantize_linear(const KernelCall& c) {
  const Tensor& x = c.required(0);
  check(x.has_data() && quantized_type(x.dtype), "DequantizeLinear's input must be uint8, int8 or int32 with data");
  QuantParams p = quant_params(c, x);
  check(!p.zp || p.zp->dtype == x.dtype, "the zero point's type must be the input's");
  Tensor y = alloc_f32(x.shape);
  float* yp = mut<float>(y);
  const std::int64_t inner = p.per_channel ? p.inner : x.num_elements();
  for (std::int64_t o = 0, i = 0; o < p.outer; ++o)
    for (std::int64_t ch = 0; ch < p.channels; ++ch) {
      const float s = p.s(ch);
      const std::int64_t z = p.z(ch);
      for (std::int64_t k = 0; k < inner; ++k, ++i) yp[i] = static_cast<float>(int_at(x, i) - z) * s;
    }
  return {y};
}

// y, y_scale, y_zero_point = DynamicQuantizeLinear(x): uint8 over [min(0, min x), max(0, max x)].
std::vector<Tensor> dynamic_quantize_linear(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const float* xp = f32(x, "DynamicQuantizeLinear's input");
  const std::int64_t n = x.num_elements();
  float lo = 0.0f, hi = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) lo = std::min(lo, xp[i]), hi = std::max(hi, xp[i]);
  const float scale = (hi - lo) / 255.0f;
  const std::int64_t zp = scale == 0.0f ? 0 : quantize((0.0f - lo) / scale, 0, 0, 255);
  Tensor y = alloc(DType::UInt8, x.shape);
  for (std::int64_t i = 0; i < n; ++i) store(y, i, scale == 0.0f ? zp : quantize(xp[i] / scale, zp, 0, 255));
  Tensor s = Tensor::from_floats({}, {scale});
  Tensor z = alloc(DType::UInt8, {});
  store(z, 0, zp);
  return {y, s, z};
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B):
// int32 accumulation of (x - x_zp) * (w - w_zp[m]) + B[m], requantized with
// x_scale * w_scale[m] / y_scale.
std::vector<Tensor> qlinear_conv(const KernelCall& c) {
  const Tensor &x = c.required(0), &w = c.required(3);
  const QConv q = read_qconv(c);
  const ConvParams& p = q.p;
  Tensor y = alloc(q.out, p.output_shape());
  const std::int64_t cin_g = p.c_in / p.group, cout_g = p.c_out / p.group;
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t m = 0; m < p.c_out; ++m) {
      const std::int64_t g = m / cout_g, wz = param_z(c.input(5), m);
      const float scale = q.scale(c, m);
      for (std::int64_t oh = 0; oh < p.out_h; ++oh)
        for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
          std::int64_t acc = q.bias ? q.bias->as<std::int32_t>()[m] : 0;
          for (std::int64_t ci = 0; ci < cin_g; ++ci)
            for (std::int64_t kh = 0; kh < p.kh; ++kh) {
              const std::int64_t ih = oh * p.stride_h - p.pad_t + kh * p.dil_h;
              if (ih < 0 || ih >= p.h) continue;
              for (std::int64_t kw = 0; kw < p.kw; ++kw) {
                const std::int64_t iw = ow * p.stride_w - p.pad_l + kw * p.dil_w;
                if (iw < 0 || iw >= p.w) continue;
                const std::int64_t xi = ((n * p.c_in + g * cin_g + ci) * p.h + ih) * p.w + iw;
                const std::int64_t wi = ((m * cin_g + ci) * p.kh + kh) * p.kw + kw;
                acc += (int_at(x, xi) - q.xz) * (int_at(w, wi) - wz);
              }
            }
          const std::int64_t yi = ((n * p.c_out + m) * p.out_h + oh) * p.out_w + ow;
          store(y, yi, quantize(static_cast<float>(acc) * scale, q.yz, q.lo, q.hi));
        }
    }
  return {y};
}

// The int32 product of two quantized matrices with broadcast batch dims; calls f(index, acc, n)
// for each output element (n its column).
template <class F>
Shape integer_matmul(const Tensor& a, const Tensor& b, std::int64_t az_default, const Tensor* az,
                     const Tensor* bz, F&& f) {
  check(a.has_data() && b.has_data() && quantized_type(a.dtype) && quantized_type(b.dtype),
        "the operands must be uint8 or int8 tensors with data");
  check(a.shape.size() >= 2 && b.shape.size() >= 2, "the operands must have rank 2 or more");
  const std::int64_t M = a.shape[a.shape.size() - 2], K = a.shape.back(), N = b.shape.back();
  check(b.shape[b.shape.size() - 2] == K, "inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  const Shape ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch = broadcast_shapes(ab, bb);
  const auto as = broadcast_strides(ab, batch), bs = broadcast_strides(bb, batch);
  check_param(az, M, "a_zero_point");
  check_param(bz, N, "b_zero_point");
  const std::int64_t nb = numel(batch);
  for (std::int64_t t = 0; t < nb; ++t) {
    std::int64_t ao = 0, bo = 0, rest = t;
    for (std::size_t d = batch.size(); d-- > 0;) {
      const std::int64_t i = rest % batch[d];
      rest /= batch[d];
      ao += i * as[d];
      bo += i * bs[d];
    }
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        const std::int64_t za = az ? param_z(az, i) : az_default, zb = param_z(bz, j);
        std::int64_t acc = 0;
        for (std::int64_t k = 0; k < K; ++k)
          acc += (int_at(a, (ao * M + i) * K + k) - za) * (int_at(b, (bo * K + k) * N + j) - zb);
        f((t * M + i) * N + j, acc, j);
      }
  }
  batch.push_back(M);
  batch.push_back(N);
  return batch;
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point).
std::vector<Tensor> qlinear_matmul(const KernelCall& c) {
  const Tensor &a = c.required(0), &b = c.required(3);
  const Tensor* yz = c.input(7);
  const DType out = yz ? yz->dtype : DType::UInt8;
  check(out != DType::Int32, "y_zero_point must be uint8 or int8");
  const auto [lo, hi] = type_range(out);
  check(c.required(1).num_elements() == 1, "a_scale must be a scalar");
  check_param(&c.required(4), b.shape.empty() ? 1 : b.shape.back(), "b_scale");
  const float as = param_f(c.required(1), 0, "a_scale"), ys = param_f(c.required(6), 0, "y_scale");
  const std::int64_t yzv = param_z(yz, 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> accs;
  Shape ysh = integer_matmul(a, b, 0, c.input(2), c.input(5), [&](std::int64_t i, std::int64_t acc, std::int64_t j) {
    accs.emplace_back(i, acc);
    (void)j;
  });
  Tensor y = alloc(out, ysh);
  const std::int64_t N = ysh.back();
  for (const auto& [i, acc] : accs) {
    const float scale = as * param_f(c.required(4), i % N, "b_scale") / ys;
    store(y, i, quantize(static_cast<float>(acc) * scale, yzv, lo, hi));
  }
  return {y};
}

// MatMulInteger(A, B, a_zero_point, b_zero_point) -> int32.
std::vector<Tensor> matmul_integer(const KernelCall& c) {
  std::vector<std::pair<std::int64_t, std::int64_t>> accs;
  Shape ysh = integer_matmul(c.required(0), c.required(1), 0, c.input(2), c.input(3),
                             [&](std::int64_t i, std::int64_t acc, std::int64_t) { accs.emplace_back(i, acc); });
  Tensor y = alloc(DType::Int32, ysh);
  for (const auto& [i, acc] : accs) mut<std::int32_t>(y)[i] = static_cast<std::int32_t>(acc);
  return {y};
}

// com.microsoft.MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias):
// float32 (A - a_zp)(B - b_zp) * a_scale * b_scale[n] + bias[n].
std::vector<Tensor> matmul_integer_to_float(const KernelCall& c) {
  const Tensor &as = c.required(2), &bs = c.required(3);
  check(as.num_elements() == 1, "a_scale must be a scalar");
  const Tensor* bias = c.input(6);
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> accs;
  Shape ysh = integer_matmul(c.required(0), c.required(1), 0, c.input(4), c.input(5),
                             [&](std::int64_t i, std::int64_t acc, std::int64_t j) { accs.emplace_back(i, acc, j); });
  check_param(&bs, ysh.back(), "b_scale");
  check(!bias || (bias->dtype == DType::Float32 && bias->num_elements() == ysh.back() && bias->has_data()),
        "the bias must be float32 with one element per output column");
  Tensor y = alloc_f32(ysh);
  const float a_s = param_f(as, 0, "a_scale");
  for (const auto& [i, acc, j] : accs) {
    float v = static_cast<float>(acc) * (a_s * param_f(bs, j, "b_scale"));
    if (bias) v += bias->as<float>()[j];
    mut<float>(y)[i] = v;
  }
  return {y};
}

}  // namespace

void register_reference_quant(KernelRegistry& r) {
  r.add("QuantizeLinear", quantize_linear);
  r.add("DequantizeLinear", dequantize_linear);
  r.add("DynamicQuantizeLinear", dynamic_quantize_linear);
  r.add("QLinearConv", qlinear_conv);
  r.add("QLinearMatMul", qlinear_matmul);
  r.add("MatMulInteger", matmul_integer);
  r.add("com.microsoft.MatMulIntegerToFloat", matmul_integer_to_float);
}

}  // namespace graphfuse::kernels
