// Fast row-wise normalizations (Softmax, LayerNormalization, SkipLayerNormalization,
// BatchNormalization): the OpenMP team over rows (team_for), float math.

#include <algorithm>
#include <cmath>

#include "core/util.h"
#include "fast/buffers.h"
#include "graphfuse/kernels/conv.h"
#include "fast/layout.h"
#include "fast/parallelism.h"
#include "fast/vmath.h"

namespace graphfuse::kernels {

namespace {

template <class F>
void rows_parallel(std::int64_t rows, std::int64_t cols, F f) {
  const std::int64_t grain = std::max<std::int64_t>(1, 8192 / std::max<std::int64_t>(cols, 1));
  fast::team_for(rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) f(i);
  });
}

// One row: y = (x - mean) / sqrt(var + eps) * gamma + beta. Two passes in float; the
// variance uses the centred values, which stays accurate for LayerNorm's row lengths.
inline void norm_row(const float* x, const float* gamma, const float* beta, float* y,
                     std::int64_t cols, float eps, float* mean_out, float* inv_out) {
  float mean = 0.0f;
  for (std::int64_t i = 0; i < cols; ++i) mean += x[i];
  mean /= static_cast<float>(cols);
  float var = 0.0f;
  for (std::int64_t i = 0; i < cols; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<float>(cols);
  const float inv = 1.0f / std::sqrt(var + eps);
  for (std::int64_t i = 0; i < cols; ++i)
    y[i] = (x[i] - mean) * inv * gamma[i] + (beta ? beta[i] : 0.0f);
  if (mean_out) *mean_out = mean;
  if (inv_out) *inv_out = inv;
}

std::vector<Tensor> softmax(const KernelFn& fallback, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", -1), rank);
  if (rank == 0 || axis != rank - 1) return fallback(c);  // only the contiguous case here
  const std::int64_t cols = x.shape.back(), rows = x.num_elements() / std::max<std::int64_t>(cols, 1);
  const float* xp = f32(x, "input");
  Tensor y = fast::alloc_output_f32(x.shape);  // every element is written below
  float* yp = mut<float>(y);
  rows_parallel(rows, cols, [&](std::int64_t r) { fast::vmath::softmax_row(xp + r * cols, yp + r * cols, cols); });
  return {y};
}

std::vector<Tensor> layer_norm(const KernelFn& fallback, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", -1), rank);
  const Tensor& scale = c.required(1);
  const Tensor* bias = c.input(2);
  const std::int64_t cols = numel(Shape(x.shape.begin() + axis, x.shape.end()));
  if (c.num_outputs > 1 || scale.num_elements() != cols || (bias && bias->num_elements() != cols))
    return fallback(c);  // statistics outputs and odd parameter shapes: reference
  const std::int64_t rows = x.num_elements() / std::max<std::int64_t>(cols, 1);
  const float eps = attr_float(c.attrs, "epsilon", 1e-5f);
  const float* xp = f32(x, "X");
  const float* g = f32(scale, "Scale");
  const float* b = bias ? f32(*bias, "B") : nullptr;
  Tensor y = fast::alloc_output_f32(x.shape);  // every element is written below
  float* yp = mut<float>(y);
  rows_parallel(rows, cols, [&](std::int64_t r) {
    norm_row(xp + r * cols, g, b, yp + r * cols, cols, eps, nullptr, nullptr);
  });
  return {y};
}

// One row of an RMS norm: y = x / sqrt(mean(x^2) + eps) * gamma (x and y may alias).
inline void rms_row(const float* x, const float* gamma, float* y, std::int64_t cols, float eps,
                    float* inv_out = nullptr) {
  float ss = 0.0f;
  for (std::int64_t i = 0; i < cols; ++i) ss += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + eps);
  for (std::int64_t i = 0; i < cols; ++i) y[i] = x[i] * inv * gamma[i];
  if (inv_out) *inv_out = inv;
}

