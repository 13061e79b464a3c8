// com.microsoft.Attention, MultiHeadAttention, GroupQueryAttention and RotaryEmbedding with
// ONNX Runtime's CPU semantics (contrib op schema and CPU kernels of ONNX Runtime 1.2x-1.30):
//
//   scores = scale * Q K^T (+ mask) (+ attention_bias),  P = softmax(scores over keys),
//   output[b, s, n * Dv + d] = (P V)[b, n, s, d]
//
// scale defaults to 1/sqrt(head size). A 0/1 key mask adds mask_filter_value (default
// -10000) where it is 0; `unidirectional` adds the lowest float to every key after the
// query's own position. Past/present key-value caches, packed QKV inputs and 4-D masks are
// not supported and fail with a message naming them.
#include "core/attention_ops.h"

#include <cmath>
#include <limits>

#include "core/op_checks.h"

namespace graphfuse::kernels {

namespace {

struct Dims {
  std::int64_t b = 0, n = 0, s = 0, l = 0, dqk = 0, dv = 0;
};

// [B, L, N * D] row-major (D contiguous) -> [B, N, L, D]; adds bias[n * D + d] when given.
void to_bnsh(const float* x, const float* bias, float* y, std::int64_t b, std::int64_t l,
             std::int64_t n, std::int64_t d, std::int64_t row_stride) {
  for (std::int64_t bi = 0; bi < b; ++bi)
    for (std::int64_t li = 0; li < l; ++li) {
      const float* xr = x + (bi * l + li) * row_stride;
      for (std::int64_t ni = 0; ni < n; ++ni)
        for (std::int64_t di = 0; di < d; ++di)
          y[((bi * n + ni) * l + li) * d + di] = xr[ni * d + di] + (bias ? bias[ni * d + di] : 0.0f);
    }
}

// The additive key mask [B, S, L] from an int32 mask and the causal flag (null when
// neither applies). Forms, as ONNX Runtime's CPU kernels read them: [B, L] raw 0/1 mask;
// [B, S, L] raw mask; [B] the end position of each batch's valid keys (right padding).
std::vector<float> key_mask(const Tensor* m, const Dims& d, bool causal, float filter) {
  if (!m && !(causal && d.s > 1)) return {};
  std::vector<float> out(static_cast<std::size_t>(d.b * d.s * d.l), 0.0f);
  if (m) {
    const std::vector<std::int64_t> v = int_values(*m, "mask");
    const Shape& ms = m->shape;
    if (ms == Shape{d.b, d.l}) {
      for (std::int64_t b = 0; b < d.b; ++b)
        for (std::int64_t s = 0; s < d.s; ++s)
          for (std::int64_t l = 0; l < d.l; ++l)
            out[static_cast<std::size_t>((b * d.s + s) * d.l + l)] = v[static_cast<std::size_t>(b * d.l + l)] > 0 ? 0.0f : filter;
    } else if (ms == Shape{d.b, d.s, d.l}) {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = v[i] > 0 ? 0.0f : filter;
    } else if (ms == Shape{d.b}) {
      for (std::int64_t b = 0; b < d.b; ++b)
        for (std::int64_t s = 0; s < d.s; ++s)
          for (std::int64_t l = std::max<std::int64_t>(0, v[static_cast<std::size_t>(b)]); l < d.l; ++l)
            out[static_cast<std::size_t>((b * d.s + s) * d.l + l)] = filter;
    } else {
      fail("mask of shape " + shape_str(ms) + " is not supported: expected [" + std::to_string(d.b) + ", " +
           std::to_string(d.l) + "], [" + std::to_string(d.b) + ", " + std::to_string(d.s) + ", " +
           std::to_string(d.l) + "] or [" + std::to_string(d.b) + "]");
    }
  }
  if (causal && d.s > 1) {
    // Query s sees keys up to its own position, counted from the end of the keys (a query
    // block of S after L - S past keys), as ONNX Runtime's PrepareMask does.
    const std::int64_t past = d.l - d.s;
    for (std::int64_t b = 0; b < d.b; ++b)
      for (std::int64_t s = 0; s < d.s; ++s)
        for (std::int64_t l = past + s + 1; l < d.l; ++l)
          out[static_cast<std::size_t>((b * d.s + s) * d.l + l)] = std::numeric_limits<float>::lowest();
  }
  return out;
}

// Attention over q [B, N, S, Dqk], k [B, N, L, Dqk], v [B, N, L, Dv]; writes [B, S, N * Dv].
void attend(BatchedGemm gemm, const Dims& d, const float* q, const float* k, const float* v, float scale,
            const std::vector<float>& mask, const Tensor* bias, float* out) {
  const std::int64_t bn = d.b * d.n;
  std::vector<float> p(static_cast<std::size_t>(bn * d.s * d.l));
  gemm(q, k, p.data(), bn, d.s, d.l, d.dqk, true);
  const float* bp = nullptr;
  std::vector<std::int64_t> bst;
  if (bias) {
    check(bias->shape.size() == 4 && bias->shape[2] == d.s && bias->shape[3] == d.l &&
              (bias->shape[0] == 1 || bias->shape[0] == d.b) && (bias->shape[1] == 1 || bias->shape[1] == d.n),
          "attention_bias must have shape [" + std::to_string(d.b) + " or 1, " + std::to_string(d.n) + " or 1, " +
              std::to_string(d.s) + ", " + std::to_string(d.l) + "], has " + shape_str(bias->shape));
    bp = f32(*bias, "attention_bias");
    bst = broadcast_strides(bias->shape, Shape{d.b, d.n, d.s, d.l});
  }
  for (std::int64_t b = 0; b < d.b; ++b)
    for (std::int64_t n = 0; n < d.n; ++n)
      for (std::int64_t s = 0; s < d.s; ++s) {
        float* row = p.data() + ((b * d.n + n) * d.s + s) * d.l;
        const float* mrow = mask.empty() ? nullptr : mask.data() + (b * d.s + s) * d.l;
        const float* brow = bp ? bp + b * bst[0] + n * bst[1] + s * bst[2] : nullptr;
        float mx = -std::numeric_limits<float>::infinity();
        for (std::int64_t l = 0; l < d.l; ++l) {
          float x = row[l] * scale;
          if (mrow) x += mrow[l];
          if (brow) x += brow[l * bst[3]];
          row[l] = x;
          mx = std::max(mx, x);
        }
        double sum = 0.0;
        for (std::int64_t l = 0; l < d.l; ++l) {
          const double e = std::isinf(mx) && mx < 0 ? 1.0 : std::exp(static_cast<double>(row[l]) - mx);
          row[l] = static_cast<float>(e);
          sum += e;
        }
        for (std::int64_t l = 0; l < d.l; ++l) row[l] = static_cast<float>(row[l] / sum);
      }
  std::vector<float> ctx(static_cast<std::size_t>(bn * d.s * d.dv));
  gemm(p.data(), v, ctx.data(), bn, d.s, d.dv, d.l, false);
  for (std::int64_t b = 0; b < d.b; ++b)
    for (std::int64_t s = 0; s < d.s; ++s)
      for (std::int64_t n = 0; n < d.n; ++n)
        for (std::int64_t e = 0; e < d.dv; ++e)
          out[((b * d.s + s) * d.n + n) * d.dv + e] = ctx[static_cast<std::size_t>(((b * d.n + n) * d.s + s) * d.dv + e)];
}

float scale_of(const Attributes& a, std::int64_t head) {
  const float s = attr_float(a, "scale", 0.0f);
  return s == 0.0f ? 1.0f / std::sqrt(static_cast<float>(head)) : s;
}

std::int64_t heads_of(const Attributes& a) {
  const std::int64_t n = attr_int(a, "num_heads", 0);
  check(n > 0, "num_heads must be a positive integer, is " + std::to_string(n));
  return n;
}

void check_dividable(std::int64_t hidden, std::int64_t n, const char* what) {
  check(hidden % n == 0, std::string(what) + " hidden size " + std::to_string(hidden) + " is not a multiple of num_heads " +
                             std::to_string(n));
}

// present key/value [B, N, L, D] as output tensors.
Tensor bnsh_tensor(const std::vector<float>& x, const Dims& d, std::int64_t dh) {
  Tensor t = alloc_f32({d.b, d.n, d.l, dh});
  std::copy(x.begin(), x.end(), mut<float>(t));
  return t;
}

std::vector<Tensor> multi_head_attention(BatchedGemm gemm, const KernelCall& c) {
  const std::int64_t n = heads_of(c.attrs);
  const Tensor& q = c.required(0);
  check(c.input(1) && c.input(2), "key and value are required (packed QKV in query is not supported)");
  const Tensor& k = *c.input(1);
  const Tensor& v = *c.input(2);
  for (std::size_t i = 6; i < c.inputs.size(); ++i)
    check(!c.input(i), "input " + std::to_string(i) + " (past state or cache) is not supported");
  check(c.num_outputs <= 3, "output 3 (qk) is not supported");
  check(q.shape.size() == 3 && k.shape.size() == 3 && v.shape.size() == 3,
        "query, key and value must have rank 3 ([batch, sequence, hidden]), have " + shape_str(q.shape) + ", " +
            shape_str(k.shape) + ", " + shape_str(v.shape));
  Dims d{q.shape[0], n, q.shape[1], k.shape[1], 0, 0};
  check_dividable(q.shape[2], n, "query");
  check_dividable(v.shape[2], n, "value");
  d.dqk = q.shape[2] / n;
  d.dv = v.shape[2] / n;
  check(k.shape[0] == d.b && v.shape[0] == d.b && k.shape[2] == q.shape[2] && v.shape[1] == d.l,
        "key " + shape_str(k.shape) + " and value " + shape_str(v.shape) + " do not fit query " + shape_str(q.shape));
  const float* bias = nullptr;
  if (const Tensor* bt = c.input(3)) {
    check(bt->shape == Shape{2 * q.shape[2] + v.shape[2]},
          "bias must have shape [" + std::to_string(2 * q.shape[2] + v.shape[2]) + "], has " + shape_str(bt->shape));
    bias = f32(*bt, "bias");
  }
  std::vector<float> qb(static_cast<std::size_t>(d.b * d.n * d.s * d.dqk)), kb(static_cast<std::size_t>(d.b * d.n * d.l * d.dqk)),
      vb(static_cast<std::size_t>(d.b * d.n * d.l * d.dv));
  to_bnsh(f32(q, "query"), bias, qb.data(), d.b, d.s, d.n, d.dqk, q.shape[2]);
  to_bnsh(f32(k, "key"), bias ? bias + q.shape[2] : nullptr, kb.data(), d.b, d.l, d.n, d.dqk, k.shape[2]);
  to_bnsh(f32(v, "value"), bias ? bias + 2 * q.shape[2] : nullptr, vb.data(), d.b, d.l, d.n, d.dv, v.shape[2]);
  const bool causal = attr_int(c.attrs, "unidirectional", 0) != 0;
  const std::vector<float> mask = key_mask(c.input(4), d, causal, attr_float(c.attrs, "mask_filter_value", -10000.0f));
  Tensor y = alloc_f32({d.b, d.s, d.n * d.dv});
  attend(gemm, d, qb.data(), kb.data(), vb.data(), scale_of(c.attrs, d.dqk), mask, c.input(5), mut<float>(y));
  std::vector<Tensor> out{y};
  if (c.num_outputs > 1) out.push_back(bnsh_tensor(kb, d, d.dqk));
  if (c.num_outputs > 2) out.push_back(bnsh_tensor(vb, d, d.dv));
  return out;
}

// GroupQueryAttention on a first prompt (no KV cache: sequence length == total_sequence_length):
// query [B, S, N * H], key and value [B, S, Nkv * H] (or all three packed in query as
// [B, S, (N + 2 Nkv) H]); head n reads key/value head n / (N / Nkv). Always causal, as ONNX
// Runtime's kernel: query s of batch b sees keys l with l <= s and l <= seqlens_k[b] (the
// batch's last valid position), within local_window_size of s when that is >= 0; the rest
// take no probability. ONNX Runtime leaves the rows of queries past seqlens_k[b] to stale
// buffer contents; here they see keys up to seqlens_k[b]. present_key/value are K and V in
// [B, Nkv, S, H]. Past caches, do_rotary, softcap, smooth_softmax, head sinks, quantized
// caches and the qk output fail with a message naming them.
std::vector<Tensor> group_query_attention(BatchedGemm gemm, const KernelCall& c) {
  const std::int64_t n = heads_of(c.attrs);
  const std::int64_t nkv = attr_int(c.attrs, "kv_num_heads", 0);
  check(nkv > 0 && n % nkv == 0, "kv_num_heads " + std::to_string(nkv) + " must be a positive divisor of num_heads " +
                                     std::to_string(n));
  check(!c.input(3) && !c.input(4), "past_key/past_value (a KV cache) is not supported");
  for (std::size_t i = 7; i < c.inputs.size(); ++i)
    check(i == 10 || !c.input(i), "input " + std::to_string(i) + " (rotary caches, position_ids, head_sink or KV scales) is not supported");
  check(attr_int(c.attrs, "do_rotary", 0) == 0, "do_rotary is not supported (apply RotaryEmbedding to query and key)");
  check(attr_float(c.attrs, "softcap", 0.0f) == 0.0f, "softcap is not supported");
  check(attr_int(c.attrs, "smooth_softmax", 0) == 0, "smooth_softmax is not supported");
  check(attr_int(c.attrs, "qk_output", 0) == 0 && c.num_outputs <= 3, "output 3 (qk) is not supported");
  const Tensor& q = c.required(0);
  check(q.shape.size() == 3, "query must have rank 3 ([batch, sequence, hidden]), has " + shape_str(q.shape));
  const std::int64_t b = q.shape[0], s = q.shape[1];
  const bool packed = !c.input(1);
  check(packed == !c.input(2), "key and value must be both given or both absent (packed QKV)");
  const std::int64_t qkv_heads = packed ? n + 2 * nkv : n;
  check_dividable(q.shape[2], qkv_heads, packed ? "packed QKV (num_heads + 2 kv_num_heads)" : "query");
  const std::int64_t h = q.shape[2] / qkv_heads;
  const float* kp = nullptr;
  const float* vp = nullptr;
  std::int64_t kv_stride = q.shape[2];
  if (!packed) {
    const Tensor& k = *c.input(1);
    const Tensor& v = *c.input(2);
    check(k.shape == Shape{b, s, nkv * h} && v.shape == k.shape,
          "key " + shape_str(k.shape) + " and value " + shape_str(v.shape) + " must have shape [" + std::to_string(b) + ", " +
              std::to_string(s) + ", " + std::to_string(nkv * h) + "] (kv_num_heads x the query's head size)");
    kp = f32(k, "key");
    vp = f32(v, "value");
    kv_stride = nkv * h;
  }
  const std::vector<std::int64_t> seqlens = int_values(c.required(5), "seqlens_k");
  const std::vector<std::int64_t> total = int_values(c.required(6), "total_sequence_length");
  check(c.required(5).shape == Shape{b}, "seqlens_k must have shape [" + std::to_string(b) + "], has " + shape_str(c.required(5).shape));
  check(total.size() == 1, "total_sequence_length must have one element, has " + std::to_string(total.size()));
  check(total[0] == s, "total_sequence_length " + std::to_string(total[0]) + " differs from the sequence length " +
                           std::to_string(s) + ": only a first prompt (no KV cache) is supported");
  for (std::int64_t v : seqlens)
    check(v >= 0 && v < s, "seqlens_k value " + std::to_string(v) + " is outside [0, " + std::to_string(s) + ")");
  const float* qp = f32(q, "query");
  if (packed) {
    kp = qp + n * h;
    vp = qp + (n + nkv) * h;
  }
  // K and V once per kv head (the present outputs), then repeated to the query heads.
  Dims kv{b, nkv, s, s, h, h};
  std::vector<float> kb(static_cast<std::size_t>(b * nkv * s * h)), vb(kb.size());
  to_bnsh(kp, nullptr, kb.data(), b, s, nkv, h, kv_stride);
  to_bnsh(vp, nullptr, vb.data(), b, s, nkv, h, kv_stride);
  Dims d{b, n, s, s, h, h};
  std::vector<float> qb(static_cast<std::size_t>(b * n * s * h)), kr(qb.size()), vr(qb.size());
  to_bnsh(qp, nullptr, qb.data(), b, s, n, h, q.shape[2]);
  const std::int64_t group = n / nkv, plane = s * h;
  for (std::int64_t bi = 0; bi < b; ++bi)
    for (std::int64_t ni = 0; ni < n; ++ni) {
      const std::size_t from = static_cast<std::size_t>((bi * nkv + ni / group) * plane);
      const std::size_t to = static_cast<std::size_t>((bi * n + ni) * plane);
      std::copy_n(kb.begin() + from, plane, kr.begin() + to);
      std::copy_n(vb.begin() + from, plane, vr.begin() + to);
    }
  // -inf (not the lowest float) outside the window, so that no bias can bring a key back.
  const std::int64_t window = attr_int(c.attrs, "local_window_size", -1);
  check(window != 0, "local_window_size 0 (no key at all) is not supported");
  std::vector<float> mask(static_cast<std::size_t>(b * s * s), 0.0f);
  for (std::int64_t bi = 0; bi < b; ++bi)
    for (std::int64_t si = 0; si < s; ++si)
      for (std::int64_t l = 0; l < s; ++l) {
        const bool seen = l <= si && l <= seqlens[static_cast<std::size_t>(bi)] && (window < 0 || si - l < window);
        if (!seen) mask[static_cast<std::size_t>((bi * s + si) * s + l)] = -std::numeric_limits<float>::infinity();
      }
  Tensor y = alloc_f32({b, s, n * h});
  attend(gemm, d, qb.data(), kr.data(), vr.data(), scale_of(c.attrs, h), mask, c.input(10), mut<float>(y));
  std::vector<Tensor> out{y};
  if (c.num_outputs > 1) out.push_back(bnsh_tensor(kb, kv, h));
  if (c.num_outputs > 2) out.push_back(bnsh_tensor(vb, kv, h));
  return out;
}

// Attention: Q, K, V = input * weights + bias, split by qkv_hidden_sizes (default three equal parts).
std::vector<Tensor> packed_attention(BatchedGemm gemm, const KernelCall& c) {
  const std::int64_t n = heads_of(c.attrs);
  const Tensor& x = c.required(0);
  const Tensor& w = c.required(1);
  check(!c.input(4) && !c.input(6), "past state is not supported");
  check(attr_int(c.attrs, "do_rotary", 0) == 0, "do_rotary is not supported");
  check(attr_int(c.attrs, "past_present_share_buffer", 0) == 0, "past_present_share_buffer is not supported");
  check(x.shape.size() == 3, "input must have rank 3 ([batch, sequence, hidden]), has " + shape_str(x.shape));
  check(w.shape.size() == 2 && w.shape[0] == x.shape[2],
        "weights must have shape [" + std::to_string(x.shape[2]) + ", 3 * hidden], has " + shape_str(w.shape));
  std::vector<std::int64_t> sizes = attr_ints(c.attrs, "qkv_hidden_sizes");
  if (sizes.empty()) {
    check(w.shape[1] % 3 == 0, "weights' second dim " + std::to_string(w.shape[1]) + " is not 3 * hidden");
    sizes = {w.shape[1] / 3, w.shape[1] / 3, w.shape[1] / 3};
  }
  check(sizes.size() == 3 && sizes[0] == sizes[1] && sizes[0] > 0 && sizes[2] > 0 &&
            sizes[0] + sizes[1] + sizes[2] == w.shape[1],
        "qkv_hidden_sizes " + shape_str(sizes) + " do not fit weights " + shape_str(w.shape));
  check_dividable(sizes[0], n, "Q/K");
  check_dividable(sizes[2], n, "V");
  const std::int64_t tot = w.shape[1], rows = x.shape[0] * x.shape[1];
  std::vector<float> proj(static_cast<std::size_t>(rows * tot));
  gemm(f32(x, "input"), f32(w, "weights"), proj.data(), 1, rows, tot, x.shape[2], false);
  const float* bias = nullptr;
  if (const Tensor* bt = c.input(2)) {
    check(bt->shape == Shape{tot}, "bias must have shape [" + std::to_string(tot) + "], has " + shape_str(bt->shape));
    bias = f32(*bt, "bias");
  }
  Dims d{x.shape[0], n, x.shape[1], x.shape[1], sizes[0] / n, sizes[2] / n};
  std::vector<float> qb(static_cast<std::size_t>(d.b * d.n * d.s * d.dqk)), kb(qb.size()),
      vb(static_cast<std::size_t>(d.b * d.n * d.l * d.dv));
  to_bnsh(proj.data(), bias, qb.data(), d.b, d.s, d.n, d.dqk, tot);
  to_bnsh(proj.data() + sizes[0], bias ? bias + sizes[0] : nullptr, kb.data(), d.b, d.l, d.n, d.dqk, tot);
  to_bnsh(proj.data() + 2 * sizes[0], bias ? bias + 2 * sizes[0] : nullptr, vb.data(), d.b, d.l, d.n, d.dv, tot);
  const bool causal = attr_int(c.attrs, "unidirectional", 0) != 0;
  const std::vector<float> mask = key_mask(c.input(3), d, causal, attr_float(c.attrs, "mask_filter_value", -10000.0f));
  Tensor y = alloc_f32({d.b, d.s, d.n * d.dv});
  attend(gemm, d, qb.data(), kb.data(), vb.data(), scale_of(c.attrs, d.dqk), mask, c.input(5), mut<float>(y));
  std::vector<Tensor> out{y};
  if (c.num_outputs > 1) {
    check(d.dqk == d.dv, "present needs equal Q/K and V head sizes");
    Tensor present = alloc_f32({2, d.b, d.n, d.l, d.dv});
    std::copy(kb.begin(), kb.end(), mut<float>(present));
    std::copy(vb.begin(), vb.end(), mut<float>(present) + kb.size());
    out.push_back(present);
  }
  return out;
}

// RotaryEmbedding: each head's first rotary_dim elements rotate by the angle whose cosine
// and sine are row `position` of the caches: non-interleaved pairs (i, i + half),
// interleaved pairs (2i, 2i + 1); the rest of the head is copied.
std::vector<Tensor> rotary_embedding(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const Tensor& pos = c.required(1);
  const Tensor& cs = c.required(2);
  const Tensor& sn = c.required(3);
  check(attr_int(c.attrs, "is_packed_batching", 0) == 0, "is_packed_batching is not supported");
  check(x.shape.size() == 3 || x.shape.size() == 4, "input must have rank 3 or 4, has " + shape_str(x.shape));
  check(cs.shape.size() == 2 && cs.shape == sn.shape,
        "cos_cache " + shape_str(cs.shape) + " and sin_cache " + shape_str(sn.shape) + " must be 2-D of one shape");
  const bool bnsh = x.shape.size() == 4;
  const std::int64_t b = x.shape[0], s = bnsh ? x.shape[2] : x.shape[1];
  const std::int64_t hidden = bnsh ? x.shape[1] * x.shape[3] : x.shape[2];
  const std::int64_t rot_attr = attr_int(c.attrs, "rotary_embedding_dim", 0);
  std::int64_t heads = attr_int(c.attrs, "num_heads", 0);
  check(rot_attr == 0 || heads > 0, "num_heads must be given with rotary_embedding_dim");
  const std::int64_t head = rot_attr == 0 ? cs.shape[1] * 2 : hidden / heads;
  check(head > 0 && hidden % head == 0, "hidden size " + std::to_string(hidden) + " is not a multiple of the head size " +
                                            std::to_string(head));
  if (heads <= 0) heads = hidden / head;
  if (bnsh) check(x.shape[3] == head, "a 4-D input's last dim " + std::to_string(x.shape[3]) + " must be the head size " + std::to_string(head));
  const std::int64_t rot = rot_attr > 0 ? rot_attr : head, half = rot / 2;
  check(rot <= head && rot % 2 == 0 && cs.shape[1] == half,
        "cos_cache's second dim " + std::to_string(cs.shape[1]) + " must be half the rotary dim " + std::to_string(rot));
  const std::vector<std::int64_t> p = int_values(pos, "position_ids");
  const bool per_token = pos.num_elements() != 1;
  check(!per_token || pos.shape == Shape{b, s}, "position_ids must have one element or shape [" + std::to_string(b) + ", " +
                                                    std::to_string(s) + "], has " + shape_str(pos.shape));
  const float* xp = f32(x, "input");
  const float* cp = f32(cs, "cos_cache");
  const float* sp = f32(sn, "sin_cache");
  Tensor y = alloc_f32(x.shape);
  float* yp = mut<float>(y);
  const bool inter = attr_int(c.attrs, "interleaved", 0) != 0;
  for (std::int64_t bi = 0; bi < b; ++bi)
    for (std::int64_t si = 0; si < s; ++si) {
      const std::int64_t at = per_token ? p[static_cast<std::size_t>(bi * s + si)] : p[0] + si;
      check(at >= 0 && at < cs.shape[0], "position " + std::to_string(at) + " is outside the caches' " +
                                             std::to_string(cs.shape[0]) + " rows");
      const float* cr = cp + at * half;
      const float* sr = sp + at * half;
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t off = bnsh ? ((bi * heads + h) * s + si) * head : (bi * s + si) * hidden + h * head;
        const float* in = xp + off;
        float* o = yp + off;
        for (std::int64_t i = 0; i < rot; ++i) {
          std::int64_t ci, j;
          bool second;
          if (inter) {
            ci = i / 2;
            second = (i & 1) != 0;
            j = second ? i - 1 : i + 1;
          } else {
            ci = i % half;
            second = i >= half;
            j = (i + half) % rot;
          }
          const float r = in[i] * cr[ci];
          o[i] = second ? r + in[j] * sr[ci] : r - in[j] * sr[ci];
        }
        for (std::int64_t i = rot; i < head; ++i) o[i] = in[i];
      }
    }
  return {y};
}

}  // namespace

void register_attention_ops(KernelRegistry& r, BatchedGemm gemm) {
  // A lambda per op captures the product; KernelFn is a std::function.
  r.add("com.microsoft.MultiHeadAttention", [gemm](const KernelCall& c) { return multi_head_attention(gemm, c); });
  r.add("com.microsoft.Attention", [gemm](const KernelCall& c) { return packed_attention(gemm, c); });
  r.add("com.microsoft.GroupQueryAttention", [gemm](const KernelCall& c) { return group_query_attention(gemm, c); });
  r.add("com.microsoft.RotaryEmbedding", rotary_embedding);
}

}  // namespace graphfuse::kernels
