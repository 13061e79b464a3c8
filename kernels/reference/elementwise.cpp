// Reference elementwise kernels: broadcasting arithmetic, unary math, Gelu variants.
#include <cmath>
#include <optional>
#include <type_traits>

#include "core/broadcast.h"
#include "reference/numeric_types.h"

namespace graphfuse::kernels {

BinaryOp binary_op_from_name(std::string_view op) {
  if (op == "Add") return BinaryOp::Add;
  if (op == "Sub") return BinaryOp::Sub;
  if (op == "Mul") return BinaryOp::Mul;
  if (op == "Div") return BinaryOp::Div;
  if (op == "Pow") return BinaryOp::Pow;
  if (op == "Max") return BinaryOp::Max;
  if (op == "Min") return BinaryOp::Min;
  fail("not a binary op: " + std::string(op));
}

float unary_scalar(UnaryOp op, float x, float alpha) {
  constexpr double kInvSqrt2 = 0.70710678118654752440;
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  const double d = x;
  switch (op) {
    case UnaryOp::Sqrt: return std::sqrt(x);
    case UnaryOp::Erf: return std::erf(x);
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Neg: return -x;
    case UnaryOp::Abs: return std::fabs(x);
    case UnaryOp::Reciprocal: return 1.0f / x;
    case UnaryOp::Gelu: return static_cast<float>(0.5 * d * (1.0 + std::erf(d * kInvSqrt2)));
    case UnaryOp::GeluTanh:
      return static_cast<float>(0.5 * d * (1.0 + std::tanh(kSqrt2OverPi * (d + 0.044715 * d * d * d))));
    case UnaryOp::QuickGelu: return static_cast<float>(d / (1.0 + std::exp(-alpha * d)));
  }
  return x;
}

namespace {

template <class T>
Tensor binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, DType dt) {
  const Shape ys = broadcast_shapes(a.shape, b.shape);
  Tensor y = alloc(dt, ys);
  if (dt == DType::Int64 && op == BinaryOp::Div) {
    const T* bp = b.as<T>();
    for (std::int64_t i = 0; i < b.num_elements(); ++i)
      check(bp[i] != 0, "integer division by zero");
  }
  // One loop per op, so the op is a constant in it (no switch per element; the rows of
  // broadcast_apply vectorize): the same binary_scalar expression for every element.
  auto run = [&](auto op_constant) {
    broadcast_apply(a.as<T>(), a.shape, b.as<T>(), b.shape, mut<T>(y), ys, 0, numel(ys),
                    [](T u, T v) { return binary_scalar(decltype(op_constant)::value, u, v); });
  };
  switch (op) {
    case BinaryOp::Add: run(std::integral_constant<BinaryOp, BinaryOp::Add>{}); break;
    case BinaryOp::Sub: run(std::integral_constant<BinaryOp, BinaryOp::Sub>{}); break;
    case BinaryOp::Mul: run(std::integral_constant<BinaryOp, BinaryOp::Mul>{}); break;
    case BinaryOp::Div: run(std::integral_constant<BinaryOp, BinaryOp::Div>{}); break;
    case BinaryOp::Pow: run(std::integral_constant<BinaryOp, BinaryOp::Pow>{}); break;
    case BinaryOp::Max: run(std::integral_constant<BinaryOp, BinaryOp::Max>{}); break;
    case BinaryOp::Min: run(std::integral_constant<BinaryOp, BinaryOp::Min>{}); break;
  }
  return y;
}

// Integer Add/Sub/Mul/Div of any width: wrap-around in 64-bit unsigned arithmetic then
// truncated (numpy's and ONNX Runtime's two's-complement result, without the undefined
// behaviour of signed overflow or of int promotion); Div truncates toward zero, a 0 divisor
// is refused, and MIN / -1 wraps to MIN.
template <class T>
Tensor int_binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  if (op == BinaryOp::Div) {
    const T* bp = b.as<T>();
    for (std::int64_t i = 0; i < b.num_elements(); ++i) check(bp[i] != 0, "integer division by zero");
  }
  const Shape ys = broadcast_shapes(a.shape, b.shape);
  Tensor y = alloc(a.dtype, ys);
  broadcast_apply(a.as<T>(), a.shape, b.as<T>(), b.shape, mut<T>(y), ys, 0, numel(ys), [op](T u, T v) -> T {
    using U = std::uint64_t;
    switch (op) {
      case BinaryOp::Add: return static_cast<T>(static_cast<U>(u) + static_cast<U>(v));
      case BinaryOp::Sub: return static_cast<T>(static_cast<U>(u) - static_cast<U>(v));
      case BinaryOp::Mul: return static_cast<T>(static_cast<U>(u) * static_cast<U>(v));
      case BinaryOp::Div:
        if constexpr (std::is_signed_v<T>)
          if (v == T(-1)) return static_cast<T>(U{0} - static_cast<U>(u));
        return static_cast<T>(u / v);
      case BinaryOp::Max: return u < v ? v : u;
      case BinaryOp::Min: return v < u ? v : u;
      case BinaryOp::Pow: break;
    }
    return u;
  });
  return y;
}

