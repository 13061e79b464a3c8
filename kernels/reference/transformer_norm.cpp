// Reference kernels of ONNX Runtime's transformer normalizations, with its contrib-op
// semantics: SimplifiedLayerNormalization (RMS norm, registered by ONNX Runtime in the
// ONNX domain), com.microsoft.SkipSimplifiedLayerNormalization and
// com.microsoft.EmbedLayerNormalization. Statistics are accumulated in double.
#include <cmath>

#include "core/util.h"

namespace graphfuse::kernels {

namespace {

const float* vector_of(const Tensor* t, std::int64_t n, const char* what) {
  if (!t) return nullptr;
  check(t->num_elements() == n, std::string(what) + " must have " + std::to_string(n) +
                                    " elements, has shape " + shape_str(t->shape));
  return f32(*t, what);
}

// y = x / sqrt(mean(x^2) + eps) * gamma per row; writes 1/sqrt(...) per row when asked.
void rms_rows(const float* x, const float* gamma, float* y, std::int64_t rows, std::int64_t cols,
              float eps, float* inv_out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double ss = 0.0;
    for (std::int64_t i = 0; i < cols; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
    for (std::int64_t i = 0; i < cols; ++i) y[r * cols + i] = static_cast<float>(xr[i] * inv * gamma[i]);
    if (inv_out) inv_out[r] = static_cast<float>(inv);
  }
}

// SimplifiedLayerNormalization(X, scale) {axis = -1, epsilon = 1e-5}: normalizes over dims
// [axis, rank) (ONNX Runtime's LayerNormImpl with simplified = true); outputs Y and
// inv_std_var (X's shape with the normalized dims 1).
std::vector<Tensor> simplified_layer_norm(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  check(rank >= 1, "SimplifiedLayerNormalization input must have rank >= 1");
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", -1), rank);
  const std::int64_t cols = numel(Shape(x.shape.begin() + axis, x.shape.end()));
  check(cols > 0, "SimplifiedLayerNormalization normalized size is 0 in " + shape_str(x.shape));
  const std::int64_t rows = x.num_elements() / cols;
  Shape stat_shape = x.shape;
  for (std::int64_t d = axis; d < rank; ++d) stat_shape[d] = 1;
  Tensor y = alloc_f32(x.shape), inv = alloc_f32(stat_shape);
  rms_rows(f32(x, "X"), vector_of(&c.required(1), cols, "scale"), mut<float>(y), rows, cols,
           attr_float(c.attrs, "epsilon", 1e-5f), mut<float>(inv));
  std::vector<Tensor> out{y, inv};
  out.resize(std::max<std::size_t>(1, std::min<std::size_t>(2, c.num_outputs)));
  return out;
}

// com.microsoft.SkipSimplifiedLayerNormalization(input, skip, gamma [, bias]) {epsilon}:
// s = input + skip (+ bias), RMS norm of s over the last axis times gamma. Outputs: output,
// mean (not computed by ONNX Runtime for the simplified op: zeros here), inv_std_var,
// input_skip_bias_sum (= s).
std::vector<Tensor> skip_simplified_layer_norm(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const Tensor& skip = c.required(1);
  check(x.shape.size() >= 2, "SkipSimplifiedLayerNormalization input must have rank >= 2");
  check(skip.shape == x.shape, "skip " + shape_str(skip.shape) + " must have the input's shape " + shape_str(x.shape));
  const std::int64_t cols = x.shape.back();
  check(cols > 0, "SkipSimplifiedLayerNormalization hidden size is 0 in " + shape_str(x.shape));
  const std::int64_t rows = x.num_elements() / cols;
  Tensor sum = alloc_f32(x.shape);
  float* s = mut<float>(sum);
  const float* xp = f32(x, "input");
  const float* sp = f32(skip, "skip");
  const float* bias = vector_of(c.input(3), cols, "bias");
  for (std::int64_t i = 0; i < x.num_elements(); ++i) s[i] = xp[i] + sp[i] + (bias ? bias[i % cols] : 0.0f);
  Shape stat_shape = x.shape;
  stat_shape.back() = 1;
  Tensor y = alloc_f32(x.shape), mean = alloc_f32(stat_shape), inv = alloc_f32(stat_shape);
  rms_rows(s, vector_of(&c.required(2), cols, "gamma"), mut<float>(y), rows, cols,
           attr_float(c.attrs, "epsilon", 1e-12f), mut<float>(inv));
  std::vector<Tensor> out{y, mean, inv, sum};
  out.resize(std::max<std::size_t>(1, std::min<std::size_t>(4, c.num_outputs)));
  return out;
}

}  // namespace

void register_reference_transformer_norm(KernelRegistry& r) {
  r.add("SimplifiedLayerNormalization", simplified_layer_norm);
  r.add("com.microsoft.SkipSimplifiedLayerNormalization", skip_simplified_layer_norm);
}

}  // namespace graphfuse::kernels
