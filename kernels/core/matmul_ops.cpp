// MatMul / Gemm / FusedMatMul: shapes, broadcasting and attributes -> MatMulSpec.
#include "core/matmul_ops.h"

#include <cstring>

namespace graphfuse::kernels {

namespace {

// ONNX MatMul semantics (numpy matmul): 1-D operands are promoted and the promoted dim
// dropped from the result; leading dims broadcast.
// FusedMatMul's transBatch: dim 0 moves behind the batch dims, [d0, d1..dk, m] ->
// [d1..dk, d0, m] (the Transpose that ONNX Runtime folds into the op). Materialized as row
// copies: each of the d0 x (d1 * ... * dk) rows of m elements moves whole (the generic
// Transpose kernel's per-element indexing was 3x the product itself on transformer_encoder).
Tensor trans_batch(const Tensor& t) {
  const auto r = t.shape.size();
  check(r >= 3, "transBatch needs rank >= 3, got " + shape_str(t.shape));
  const std::int64_t d0 = t.shape[0], m = t.shape[r - 1];
  const std::int64_t inner = numel(Shape(t.shape.begin() + 1, t.shape.end() - 1));
  Shape out_shape(t.shape.begin() + 1, t.shape.end() - 1);
  out_shape.push_back(d0);
  out_shape.push_back(m);
  Tensor y = alloc_f32(out_shape);
  const float* x = f32(t, "transBatch input");
  float* yp = mut<float>(y);
  const auto row = static_cast<std::size_t>(m) * sizeof(float);
  for (std::int64_t i = 0; i < d0; ++i)
    for (std::int64_t j = 0; j < inner; ++j)
      if (row) std::memcpy(yp + (j * d0 + i) * m, x + (i * inner + j) * m, row);
  return y;
}

std::vector<Tensor> matmul(MatMulImpl impl, const KernelCall& c, bool fused) {
  Tensor a_tb, b_tb;
  const Tensor* ap = &c.required(0);
  const Tensor* bp = &c.required(1);
  MatMulSpec s;
  if (fused) {
    s.trans_a = attr_int(c.attrs, "transA", 0) != 0;
    s.trans_b = attr_int(c.attrs, "transB", 0) != 0;
    s.alpha = attr_float(c.attrs, "alpha", 1.0f);
    if (attr_int(c.attrs, "transBatchA", 0) != 0) ap = &(a_tb = trans_batch(*ap));
    if (attr_int(c.attrs, "transBatchB", 0) != 0) bp = &(b_tb = trans_batch(*bp));
  }
  const Tensor& a = *ap;
  const Tensor& b = *bp;
  check(!a.shape.empty() && !b.shape.empty(), "MatMul inputs must have rank >= 1");
  Shape as = a.shape, bs = b.shape;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  check(!(a_vec && s.trans_a) && !(b_vec && s.trans_b), "cannot transpose a 1-D operand");
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const std::int64_t am = as[as.size() - 2], ak = as.back();
  const std::int64_t bk = bs[bs.size() - 2], bn = bs.back();
  s.m = s.trans_a ? ak : am;
  s.k = s.trans_a ? am : ak;
  s.n = s.trans_b ? bk : bn;
  const std::int64_t kb = s.trans_b ? bn : bk;
  check(s.k == kb, "inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  s.batch = broadcast_shapes(a_batch, b_batch);
  const auto sa = broadcast_strides(a_batch, s.batch), sb = broadcast_strides(b_batch, s.batch);
  const std::int64_t nb = numel(s.batch);
  for (std::int64_t i = 0; i < nb; ++i) {
    std::int64_t rest = i, oa = 0, ob = 0;
    for (std::size_t d = s.batch.size(); d-- > 0;) {
      const std::int64_t idx = rest % s.batch[d];
      rest /= s.batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    s.a_off.push_back(oa * s.m * s.k);
    s.b_off.push_back(ob * s.k * s.n);
  }
  Shape ys = s.batch;
  if (!a_vec) ys.push_back(s.m);
  if (!b_vec) ys.push_back(s.n);
  Tensor y = alloc_f32(ys);  // zero-filled
  // Nothing to multiply: an empty output (a batch, M or N of 0) or K = 0 (each element an
  // empty sum, 0). Handled here for both sets: oneDNN ran an M x N product into the empty
  // buffer of a 0 batch (heap corruption), and 0-sized descriptors are invalid.
  if (y.num_elements() == 0 || s.k == 0) return {y};
  impl(s, f32(a, "A"), f32(b, "B"), nullptr, mut<float>(y), 
       c.is_const(1) ? std::shared_ptr<const void>(b.data) : nullptr);
  return {y};
}

// ONNX Gemm: Y = alpha * op(A) * op(B) + beta * C, A and B 2-D, C unidirectionally
// broadcast to [M, N].
std::vector<Tensor> gemm(MatMulImpl impl, const KernelCall& c, bool fused) {
  const Tensor& a = c.required(0);
  const Tensor& b = c.required(1);
  check(a.shape.size() == 2 && b.shape.size() == 2, "Gemm inputs must be 2-D");
  MatMulSpec s;
  s.trans_a = attr_int(c.attrs, "transA", 0) != 0;
  s.trans_b = attr_int(c.attrs, "transB", 0) != 0;
  s.alpha = attr_float(c.attrs, "alpha", 1.0f);
  s.beta = attr_float(c.attrs, "beta", 1.0f);
  if (fused) {
    // FusedGemm: Gemm, then `activation` with activation_alpha / activation_beta.
    std::vector<float> params;
    if (has_attr(c.attrs, "activation_alpha")) params.push_back(attr_float(c.attrs, "activation_alpha", 0.0f));
    if (has_attr(c.attrs, "activation_beta")) params.push_back(attr_float(c.attrs, "activation_beta", 0.0f));
    s.act = parse_activation(attr_string(c.attrs, "activation", ""), params);
  }
  s.m = s.trans_a ? a.shape[1] : a.shape[0];
  s.k = s.trans_a ? a.shape[0] : a.shape[1];
  s.n = s.trans_b ? b.shape[0] : b.shape[1];
  check((s.trans_b ? b.shape[1] : b.shape[0]) == s.k,
        "inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  s.a_off = {0};
  s.b_off = {0};
  const Tensor* cm = c.input(2);
  if (cm) {
    check(cm->shape.size() <= 2, "Gemm C must have rank <= 2");
    check(broadcast_shapes(cm->shape, {s.m, s.n}) == Shape{s.m, s.n},
          "C " + shape_str(cm->shape) + " does not broadcast to [M, N]");
    const auto st = broadcast_strides(cm->shape, {s.m, s.n});
    s.has_c = true;
    s.c_rs = st[0];
    s.c_cs = st[1];
  }
  Tensor y = alloc_f32({s.m, s.n});
  if (y.num_elements() == 0) return {y};  // M or N of 0: see matmul()
  if (s.k == 0) {
    // alpha * (empty sum) = 0, so y = act(beta * C), without a 0-sized primitive.
    const float* cp = cm ? f32(*cm, "C") : nullptr;
    float* yp = mut<float>(y);
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j)
        yp[i * s.n + j] = s.act.apply(cp ? s.beta * cp[i * s.c_rs + j * s.c_cs] : 0.0f);
    return {y};
  }
  impl(s, f32(a, "A"), f32(b, "B"), cm ? f32(*cm, "C") : nullptr, mut<float>(y), 
       c.is_const(1) ? std::shared_ptr<const void>(b.data) : nullptr);
  return {y};
}

}  // namespace

void register_matmul_ops(KernelRegistry& r, MatMulImpl impl) {
  r.add("MatMul", [impl](const KernelCall& c) { return matmul(impl, c, false); });
  r.add("com.microsoft.FusedMatMul", [impl](const KernelCall& c) { return matmul(impl, c, true); });
  r.add("Gemm", [impl](const KernelCall& c) { return gemm(impl, c, false); });
  r.add("com.microsoft.FusedGemm", [impl](const KernelCall& c) { return gemm(impl, c, true); });
}

}  // namespace graphfuse::kernels