// SkipLayerNormalization and SkipSimplifiedLayerNormalization: s = input + skip (+ bias),
// normalized over the last axis. With four outputs requested (input_skip_bias_sum is what a
// pre-norm block's next residual reads) the statistics are written too (the simplified op's
// mean is left 0, as ONNX Runtime does not compute it).
template <bool simplified>
std::vector<Tensor> skip_norm(const KernelFn& fallback, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const Tensor& skip = c.required(1);
  const Tensor& gamma = c.required(2);
  const Tensor* beta = simplified ? nullptr : c.input(3);
  const Tensor* bias = c.input(simplified ? 3 : 4);
  const bool want_sum = c.num_outputs == 4;
  if (x.shape.size() < 2 || skip.shape != x.shape || (c.num_outputs > 1 && !want_sum) ||
      gamma.num_elements() != x.shape.back() || (beta && beta->num_elements() != x.shape.back()) ||
      (bias && bias->num_elements() != x.shape.back()))
    return fallback(c);  // broadcast skip, statistics outputs, odd shapes: reference
  const std::int64_t cols = x.shape.back(), rows = x.num_elements() / cols;
  const float eps = attr_float(c.attrs, "epsilon", 1e-12f);
  const float* xp = f32(x, "input");
  const float* sp = f32(skip, "skip");
  const float* gp = f32(gamma, "gamma");
  const float* bp = beta ? f32(*beta, "beta") : nullptr;
  const float* biasp = bias ? f32(*bias, "bias") : nullptr;
  Tensor y = fast::alloc_output_f32(x.shape);  // every element is written below
  Shape stat_shape = x.shape;
  stat_shape.back() = 1;
  std::vector<Tensor> out{y};
  // The simplified op's mean output stays the zeros of a fresh buffer; the rest is written.
  if (want_sum) out = {y, alloc_f32(stat_shape), fast::alloc_output_f32(stat_shape), fast::alloc_output_f32(x.shape)};
  float* yp = mut<float>(out[0]);
  float* meanp = want_sum ? mut<float>(out[1]) : nullptr;
  float* invp = want_sum ? mut<float>(out[2]) : nullptr;
  float* sump = want_sum ? mut<float>(out[3]) : nullptr;
  rows_parallel(rows, cols, [&](std::int64_t r) {
    // The sum is formed in the output row, then normalized in place (one pass less).
    float* yr = yp + r * cols;
    for (std::int64_t i = 0; i < cols; ++i)
      yr[i] = xp[r * cols + i] + sp[r * cols + i] + (biasp ? biasp[i] : 0.0f);
    if (sump) std::copy(yr, yr + cols, sump + r * cols);
    if constexpr (simplified)
      rms_row(yr, gp, yr, cols, eps, invp ? invp + r : nullptr);
    else
      norm_row(yr, gp, bp, yr, cols, eps, meanp ? meanp + r : nullptr, invp ? invp + r : nullptr);
  });
  return out;
}

// SimplifiedLayerNormalization over the last axis (the only form the rules emit).
std::vector<Tensor> simplified_layer_norm(const KernelFn& fallback, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  if (rank == 0 || c.num_outputs > 1 || normalize_axis(attr_int(c.attrs, "axis", -1), rank) != rank - 1 ||
      c.required(1).num_elements() != x.shape.back() || x.shape.back() <= 0)
    return fallback(c);
  const std::int64_t cols = x.shape.back(), rows = x.num_elements() / cols;
  const float eps = attr_float(c.attrs, "epsilon", 1e-5f);
  const float* xp = f32(x, "X");
  const float* gp = f32(c.required(1), "scale");
  Tensor y = fast::alloc_output_f32(x.shape);  // every element is written below
  float* yp = mut<float>(y);
  rows_parallel(rows, cols, [&](std::int64_t r) { rms_row(xp + r * cols, gp, yp + r * cols, cols, eps); });
  return {y};
}

