// Fast elementwise kernels: activations parallel on the OpenMP team (fast::team_for), bias add, broadcasting arithmetic.

#include <algorithm>
#include <cmath>

#include "core/broadcast.h"
#include "core/conv_ops.h"
#include "fast/broadcast_rows.h"
#include "fast/buffers.h"
#include "fast/parallelism.h"
#include "fast/vmath.h"

namespace graphfuse::kernels {

namespace fast {

namespace {
// Chunks small enough to balance two cores, large enough that scheduling is noise.
constexpr std::int64_t kGrain = 1 << 14;

template <class F>
void parallel_ranges(std::int64_t n, F f) {
  team_for(n, kGrain, f);
}

// One loop per activation kind, so the compiler sees a branch-free body to vectorize.
template <class F>
void map(const float* x, float* y, std::int64_t n, F f) {
  parallel_ranges(n, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) y[i] = f(x[i]);
  });
}
// A vectorized transcendental function, in chunks on the OpenMP team; every element's value is
// independent of the chunking (vmath::apply's contract), so any thread count gives the same bytes.
void transcendental(vmath::Fn f, const float* x, float* y, std::int64_t n, float alpha = 1.0f) {
  parallel_ranges(n, [&](std::int64_t b, std::int64_t e) { vmath::apply(f, x + b, y + b, e - b, alpha); });
}
}  // namespace

void activation(const ActivationSpec& act, const float* x, float* y, std::int64_t n) {
  const float lo = act.alpha, hi = act.beta;
  switch (act.kind) {
    case Activation::Relu: return map(x, y, n, [](float v) { return v > 0.0f ? v : 0.0f; });
    case Activation::Clip:
      return map(x, y, n, [lo, hi](float v) { return v < lo ? lo : (v > hi ? hi : v); });
    case Activation::LeakyRelu:
      return map(x, y, n, [lo](float v) { return v >= 0.0f ? v : lo * v; });
    case Activation::Sigmoid: return transcendental(vmath::Fn::Logistic, x, y, n);
    case Activation::Tanh: return transcendental(vmath::Fn::Tanh, x, y, n);
    case Activation::HardSigmoid:
      return map(x, y, n, [lo, hi](float v) { return std::max(0.0f, std::min(1.0f, lo * v + hi)); });
    case Activation::HardSwish:
      return map(x, y, n, [](float v) { return v * std::max(0.0f, std::min(1.0f, v / 6.0f + 0.5f)); });
    default: return map(x, y, n, [&act](float v) { return act.apply(v); });
  }
}

void bias_add(const float* x, const float* b, float* y, std::int64_t outer, std::int64_t c,
              std::int64_t inner) {
  if (outer == 0 || c == 0 || inner == 0) return;  // empty: nothing to add, and kGrain / inner
  if (inner == 1) {
    // Channel-last: rows of c, the bias vector stays in L1.
    const std::int64_t rows = outer, grain = std::max<std::int64_t>(1, kGrain / std::max<std::int64_t>(c, 1));
    team_for(rows, grain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        for (std::int64_t k = 0; k < c; ++k) y[i * c + k] = x[i * c + k] + b[k];
    });
    return;
  }
  const std::int64_t planes = outer * c;
  const std::int64_t grain = std::max<std::int64_t>(1, kGrain / inner);
  team_for(planes, grain, [&](std::int64_t begin, std::int64_t end) {
                      for (std::int64_t pl = begin; pl < end; ++pl) {
                        const float bv = b[pl % c];
                        for (std::int64_t i = 0; i < inner; ++i) y[pl * inner + i] = x[pl * inner + i] + bv;
                      }
                    });
}

}  // namespace fast

