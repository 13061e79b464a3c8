// Reference normalizations: BatchNormalization, LayerNormalization, SkipLayerNormalization,
// Softmax. Statistics are accumulated in double.
#include <cmath>

#include "core/broadcast.h"

namespace graphfuse::kernels {

namespace {

// BatchNormalization (inference): y = (x - mean) / sqrt(var + eps) * scale + B per channel
// (dim 1).
std::vector<Tensor> batch_norm(const KernelCall& c) {
  check(attr_int(c.attrs, "training_mode", 0) == 0, "training_mode is not supported");
  const Tensor& x = c.required(0);
  check(x.shape.size() >= 2, "BatchNormalization input must have rank >= 2");
  const std::int64_t ch = x.shape[1];
  const float* xp = f32(x, "X");
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  const float* prm[4];
  for (int i = 0; i < 4; ++i) {
    const Tensor& t = c.required(1 + i);
    check(t.shape == Shape{ch}, std::string(names[i]) + " must have shape [" +
                                    std::to_string(ch) + "], has " + shape_str(t.shape));
    prm[i] = f32(t, names[i]);
  }
  const float eps = attr_float(c.attrs, "epsilon", 1e-5f);
  // The plane size from its dims, not numel / (outer * ch): a batch or channel count of 0
  // (an empty input, which gives an empty output) made that a division by zero.
  const std::int64_t outer = x.shape[0], inner = numel(Shape(x.shape.begin() + 2, x.shape.end()));
  Tensor y = alloc_f32(x.shape);
  float* yp = mut<float>(y);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t k = 0; k < ch; ++k) {
      const double inv = 1.0 / std::sqrt(static_cast<double>(prm[3][k]) + eps);
      for (std::int64_t i = 0; i < inner; ++i) {
        const std::int64_t idx = (o * ch + k) * inner + i;
        yp[idx] = static_cast<float>((xp[idx] - static_cast<double>(prm[2][k])) * inv * prm[0][k] +
                                     prm[1][k]);
      }
    }
  return {y};
}

// Normalizes each of `rows` rows of length `cols`; gamma/beta have `cols` elements
// (beta may be null). Writes per-row mean and 1/stddev when asked.
void normalize_rows(const float* x, const float* gamma, const float* beta, float* y,
                    std::int64_t rows, std::int64_t cols, float eps, float* mean_out,
                    float* inv_out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double mean = 0.0, var = 0.0;
    for (std::int64_t i = 0; i < cols; ++i) mean += xr[i];
    mean /= static_cast<double>(cols);
    for (std::int64_t i = 0; i < cols; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= static_cast<double>(cols);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (std::int64_t i = 0; i < cols; ++i)
      y[r * cols + i] = static_cast<float>((xr[i] - mean) * inv * gamma[i] + (beta ? beta[i] : 0.0f));
    if (mean_out) mean_out[r] = static_cast<float>(mean);
    if (inv_out) inv_out[r] = static_cast<float>(inv);
  }
}

const float* vector_param(const Tensor* t, std::int64_t cols, const char* what) {
  if (!t) return nullptr;
  check(t->num_elements() == cols, std::string(what) + " must have " + std::to_string(cols) +
                                       " elements, has shape " + shape_str(t->shape));
  return f32(*t, what);
}

// ONNX LayerNormalization (opset 17): normalize over dims [axis, rank).
std::vector<Tensor> layer_norm(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", -1), rank);
  check(attr_int(c.attrs, "stash_type", 1) == 1, "only stash_type 1 (float) is supported");
  const std::int64_t rows = numel(Shape(x.shape.begin(), x.shape.begin() + axis));
  const std::int64_t cols = x.num_elements() / std::max<std::int64_t>(rows, 1);
  Shape stat_shape = x.shape;
  for (std::int64_t d = axis; d < rank; ++d) stat_shape[d] = 1;
  Tensor y = alloc_f32(x.shape), mean = alloc_f32(stat_shape), inv = alloc_f32(stat_shape);
  normalize_rows(f32(x, "X"), vector_param(&c.required(1), cols, "Scale"),
                 vector_param(c.input(2), cols, "B"), mut<float>(y), rows, cols,
                 attr_float(c.attrs, "epsilon", 1e-5f), mut<float>(mean), mut<float>(inv));
  std::vector<Tensor> out{y, mean, inv};
  out.resize(std::max<std::size_t>(1, std::min<std::size_t>(3, c.num_outputs)));
  return out;
}

// com.microsoft.SkipLayerNormalization: s = input + skip (+ bias); LayerNorm over the last
// axis with gamma (and beta). Outputs: output, mean, inv_std_var, input_skip_bias_sum.
std::vector<Tensor> skip_layer_norm(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const Tensor& skip = c.required(1);
  check(x.shape.size() >= 2, "SkipLayerNormalization input must have rank >= 2");
  check(broadcast_shapes(skip.shape, x.shape) == x.shape,
        "skip " + shape_str(skip.shape) + " does not broadcast to input " + shape_str(x.shape));
  const std::int64_t cols = x.shape.back(), rows = x.num_elements() / cols;
  Tensor sum = alloc_f32(x.shape);
  broadcast_apply(f32(x, "input"), x.shape, f32(skip, "skip"), skip.shape, mut<float>(sum),
                  x.shape, 0, x.num_elements(), [](float a, float b) { return a + b; });
  if (const float* bias = vector_param(c.input(4), cols, "bias")) {
    float* s = mut<float>(sum);
    for (std::int64_t i = 0; i < x.num_elements(); ++i) s[i] += bias[i % cols];
  }
  Shape stat_shape = x.shape;
  stat_shape.back() = 1;
  Tensor y = alloc_f32(x.shape), mean = alloc_f32(stat_shape), inv = alloc_f32(stat_shape);
  normalize_rows(sum.as<float>(), vector_param(&c.required(2), cols, "gamma"),
                 vector_param(c.input(3), cols, "beta"), mut<float>(y), rows, cols,
                 attr_float(c.attrs, "epsilon", 1e-12f), mut<float>(mean), mut<float>(inv));
  std::vector<Tensor> out{y, mean, inv, sum};
  out.resize(std::max<std::size_t>(1, std::min<std::size_t>(4, c.num_outputs)));
  return out;
}

// Softmax (opset 13 semantics): along one axis, default the last.
std::vector<Tensor> softmax(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", -1), rank);
  const std::int64_t len = rank ? x.shape[axis] : 1;
  const std::int64_t outer = numel(Shape(x.shape.begin(), x.shape.begin() + axis));
  const std::int64_t inner = x.num_elements() / std::max<std::int64_t>(outer * len, 1);
  const float* xp = f32(x, "input");
  Tensor y = alloc_f32(x.shape);
  float* yp = mut<float>(y);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t base = o * len * inner + i;
      float mx = xp[base];
      for (std::int64_t k = 1; k < len; ++k) mx = std::max(mx, xp[base + k * inner]);
      double sum = 0.0;
      for (std::int64_t k = 0; k < len; ++k) sum += std::exp(static_cast<double>(xp[base + k * inner]) - mx);
      for (std::int64_t k = 0; k < len; ++k)
        yp[base + k * inner] =
            static_cast<float>(std::exp(static_cast<double>(xp[base + k * inner]) - mx) / sum);
    }
  return {y};
}

}  // namespace

void register_reference_norm(KernelRegistry& r) {
  r.add("BatchNormalization", batch_norm);
  r.add("LayerNormalization", layer_norm);
  r.add("com.microsoft.SkipLayerNormalization", skip_layer_norm);
  r.add("Softmax", softmax);
}

}  // namespace graphfuse::kernels
