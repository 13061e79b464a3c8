// Reference quantized kernels with ONNX's integer semantics: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, QLinearConv, QLinearMatMul, MatMulInteger and com.microsoft's
// MatMulIntegerToFloat. Quantizing rounds half to even (std::nearbyint under the default
// rounding mode) and saturates to the output type; zero points default to 0 (uint8);
// scales and zero points are per tensor or, along `axis`, per channel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "core/int16_gemm.h"
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

// The rows x cols matrix of 8-bit t at element offset `off`, minus its zero point (per row
// or per column, or `z_default` without one), as int16, transposed (cols x rows) when asked:
// typed once per matrix, and the transpose in 64 x 64 blocks so that neither side strides
// through memory element by element.
template <class T>
void centre_typed(const T* x, std::int64_t rows, std::int64_t cols, const std::vector<std::int16_t>& z,
                  bool z_per_row, bool transpose, std::vector<std::int16_t>& out) {
  auto zp = [&](std::int64_t r, std::int64_t c) { return z.size() == 1 ? z[0] : z[static_cast<std::size_t>(z_per_row ? r : c)]; };
  if (!transpose) {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        out[static_cast<std::size_t>(r * cols + c)] = static_cast<std::int16_t>(x[r * cols + c] - zp(r, c));
    return;
  }
  constexpr std::int64_t B = 64;
  for (std::int64_t r0 = 0; r0 < rows; r0 += B)
    for (std::int64_t c0 = 0; c0 < cols; c0 += B)
      for (std::int64_t c = c0; c < std::min(c0 + B, cols); ++c)
        for (std::int64_t r = r0; r < std::min(r0 + B, rows); ++r)
          out[static_cast<std::size_t>(c * rows + r)] = static_cast<std::int16_t>(x[r * cols + c] - zp(r, c));
}

void centre_int16(const Tensor& t, std::int64_t off, std::int64_t rows, std::int64_t cols, const Tensor* zt,
                  std::int64_t z_default, bool z_per_row, bool transpose, std::vector<std::int16_t>& out) {
  std::vector<std::int16_t> z;
  if (!zt) z.push_back(static_cast<std::int16_t>(z_default));
  else if (zt->num_elements() == 1) z.push_back(static_cast<std::int16_t>(param_z(zt, 0)));
  else
    for (std::int64_t i = 0; i < (z_per_row ? rows : cols); ++i) z.push_back(static_cast<std::int16_t>(param_z(zt, i)));
  if (t.dtype == DType::UInt8) return centre_typed(t.as<std::uint8_t>() + off, rows, cols, z, z_per_row, transpose, out);
  centre_typed(t.as<std::int8_t>() + off, rows, cols, z, z_per_row, transpose, out);
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
  const auto byte = [](DType d) { return d == DType::UInt8 || d == DType::Int8; };
  const bool byte_operands = byte(a.dtype) && byte(b.dtype);
  std::vector<std::int32_t> acc32(byte_operands ? static_cast<std::size_t>(M * N) : 0);
  std::vector<std::int16_t> a16(byte_operands ? static_cast<std::size_t>(M * K) : 0),
      bt16(byte_operands ? static_cast<std::size_t>(N * K) : 0);
  for (std::int64_t t = 0; t < nb; ++t) {
    std::int64_t ao = 0, bo = 0, rest = t;
    for (std::size_t d = batch.size(); d-- > 0;) {
      const std::int64_t i = rest % batch[d];
      rest /= batch[d];
      ao += i * as[d];
      bo += i * bs[d];
    }
    if (byte_operands && K <= kMaxInt16GemmDepth) {
      // 8-bit operands: centred into int16 (A as is, B transposed) and multiplied exactly
      // in int32 (int16_gemm.h): the same integers as the loop below, without its per-element
      // dtype dispatch (a BERT layer's QLinearMatMuls took 1.8 s that way).
      centre_int16(a, ao * M * K, M, K, az, az_default, /*zero point per row*/ true, /*transpose*/ false, a16);
      centre_int16(b, bo * K * N, K, N, bz, 0, /*zero point per row*/ false, /*transpose*/ true, bt16);
      int16_gemm_nt(a16.data(), bt16.data(), M, N, K, acc32.data());
      for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) f((t * M + i) * N + j, acc32[static_cast<std::size_t>(i * N + j)], j);
      continue;
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
  const std::int64_t N = b.shape.empty() ? 1 : b.shape.back();
  check_param(&c.required(4), N, "b_scale");
  const float as = param_f(c.required(1), 0, "a_scale"), ys = param_f(c.required(6), 0, "y_scale");
  const std::int64_t yzv = param_z(yz, 0);
  std::vector<float> scale(static_cast<std::size_t>(std::max<std::int64_t>(N, 0)));
  for (std::int64_t j = 0; j < N; ++j) scale[static_cast<std::size_t>(j)] = as * param_f(c.required(4), j, "b_scale") / ys;
  // The output is written as the products arrive; its shape is known once they are.
  std::vector<std::int64_t> q;
  Shape ysh = integer_matmul(a, b, 0, c.input(2), c.input(5), [&](std::int64_t i, std::int64_t acc, std::int64_t j) {
    if (static_cast<std::size_t>(i) >= q.size()) q.resize(static_cast<std::size_t>(i) + 1);
    q[static_cast<std::size_t>(i)] = quantize(static_cast<float>(acc) * scale[static_cast<std::size_t>(j)], yzv, lo, hi);
  });
  Tensor y = alloc(out, ysh);
  for (std::size_t i = 0; i < q.size(); ++i) store(y, static_cast<std::int64_t>(i), q[i]);
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