namespace {

// True when `small` (leading 1s ignored) equals the trailing dims of `full`, so that
// element i of the broadcast result reads small[i % numel(small)].
bool repeats_along_leading_dims(const Shape& small, const Shape& full) {
  std::size_t lead = 0;
  while (lead < small.size() && small[lead] == 1) ++lead;
  const std::size_t k = small.size() - lead;
  if (k > full.size()) return false;
  return std::equal(small.begin() + static_cast<std::ptrdiff_t>(lead), small.end(),
                    full.end() - static_cast<std::ptrdiff_t>(k));
}

template <class F>
Tensor binary_f32(const Tensor& a, const Tensor& b, F f) {
  const Shape ys = broadcast_shapes(a.shape, b.shape);
  Tensor y = fast::alloc_output_f32(ys);  // every element is written below
  const float* ap = f32(a, "A");
  const float* bp = f32(b, "B");
  float* yp = mut<float>(y);
  const std::int64_t n = numel(ys);
  if (a.num_elements() == n && b.num_elements() == n) {
    fast::parallel_ranges(n, [&](std::int64_t s, std::int64_t e) {
      for (std::int64_t i = s; i < e; ++i) yp[i] = f(ap[i], bp[i]);
    });
  } else {
    const fast::BroadcastRows rows(a.shape, b.shape, ys);
    fast::parallel_ranges(n, [&](std::int64_t s, std::int64_t e) { rows.apply(ap, bp, yp, s, e, f); });
  }
  return y;
}

// The shape t's bytes have in NHWC order: a 4-D NCHW shape permuted, [C, 1, 1] as [1, 1, C];
// anything else (a scalar) as it is.
Tensor physical_nhwc(const Tensor& t) {
  Tensor v = t;  // shares the bytes
  const auto& s = t.shape;
  if (s.size() == 4) v.shape = {s[0], s[2], s[3], s[1]};
  else if (s.size() == 3) v.shape = {s[1], s[2], s[0]};
  return v;
}

std::vector<Tensor> binary(const KernelFn& fallback, const KernelCall& c) {
  const Tensor& a0 = c.required(0);
  const Tensor& b0 = c.required(1);
  // The executor sends ChannelsLast only with same-shape 4-D operands, scalars or
  // per-channel vectors ([N, C, 1, 1], [C, 1, 1], whose bytes are the same in both orders):
  // then the result is computed on the physical NHWC shapes and keeps the logical shape.
  const bool cl = c.layout(0) == Layout::ChannelsLast || c.layout(1) == Layout::ChannelsLast;
  c.out_layout = cl ? Layout::ChannelsLast : Layout::Plain;
  if (a0.dtype != DType::Float32 || b0.dtype != DType::Float32) return fallback(c);  // shape math
  const bool permute = cl && a0.shape != b0.shape;
  const Tensor a = permute ? physical_nhwc(a0) : a0;
  const Tensor b = permute ? physical_nhwc(b0) : b0;
  Tensor y;
  switch (binary_op_from_name(c.op)) {
    case BinaryOp::Add: y = binary_f32(a, b, [](float u, float v) { return u + v; }); break;
    case BinaryOp::Sub: y = binary_f32(a, b, [](float u, float v) { return u - v; }); break;
    case BinaryOp::Mul: y = binary_f32(a, b, [](float u, float v) { return u * v; }); break;
    case BinaryOp::Div: y = binary_f32(a, b, [](float u, float v) { return u / v; }); break;
    case BinaryOp::Pow:
      if (b.num_elements() == 1 && b.as<float>() && b.as<float>()[0] == 2.0f)
        y = binary_f32(a, b, [](float u, float) { return u * u; });  // LayerNorm's x^2
      else
        y = binary_f32(a, b, [](float u, float v) { return std::pow(u, v); });
      break;
    case BinaryOp::Max:
    case BinaryOp::Min: return fallback(c);  // variadic ops: not registered here
  }
  if (permute) y.shape = broadcast_shapes(a0.shape, b0.shape);
  return {y};
}

std::vector<Tensor> unary(UnaryOp op, float alpha, const KernelCall& c) {
  const Tensor& x = c.required(0);
  c.out_layout = c.layout(0);
  Tensor y = fast::alloc_output_f32(x.shape);
  const float* xp = f32(x, "input");
  float* yp = mut<float>(y);
  const std::int64_t n = x.num_elements();
  using fast::vmath::Fn;
  switch (op) {
    case UnaryOp::Sqrt: fast::map(xp, yp, n, [](float v) { return std::sqrt(v); }); break;
    case UnaryOp::Erf: fast::transcendental(Fn::Erf, xp, yp, n); break;
    case UnaryOp::Exp: fast::transcendental(Fn::Exp, xp, yp, n); break;
    case UnaryOp::Gelu: fast::transcendental(Fn::Gelu, xp, yp, n); break;
    case UnaryOp::GeluTanh: fast::transcendental(Fn::GeluTanh, xp, yp, n); break;
    case UnaryOp::QuickGelu: fast::transcendental(Fn::Swish, xp, yp, n, alpha); break;
    default: fast::map(xp, yp, n, [op, alpha](float v) { return unary_scalar(op, v, alpha); }); break;
  }
  return {y};
}

// f(A + B) with B a vector along A's last axis (BiasGelu, FastGelu with bias): the add and
// the function in one pass over each row block; other bias shapes go to `fallback`.
std::vector<Tensor> biased(fast::vmath::Fn f, const KernelFn& fallback, const KernelCall& c) {
  const Tensor& a = c.required(0);
  const Tensor& b = c.required(1);
  if (a.dtype != DType::Float32 || b.dtype != DType::Float32 || a.shape.empty() ||
      b.num_elements() != a.shape.back() || b.shape.size() > a.shape.size() ||
      !repeats_along_leading_dims(b.shape, a.shape))
    return fallback(c);
  const std::int64_t cols = a.shape.back();
  const std::int64_t rows = cols == 0 ? 0 : a.num_elements() / cols;
  Tensor y = fast::alloc_output_f32(a.shape);
  const float* ap = f32(a, "A");
  const float* bp = f32(b, "bias");
  float* yp = mut<float>(y);
  const std::int64_t grain = std::max<std::int64_t>(1, fast::kGrain / std::max<std::int64_t>(cols, 1));
  fast::team_for(rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      float* row = yp + i * cols;
      for (std::int64_t k = 0; k < cols; ++k) row[k] = ap[i * cols + k] + bp[k];
      fast::vmath::apply(f, row, row, cols);
    }
  });
  return {y};
}

}  // namespace