// Neg of every type ONNX allows (float, double, float16, bfloat16, signed integers): the
// integer MIN wraps to itself, the 16-bit floats flip their sign bit (exact).
std::vector<Tensor> neg(const KernelCall& c) {
  const Tensor& x = c.required(0);
  check(x.has_data(), "input has no data");
  Tensor y = alloc(x.dtype, x.shape);
  const std::int64_t n = x.num_elements();
  dispatch_numeric(x.dtype, "Neg", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.as<T>();
    T* yp = mut<T>(y);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BF16>) {
      for (std::int64_t i = 0; i < n; ++i) yp[i] = T{static_cast<std::uint16_t>(xp[i].bits ^ 0x8000u)};
    } else if constexpr (std::is_floating_point_v<T>) {
      for (std::int64_t i = 0; i < n; ++i) yp[i] = -xp[i];
    } else if constexpr (std::is_signed_v<T>) {
      for (std::int64_t i = 0; i < n; ++i)
        yp[i] = static_cast<T>(std::uint64_t{0} - static_cast<std::uint64_t>(xp[i]));
    } else {
      fail("Neg: element type " + std::string(dtype_name(x.dtype)) + " is not supported");
    }
  });
  return {y};
}

std::vector<Tensor> binary(const KernelCall& c) {
  const BinaryOp op = binary_op_from_name(c.op);
  const Tensor& a = c.required(0);
  const Tensor& b = c.required(1);
  check(a.has_data() && b.has_data(), "inputs have no data");
  if (a.dtype == DType::Float32 && b.dtype == DType::Float32)
    return {binary_typed<float>(op, a, b, DType::Float32)};
  if (a.dtype == DType::Int64 && b.dtype == DType::Int64)
    return {binary_typed<std::int64_t>(op, a, b, DType::Int64)};
  if (op == BinaryOp::Pow && a.dtype == DType::Float32) {
    // Pow allows an integer exponent type; compute it in float.
    const auto e = int_values(b, "exponent");
    Tensor bf = Tensor::from_floats(b.shape, std::vector<float>(e.begin(), e.end()));
    return {binary_typed<float>(op, a, bf, DType::Float32)};
  }
  if (a.dtype == b.dtype && op != BinaryOp::Pow) {
    // The other numeric types of Add/Sub/Mul/Div (float16/bfloat16 and bool are refused).
    std::optional<Tensor> y;
    dispatch_numeric(a.dtype, std::string(c.op), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, double>) {
        y = binary_typed<double>(op, a, b, a.dtype);
      } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        y = int_binary<T>(op, a, b);
      }
    });
    if (y) return {*y};
  }
  fail("unsupported input types " + std::string(dtype_name(a.dtype)) + " and " +
       std::string(dtype_name(b.dtype)));
}

// Sum, Mean, Max, Min: one or more inputs of one type, broadcast together, folded left to
// right by the binary kernel; Mean divides the sum by the input count (float32 only).
std::vector<Tensor> variadic(const KernelCall& c) {
  check(!c.inputs.empty(), std::string(c.op) + " needs at least one input");
  const bool mean = c.op == "Mean";
  const BinaryOp op = c.op == "Max" ? BinaryOp::Max : c.op == "Min" ? BinaryOp::Min : BinaryOp::Add;
  Tensor acc = c.required(0);
  check(acc.has_data(), "inputs have no data");
  check(acc.dtype == DType::Float32 || (acc.dtype == DType::Int64 && !mean),
        "unsupported input type " + std::string(dtype_name(acc.dtype)));
  for (std::size_t i = 1; i < c.inputs.size(); ++i) {
    const Tensor& b = c.required(i);
    check(b.has_data(), "inputs have no data");
    check(b.dtype == acc.dtype, "inputs of different types " + std::string(dtype_name(acc.dtype)) + " and " +
                                    std::string(dtype_name(b.dtype)));
    acc = acc.dtype == DType::Float32 ? binary_typed<float>(op, acc, b, DType::Float32)
                                      : binary_typed<std::int64_t>(op, acc, b, DType::Int64);
  }
  if (mean && c.inputs.size() > 1) {
    float* p = mut<float>(acc);
    const float n = static_cast<float>(c.inputs.size());
    for (std::int64_t i = 0; i < acc.num_elements(); ++i) p[i] /= n;
  }
  return {acc};
}

