// Fast elementwise kernels: TBB-parallel activations, bias add, broadcasting arithmetic.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "core/broadcast.h"
#include "core/conv_ops.h"
#include "fast/buffers.h"

namespace graphfuse::kernels {

namespace fast {

namespace {
// Chunks small enough to balance two cores, large enough that scheduling is noise.
constexpr std::int64_t kGrain = 1 << 14;

template <class F>
void parallel_ranges(std::int64_t n, F f) {
  if (n <= kGrain) {
    f(std::int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, kGrain),
                    [&](const tbb::blocked_range<std::int64_t>& r) { f(r.begin(), r.end()); });
}

// One loop per activation kind, so the compiler sees a branch-free body to vectorize.
template <class F>
void map(const float* x, float* y, std::int64_t n, F f) {
  parallel_ranges(n, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) y[i] = f(x[i]);
  });
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
    default: return map(x, y, n, [&act](float v) { return act.apply(v); });
  }
}

void bias_add(const float* x, const float* b, float* y, std::int64_t outer, std::int64_t c,
              std::int64_t inner) {
  if (outer == 0 || c == 0 || inner == 0) return;  // empty: nothing to add, and kGrain / inner
  if (inner == 1) {
    // Channel-last: rows of c, the bias vector stays in L1.
    const std::int64_t rows = outer, grain = std::max<std::int64_t>(1, kGrain / std::max<std::int64_t>(c, 1));
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, grain),
                      [&](const tbb::blocked_range<std::int64_t>& r) {
                        for (std::int64_t i = r.begin(); i < r.end(); ++i)
                          for (std::int64_t k = 0; k < c; ++k) y[i * c + k] = x[i * c + k] + b[k];
                      });
    return;
  }
  const std::int64_t planes = outer * c;
  const std::int64_t grain = std::max<std::int64_t>(1, kGrain / inner);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, planes, grain),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t pl = r.begin(); pl < r.end(); ++pl) {
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
  Tensor y = fast::alloc_output_f32(ys);  // every branch below writes all n elements
  const float* ap = f32(a, "A");
  const float* bp = f32(b, "B");
  float* yp = mut<float>(y);
  const std::int64_t n = numel(ys), na = a.num_elements(), nb = b.num_elements();
  if (na == n && nb == n) {
    fast::parallel_ranges(n, [&](std::int64_t s, std::int64_t e) {
      for (std::int64_t i = s; i < e; ++i) yp[i] = f(ap[i], bp[i]);
    });
  } else if (na == n && repeats_along_leading_dims(b.shape, ys)) {
    // b is a bias row (or a scalar) repeated along the leading dims.
    fast::parallel_ranges(n, [&](std::int64_t s, std::int64_t e) {
      for (std::int64_t i = s; i < e; ++i) yp[i] = f(ap[i], bp[i % nb]);
    });
  } else if (nb == n && repeats_along_leading_dims(a.shape, ys)) {
    fast::parallel_ranges(n, [&](std::int64_t s, std::int64_t e) {
      for (std::int64_t i = s; i < e; ++i) yp[i] = f(ap[i % na], bp[i]);
    });
  } else {
    fast::parallel_ranges(n, [&](std::int64_t s, std::int64_t e) {
      broadcast_apply(ap, a.shape, bp, b.shape, yp, ys, s, e, f);
    });
  }
  return y;
}

std::vector<Tensor> binary(const KernelFn& fallback, const KernelCall& c) {
  const Tensor& a = c.required(0);
  const Tensor& b = c.required(1);
  // The executor sends ChannelsLast only as same-shape 4-D operands (or with a scalar),
  // for which the element order does not matter.
  c.out_layout = c.layout(0) == Layout::ChannelsLast || c.layout(1) == Layout::ChannelsLast
                     ? Layout::ChannelsLast
                     : Layout::Plain;
  if (a.dtype != DType::Float32 || b.dtype != DType::Float32) return fallback(c);  // shape math
  switch (binary_op_from_name(c.op)) {
    case BinaryOp::Add: return {binary_f32(a, b, [](float u, float v) { return u + v; })};
    case BinaryOp::Sub: return {binary_f32(a, b, [](float u, float v) { return u - v; })};
    case BinaryOp::Mul: return {binary_f32(a, b, [](float u, float v) { return u * v; })};
    case BinaryOp::Div: return {binary_f32(a, b, [](float u, float v) { return u / v; })};
    case BinaryOp::Pow:
      if (b.num_elements() == 1 && b.as<float>() && b.as<float>()[0] == 2.0f)
        return {binary_f32(a, b, [](float u, float) { return u * u; })};  // LayerNorm's x^2
      return {binary_f32(a, b, [](float u, float v) { return std::pow(u, v); })};
    case BinaryOp::Max:
    case BinaryOp::Min: break;  // variadic ops: not registered here
  }
  return fallback(c);
}

std::vector<Tensor> unary(UnaryOp op, float alpha, const KernelCall& c) {
  const Tensor& x = c.required(0);
  c.out_layout = c.layout(0);
  Tensor y = fast::alloc_output_f32(x.shape);
  const float* xp = f32(x, "input");
  float* yp = mut<float>(y);
  if (op == UnaryOp::Sqrt)
    fast::map(xp, yp, x.num_elements(), [](float v) { return std::sqrt(v); });
  else
    fast::map(xp, yp, x.num_elements(), [op, alpha](float v) { return unary_scalar(op, v, alpha); });
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
    // FastGelu without its bias input runs elementwise here; with the bias, the reference's
    // broadcast add.
    KernelFn ref = *r.find("com.microsoft.FastGelu");
    r.add("com.microsoft.FastGelu", [ref](const KernelCall& c) {
      if (c.input(1) != nullptr) return ref(c);
      return unary(UnaryOp::GeluTanh, 0.0f, c);
    });
  }
  r.add("com.microsoft.QuickGelu", [](const KernelCall& c) {
    return unary(UnaryOp::QuickGelu, attr_float(c.attrs, "alpha", 1.702f), c);
  }, LayoutSupport::Elementwise);
}

}  // namespace graphfuse::kernels