void register_fast_elementwise(KernelRegistry& r) {
  register_epilogue_ops(r, fast::bias_add, fast::activation, true);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    KernelFn ref = *r.find(op);
    r.add(op, [ref](const KernelCall& c) { return binary(ref, c); }, LayoutSupport::Elementwise);
  }
  auto un = [&](const char* op, UnaryOp u) {
    r.add(op, [u](const KernelCall& c) { return unary(u, 0.0f, c); }, LayoutSupport::Elementwise);
  };
  un("Sqrt", UnaryOp::Sqrt);
  un("Erf", UnaryOp::Erf);
  un("Exp", UnaryOp::Exp);
  un("com.microsoft.Gelu", UnaryOp::Gelu);
  {
    // FastGelu and BiasGelu with a bias along the last axis: add and GELU in one pass per
    // chunk; any other bias shape goes to the reference's broadcast add.
    KernelFn fast_gelu_ref = *r.find("com.microsoft.FastGelu");
    r.add("com.microsoft.FastGelu", [fast_gelu_ref](const KernelCall& c) {
      if (c.input(1) != nullptr) return biased(fast::vmath::Fn::GeluTanh, fast_gelu_ref, c);
      return unary(UnaryOp::GeluTanh, 0.0f, c);
    });
    KernelFn bias_gelu_ref = *r.find("com.microsoft.BiasGelu");
    r.add("com.microsoft.BiasGelu", [bias_gelu_ref](const KernelCall& c) {
      return biased(fast::vmath::Fn::Gelu, bias_gelu_ref, c);
    });
    KernelFn gelu_ref = *r.find("Gelu");
    r.add("Gelu", [gelu_ref](const KernelCall& c) {
      const std::string approx = attr_string(c.attrs, "approximate", "none");
      if (approx != "none" && approx != "tanh") return gelu_ref(c);  // its error message
      return unary(approx == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu, 0.0f, c);
    }, LayoutSupport::Elementwise);
  }
  r.add("com.microsoft.QuickGelu", [](const KernelCall& c) {
    return unary(UnaryOp::QuickGelu, attr_float(c.attrs, "alpha", 1.702f), c);
  }, LayoutSupport::Elementwise);
}

}  // namespace graphfuse::kernels