std::vector<Tensor> unary(UnaryOp op, float alpha, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const float* xp = f32(x, "input");
  Tensor y = alloc_f32(x.shape);
  float* yp = mut<float>(y);
  for (std::int64_t i = 0; i < x.num_elements(); ++i) yp[i] = unary_scalar(op, xp[i], alpha);
  return {y};
}

// com.microsoft.BiasGelu: Gelu(A + B), and com.microsoft.FastGelu with its bias input:
// FastGelu(A + B) (tanh form), B broadcast along the last axis.
std::vector<Tensor> bias_gelu_of(UnaryOp op, const KernelCall& c) {
  const Tensor& a = c.required(0);
  const Tensor& b = c.required(1);
  Tensor sum = binary_typed<float>(BinaryOp::Add, a, b, DType::Float32);
  check(sum.shape == a.shape, "bias must broadcast to the input shape");
  float* p = mut<float>(sum);
  for (std::int64_t i = 0; i < sum.num_elements(); ++i) p[i] = unary_scalar(op, p[i], 0);
  return {sum};
}

std::vector<Tensor> bias_gelu(const KernelCall& c) { return bias_gelu_of(UnaryOp::Gelu, c); }

// Identity and inference-mode Dropout: the output is the input (shared, not copied);
// Dropout's optional mask output is all true.
std::vector<Tensor> pass_through(const KernelCall& c) {
  std::vector<Tensor> out{c.required(0)};
  if (c.num_outputs > 1) {
    Tensor mask = alloc(DType::Bool, c.required(0).shape);
    std::fill(mut<char>(mask), mut<char>(mask) + mask.num_elements(), 1);
    out.push_back(mask);
  }
  return out;
}

// Dropout is the identity only in inference mode: with training_mode true (opset 12's
// third input) and a ratio above 0 its output is random, which no kernel may fold or
// reproduce, so the kernel refuses.
std::vector<Tensor> dropout(const KernelCall& c) {
  if (const Tensor* training = c.input(2); training && training->has_data() && training->num_elements() > 0 &&
                                           training->data->front() != 0) {
    const Tensor* r = c.input(1);  // default ratio 0.5
    const bool zero = r && r->dtype == DType::Float32 && r->has_data() && r->num_elements() == 1 &&
                      r->as<float>()[0] == 0.0f;
    check(zero, "Dropout in training mode is random; not supported");
  }
  return pass_through(c);
}

}  // namespace

void register_reference_elementwise(KernelRegistry& r) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) r.add(op, binary);
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) r.add(op, variadic);
  auto un = [&](const char* op, UnaryOp u) {
    r.add(op, [u](const KernelCall& c) { return unary(u, 0.0f, c); });
  };
  un("Sqrt", UnaryOp::Sqrt);
  un("Erf", UnaryOp::Erf);
  un("Exp", UnaryOp::Exp);
  r.add("Neg", neg);
  un("Abs", UnaryOp::Abs);
  un("Reciprocal", UnaryOp::Reciprocal);
  un("com.microsoft.Gelu", UnaryOp::Gelu);
  r.add("Gelu", [](const KernelCall& c) {
    const std::string approx = attr_string(c.attrs, "approximate", "none");
    check(approx == "none" || approx == "tanh", "unknown Gelu approximate '" + approx + "'");
    return unary(approx == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu, 0.0f, c);
  });
  r.add("com.microsoft.FastGelu", [](const KernelCall& c) {
    // ONNX Runtime's FastGelu(X [, bias]): the tanh GELU of X (+ bias); with the bias it is
    // what the transformers optimizer calls BiasFastGelu.
    if (c.input(1) != nullptr) return bias_gelu_of(UnaryOp::GeluTanh, c);
    return unary(UnaryOp::GeluTanh, 0.0f, c);
  });
  r.add("com.microsoft.QuickGelu", [](const KernelCall& c) {
    return unary(UnaryOp::QuickGelu, attr_float(c.attrs, "alpha", 1.702f), c);
  });
  r.add("com.microsoft.BiasGelu", bias_gelu);
  r.add("Identity", pass_through);
  r.add("Dropout", dropout);
}

}  // namespace graphfuse::kernels
