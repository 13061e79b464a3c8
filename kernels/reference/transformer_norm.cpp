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

// Reads element i of an int32 or int64 index tensor.
std::int64_t index_at(const Tensor& t, std::int64_t i) {
  if (t.dtype == DType::Int32) return t.as<std::int32_t>()[i];
  return t.as<std::int64_t>()[i];
}

const Tensor& index_tensor(const Tensor& t, const char* what) {
  check(t.dtype == DType::Int32 || t.dtype == DType::Int64,
        std::string(what) + " must be int32 (or int64), is " + std::string(dtype_name(t.dtype)));
  check(t.has_data(), std::string(what) + " has no data");
  return t;
}

const Tensor& table(const Tensor& t, std::int64_t hidden, const char* what) {
  check(t.shape.size() == 2 && (hidden < 0 || t.shape[1] == hidden),
        std::string(what) + " must be [rows, hidden], is " + shape_str(t.shape));
  return t;
}

// com.microsoft.EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
// position_embedding, segment_embedding?, gamma, beta?, mask?, position_ids?) {epsilon}:
// out[b, s] = LayerNorm(word[ids[b, s]] + position[p(b, s)] + segment[seg[b, s]]) * gamma + beta,
// p(b, s) = position_ids[b, s] (or [0, s] for a [1, S] tensor) when given, else s.
// Outputs: output [B, S, H], mask_index [B] int32 (the number of 1s in each mask row, 0
// without a mask), embedding_sum [B, S, H] (before the norm). An index out of its table is
// an error.
std::vector<Tensor> embed_layer_norm(const KernelCall& c) {
  const Tensor& ids = index_tensor(c.required(0), "input_ids");
  check(ids.shape.size() == 2, "input_ids must be [batch, sequence], is " + shape_str(ids.shape));
  const std::int64_t batch = ids.shape[0], seq = ids.shape[1];
  const Tensor& word = table(c.required(2), -1, "word_embedding");
  const std::int64_t hidden = word.shape[1];
  check(hidden > 0, "EmbedLayerNormalization hidden size is 0");
  const Tensor& pos = table(c.required(3), hidden, "position_embedding");
  const Tensor* seg_ids = c.input(1);
  const Tensor* seg = c.input(4);
  check((seg_ids == nullptr) == (seg == nullptr), "segment_ids and segment_embedding come together");
  if (seg_ids) {
    index_tensor(*seg_ids, "segment_ids");
    check(seg_ids->shape == ids.shape, "segment_ids must have input_ids' shape " + shape_str(ids.shape));
    table(*seg, hidden, "segment_embedding");
  }
  const float* gamma = vector_of(&c.required(5), hidden, "gamma");
  const float* beta = vector_of(c.input(6), hidden, "beta");
  const Tensor* mask = c.input(7);
  if (mask) {
    index_tensor(*mask, "mask");
    check(mask->shape == ids.shape, "mask must have input_ids' shape " + shape_str(ids.shape));
  }
  const Tensor* pos_ids = c.input(8);
  if (pos_ids) {
    index_tensor(*pos_ids, "position_ids");
    check(pos_ids->shape == ids.shape || pos_ids->shape == Shape{1, seq},
          "position_ids must be [batch, sequence] or [1, sequence], is " + shape_str(pos_ids->shape));
  }
  const float* wp = f32(word, "word_embedding");
  const float* pp = f32(pos, "position_embedding");
  const float* sp = seg ? f32(*seg, "segment_embedding") : nullptr;
  const float eps = attr_float(c.attrs, "epsilon", 1e-12f);
  Tensor y = alloc_f32({batch, seq, hidden}), sum = alloc_f32({batch, seq, hidden});
  float* yp = mut<float>(y);
  float* sum_p = mut<float>(sum);
  auto row = [&](const Tensor& table_t, std::int64_t k, const char* what) {
    check(k >= 0 && k < table_t.shape[0], std::string(what) + " index " + std::to_string(k) + " is outside [0, " +
                                              std::to_string(table_t.shape[0]) + ")");
    return k * hidden;
  };
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t s = 0; s < seq; ++s) {
      const std::int64_t i = b * seq + s;
      const std::int64_t w = row(word, index_at(ids, i), "input_ids");
      const std::int64_t p =
          row(pos, pos_ids ? index_at(*pos_ids, pos_ids->shape[0] == 1 ? s : i) : s, "position");
      const std::int64_t g = seg ? row(*seg, index_at(*seg_ids, i), "segment_ids") : 0;
      float* e = sum_p + i * hidden;
      double mean = 0.0, var = 0.0;
      for (std::int64_t h = 0; h < hidden; ++h) {
        e[h] = wp[w + h] + pp[p + h] + (sp ? sp[g + h] : 0.0f);
        mean += e[h];
      }
      mean /= static_cast<double>(hidden);
      for (std::int64_t h = 0; h < hidden; ++h) var += (e[h] - mean) * (e[h] - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(hidden) + eps);
      for (std::int64_t h = 0; h < hidden; ++h)
        yp[i * hidden + h] = static_cast<float>((e[h] - mean) * inv * gamma[h] + (beta ? beta[h] : 0.0f));
    }
  Tensor mask_index = alloc(DType::Int32, {batch});
  auto* mi = mut<std::int32_t>(mask_index);
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int64_t n = 0;
    if (mask)
      for (std::int64_t s = 0; s < seq; ++s) n += index_at(*mask, b * seq + s) != 0 ? 1 : 0;
    mi[b] = static_cast<std::int32_t>(n);
  }
  std::vector<Tensor> out{y, mask_index, sum};
  out.resize(std::max<std::size_t>(1, std::min<std::size_t>(3, c.num_outputs)));
  return out;
}

}  // namespace

void register_reference_transformer_norm(KernelRegistry& r) {
  r.add("com.microsoft.EmbedLayerNormalization", embed_layer_norm);
  r.add("SimplifiedLayerNormalization", simplified_layer_norm);
  r.add("com.microsoft.SkipSimplifiedLayerNormalization", skip_simplified_layer_norm);
}

}  // namespace graphfuse::kernels