// BatchNormalization (inference), with a Relu epilogue in the same pass (the executor's plan
// gives it the Relu that is its only reader: DenseNet's BN -> Relu before each convolution).
std::vector<Tensor> batch_norm(const KernelFn& reference, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const bool relu = c.epilogue != nullptr;  // registered for a Relu epilogue only
  // Relu as the fast Relu kernel computes it (a NaN becomes 0 there too).
  auto act = [relu](float v) { return relu ? (v > 0.0f ? v : 0.0f) : v; };
  auto fallback = [&](const KernelCall& call) {
    std::vector<Tensor> y = fast::run_plain(reference, call);
    if (relu) {
      Tensor r = fast::alloc_output_f32(y[0].shape);
      fast::activation(ActivationSpec{Activation::Relu}, f32(y[0], "Y"), mut<float>(r), r.num_elements());
      y[0] = r;
    }
    return y;
  };
  if (x.shape.size() < 2 || attr_int(c.attrs, "training_mode", 0) != 0) return fallback(c);
  const std::int64_t ch = x.shape[1];
  for (std::size_t i = 1; i <= 4; ++i)
    if (c.required(i).shape != Shape{ch}) return fallback(c);  // reference reports it
  const float eps = attr_float(c.attrs, "epsilon", 1e-5f);
  const float* s = f32(c.required(1), "scale");
  const float* b = f32(c.required(2), "B");
  const float* m = f32(c.required(3), "input_mean");
  const float* v = f32(c.required(4), "input_var");
  const std::int64_t inner = numel(Shape(x.shape.begin() + 2, x.shape.end()));  // see the reference
  const float* xp = f32(x, "X");
  Tensor y = fast::alloc_output_f32(x.shape);  // every element is written below
  float* yp = mut<float>(y);
  // One multiply-add per element with per-channel factors.
  std::vector<float> mul(static_cast<std::size_t>(ch)), add(static_cast<std::size_t>(ch));
  batch_norm_factors(s, b, m, v, eps, ch, mul.data(), add.data());
  if (c.layout(0) == Layout::ChannelsLast) {
    // NHWC: rows of `ch` channels.
    rows_parallel(x.shape[0] * inner, ch, [&](std::int64_t p) {
      for (std::int64_t k = 0; k < ch; ++k) yp[p * ch + k] = act(xp[p * ch + k] * mul[k] + add[k]);
    });
    c.out_layout = Layout::ChannelsLast;
    return {y};
  }
  rows_parallel(x.shape[0] * ch, inner, [&](std::int64_t plane) {
    const float mk = mul[static_cast<std::size_t>(plane % ch)], ak = add[static_cast<std::size_t>(plane % ch)];
    for (std::int64_t i = 0; i < inner; ++i) yp[plane * inner + i] = act(xp[plane * inner + i] * mk + ak);
  });
  return {y};
}

}  // namespace

void register_fast_norm(KernelRegistry& r) {
  auto wrap = [&](const char* op, std::vector<Tensor> (*f)(const KernelFn&, const KernelCall&)) {
    KernelFn ref = *r.find(op);
    r.add(op, [ref, f](const KernelCall& c) { return f(ref, c); });
  };
  wrap("Softmax", softmax);
  wrap("LayerNormalization", layer_norm);
  wrap("com.microsoft.SkipLayerNormalization", skip_norm<false>);
  wrap("com.microsoft.SkipSimplifiedLayerNormalization", skip_norm<true>);
  wrap("SimplifiedLayerNormalization", simplified_layer_norm);
  // BatchNormalization takes a channels-last activation (DenseNet's BN -> Relu -> Conv).
  KernelFn bn_ref = *r.find("BatchNormalization");
  r.add("BatchNormalization", [bn_ref](const KernelCall& c) { return batch_norm(bn_ref, c); },
        LayoutSupport::ChannelsLast);
  r.set_epilogue_support("BatchNormalization", EpilogueSupport::Relu);
}

}  // namespace graphfuse::kernels
