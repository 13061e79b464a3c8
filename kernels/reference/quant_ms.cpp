// Reference kernels of com.microsoft's quantized ops that rules/onnx/qdq_ops.yaml emits, as
// ONNX Runtime's CPU provider defines them: QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearSoftmax, QLinearConcat and QGemm.
//
// The element-wise, pooling, softmax and concat ops are defined as "dequantize the inputs,
// run the float op, quantize the output": each kernel does exactly that with the reference
// DequantizeLinear, float op and QuantizeLinear kernels, so the fused node computes what
// the DequantizeLinear -> op -> QuantizeLinear unit it replaces computes, bit for bit
// (rounding half to even, saturation, zero points as ONNX defines them). ONNX Runtime's own
// kernels use lookup tables or fixed-point requantization that may differ by one step.
// QGemm accumulates in integers like QLinearMatMul and requantizes once.
#include <cstdint>
#include <string>
#include <vector>

#include "core/util.h"
#include "reference/quant_common.h"

namespace graphfuse::kernels {

namespace {

using namespace quant;

// Runs reference kernel `op` on `inputs` (null = absent).
std::vector<Tensor> call(std::string_view op, std::vector<const Tensor*> inputs, const Attributes& attrs = {}) {
  const KernelFn* fn = registry(KernelSet::Reference).find(op);
  check(fn != nullptr, "no reference kernel for " + std::string(op));
  KernelCall c(op, op, attrs);
  c.inputs = std::move(inputs);
  return (*fn)(c);
}

// The com.microsoft QLinear ops take per-tensor parameters only.
void check_scalar(const KernelCall& c, std::size_t i, std::string_view what) {
  const Tensor* t = c.input(i);
  check(!t || (t->has_data() && t->num_elements() == 1), std::string(what) + " must be a scalar with data");
}

// Input `x` (slot i) dequantized with the scale and zero point in slots i+1, i+2.
Tensor dequantized(const KernelCall& c, std::size_t i, std::string_view what) {
  const Tensor& x = c.required(i);
  check(x.has_data() && (x.dtype == DType::UInt8 || x.dtype == DType::Int8),
        std::string(what) + " must be uint8 or int8 with data");
  check_scalar(c, i + 1, std::string(what) + "'s scale");
  check_scalar(c, i + 2, std::string(what) + "'s zero point");
  const Tensor* z = c.input(i + 2);
  check(!z || z->dtype == x.dtype, std::string(what) + "'s zero point must have its type");
  return call("DequantizeLinear", {&x, &c.required(i + 1), z}).at(0);
}

// `y` quantized with the scale and zero point in slots i, i+1; without a zero point the
// output has the type `like` (the first input's, as ONNX Runtime's kernels do).
Tensor quantized(const KernelCall& c, const Tensor& y, std::size_t i, DType like) {
  check_scalar(c, i, "the output scale");
  check_scalar(c, i + 1, "the output zero point");
  const Tensor* z = c.input(i + 1);
  Tensor zero;
  if (!z) {
    zero = alloc(like, {});
    z = &zero;
  }
  check(z->dtype == DType::UInt8 || z->dtype == DType::Int8, "the output zero point must be uint8 or int8");
  return call("QuantizeLinear", {&y, &c.required(i), z}).at(0);
}

// X, X_scale, X_zero_point, Y_scale, Y_zero_point -> float op -> Y.
KernelFn unary(std::string float_op, std::vector<std::string> keep_attrs) {
  return [float_op, keep_attrs](const KernelCall& c) {
    const Tensor x = dequantized(c, 0, "X");
    Attributes a;
    for (const auto& name : keep_attrs)
      if (const AttrValue* v = c.attrs.find(name)) a.set(name, *v);
    const Tensor y = call(float_op, {&x}, a).at(0);
    return std::vector<Tensor>{quantized(c, y, 3, c.required(0).dtype)};
  };
}

// A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point.
KernelFn binary(std::string float_op) {
  return [float_op](const KernelCall& c) {
    const Tensor a = dequantized(c, 0, "A"), b = dequantized(c, 3, "B");
    check(c.required(0).dtype == c.required(3).dtype, "A and B must have one type");
    const Tensor y = call(float_op, {&a, &b}).at(0);
    return std::vector<Tensor>{quantized(c, y, 6, c.required(0).dtype)};
  };
}

std::vector<Tensor> qlinear_global_average_pool(const KernelCall& c) {
  check(attr_int(c.attrs, "channels_last", 0) == 0, "channels_last = 1 is not supported");
  const Tensor x = dequantized(c, 0, "X");
  const Tensor y = call("GlobalAveragePool", {&x}).at(0);
  return {quantized(c, y, 3, c.required(0).dtype)};
}

// QLinearSoftmax {axis, opset}: opset 13 and later normalize along `axis`; earlier opsets
// over the input flattened to 2-D at `axis`.
std::vector<Tensor> qlinear_softmax(const KernelCall& c) {
  check(has_attr(c.attrs, "opset"), "QLinearSoftmax needs its 'opset' attribute");
  const std::int64_t opset = attr_int(c.attrs, "opset", 13);
  const Tensor x = dequantized(c, 0, "X");
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  check(rank > 0, "QLinearSoftmax needs an input of rank 1 or more");
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", opset >= 13 ? -1 : 1), rank);
  Attributes a;
  Tensor y;
  if (opset >= 13) {
    a.set("axis", AttrValue(axis));
    y = call("Softmax", {&x}, a).at(0);
  } else {
    const Shape& s = x.shape;
    const Tensor flat = reshaped(x, {numel(Shape(s.begin(), s.begin() + axis)), numel(Shape(s.begin() + axis, s.end()))});
    a.set("axis", AttrValue(std::int64_t{1}));
    y = reshaped(call("Softmax", {&flat}, a).at(0), s);
  }
  return {quantized(c, y, 3, c.required(0).dtype)};
}

// QLinearConcat(Y_scale, Y_zero_point, X1, X1_scale, X1_zero_point, ...) {axis}.
std::vector<Tensor> qlinear_concat(const KernelCall& c) {
  check(c.inputs.size() >= 5 && (c.inputs.size() - 2) % 3 == 0,
        "QLinearConcat takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triplets");
  std::vector<Tensor> xs;
  for (std::size_t i = 2; i < c.inputs.size(); i += 3) xs.push_back(dequantized(c, i, "X" + std::to_string(i / 3 + 1)));
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : xs) ptrs.push_back(&t);
  Attributes a;
  a.set("axis", AttrValue(attr_int(c.attrs, "axis", 0)));
  const Tensor y = call("Concat", ptrs, a).at(0);
  return {quantized(c, y, 0, c.required(2).dtype)};
}

// QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point)
// {alpha, transA, transB}: acc = sum_k (A - a_zp)(B - b_zp[n]) + C (int32, broadcast to
// [M, N]); y = acc * alpha * a_scale * b_scale[n], requantized with y_scale when given,
// float32 otherwise.
std::vector<Tensor> qgemm(const KernelCall& c) {
  const Tensor &a = c.required(0), &b = c.required(3);
  check(a.has_data() && b.has_data() && (a.dtype == DType::UInt8 || a.dtype == DType::Int8) &&
            (b.dtype == DType::UInt8 || b.dtype == DType::Int8),
        "QGemm's A and B must be uint8 or int8 with data");
  check(a.shape.size() == 2 && b.shape.size() == 2, "QGemm's A and B must be 2-D");
  const bool ta = attr_int(c.attrs, "transA", 0) != 0, tb = attr_int(c.attrs, "transB", 0) != 0;
  const std::int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1];
  const std::int64_t N = tb ? b.shape[0] : b.shape[1];
  check((tb ? b.shape[1] : b.shape[0]) == K, "QGemm's inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  check_scalar(c, 1, "a_scale");
  check_scalar(c, 2, "a_zero_point");
  check_param(&c.required(4), N, "b_scale");
  check_param(c.input(5), N, "b_zero_point");
  const Tensor* bias = c.input(6);
  std::vector<std::int64_t> bstr;
  if (bias) {
    check(bias->dtype == DType::Int32 && bias->has_data(), "QGemm's C must be int32 with data");
    const Shape mn{M, N};
    check(broadcast_shapes(bias->shape, mn) == mn, "QGemm's C " + shape_str(bias->shape) + " does not broadcast to " + shape_str(mn));
    bstr = broadcast_strides(bias->shape, mn);
  }
  const Tensor* ys = c.input(7);
  const Tensor* yz = c.input(8);
  if (ys) check_scalar(c, 7, "y_scale");
  const DType out = !ys ? DType::Float32 : yz ? yz->dtype : a.dtype;
  check(out == DType::Float32 || out == DType::UInt8 || out == DType::Int8, "y_zero_point must be uint8 or int8");
  const float alpha = attr_float(c.attrs, "alpha", 1.0f);
  const float as = param_f(c.required(1), 0, "a_scale");
  const std::int64_t az = param_z(c.input(2), 0);
  Tensor y = alloc(out, {M, N});
  const auto [lo, hi] = out == DType::Float32 ? std::pair<std::int64_t, std::int64_t>{0, 0} : type_range(out);
  const float ysv = ys ? param_f(*ys, 0, "y_scale") : 1.0f;
  const std::int64_t yzv = param_z(yz, 0);
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      const std::int64_t bz = param_z(c.input(5), n);
      std::int64_t acc = bias ? int_at(*bias, m * bstr[0] + n * bstr[1]) : 0;
      for (std::int64_t k = 0; k < K; ++k)
        acc += (int_at(a, ta ? k * M + m : m * K + k) - az) * (int_at(b, tb ? n * K + k : k * N + n) - bz);
      const float v = static_cast<float>(acc) * (alpha * as * param_f(c.required(4), n, "b_scale"));
      if (out == DType::Float32)
        mut<float>(y)[m * N + n] = v;
      else
        store(y, m * N + n, quantize(v / ysv, yzv, lo, hi));
    }
  return {y};
}

}  // namespace

void register_reference_quant_ms(KernelRegistry& r) {
  r.add("com.microsoft.QLinearAdd", binary("Add"));
  r.add("com.microsoft.QLinearMul", binary("Mul"));
  r.add("com.microsoft.QLinearSigmoid", unary("Sigmoid", {}));
  r.add("com.microsoft.QLinearLeakyRelu", unary("LeakyRelu", {"alpha"}));
  r.add("com.microsoft.QLinearGlobalAveragePool", qlinear_global_average_pool);
  r.add("com.microsoft.QLinearSoftmax", qlinear_softmax);
  r.add("com.microsoft.QLinearConcat", qlinear_concat);
  r.add("com.microsoft.QGemm", qgemm);
}

}  // namespace graphfuse::kernels
