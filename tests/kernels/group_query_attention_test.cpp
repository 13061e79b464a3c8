// com.microsoft.GroupQueryAttention (kernels/core/attention_ops.cpp) against attention
// written out here, one query row at a time: head n reads key/value head n / (N / Nkv),
// query s of batch b sees keys l <= s with l <= seqlens_k[b] (and s - l < local_window_size
// when that is set), attention_bias is added, softmax over what it sees.
#include <cmath>
#include <string>

#include "graphfuse/error.h"
#include "kernels/test_util.h"

namespace {

using graphfuse::Error;

Tensor i32(Shape shape, const std::vector<std::int32_t>& v) { return typed(DType::Int32, std::move(shape), v); }

struct Case {
  std::int64_t b, s, n, nkv, h;
  std::vector<std::int32_t> seqlens;
  std::int64_t window = -1;
  Shape bias_shape;  // empty: no attention_bias
  float scale = 0.0f;
};

// [B, S, N * H] from q [B, S, N * H], k and v [B, S, Nkv * H] and bias (broadcast over batch and heads).
std::vector<float> expected(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                            const std::vector<float>& v, const std::vector<float>& bias) {
  const float scale = c.scale != 0.0f ? c.scale : 1.0f / std::sqrt(static_cast<float>(c.h));
  std::vector<float> out(static_cast<std::size_t>(c.b * c.s * c.n * c.h));
  for (std::int64_t b = 0; b < c.b; ++b)
    for (std::int64_t n = 0; n < c.n; ++n)
      for (std::int64_t s = 0; s < c.s; ++s) {
        const std::int64_t kvh = n / (c.n / c.nkv);
        std::vector<double> p(static_cast<std::size_t>(c.s), 0.0);
        double mx = -INFINITY, sum = 0.0;
        for (std::int64_t l = 0; l < c.s; ++l) {
          const bool seen = l <= s && l <= c.seqlens[static_cast<std::size_t>(b)] && (c.window < 0 || s - l < c.window);
          if (!seen) continue;
          double dot = 0.0;
          for (std::int64_t d = 0; d < c.h; ++d)
            dot += static_cast<double>(q[static_cast<std::size_t>((b * c.s + s) * c.n * c.h + n * c.h + d)]) *
                   k[static_cast<std::size_t>((b * c.s + l) * c.nkv * c.h + kvh * c.h + d)];
          double x = dot * scale;
          if (!c.bias_shape.empty()) {
            const std::int64_t bb = c.bias_shape[0] == 1 ? 0 : b, nn = c.bias_shape[1] == 1 ? 0 : n;
            x += bias[static_cast<std::size_t>(((bb * c.bias_shape[1] + nn) * c.s + s) * c.s + l)];
          }
          p[static_cast<std::size_t>(l)] = x;
          mx = std::max(mx, x);
        }
        for (std::int64_t l = 0; l < c.s; ++l) {
          const bool seen = l <= s && l <= c.seqlens[static_cast<std::size_t>(b)] && (c.window < 0 || s - l < c.window);
          p[static_cast<std::size_t>(l)] = seen ? std::exp(p[static_cast<std::size_t>(l)] - mx) : 0.0;
          sum += p[static_cast<std::size_t>(l)];
        }
        for (std::int64_t d = 0; d < c.h; ++d) {
          double acc = 0.0;
          for (std::int64_t l = 0; l < c.s; ++l)
            acc += p[static_cast<std::size_t>(l)] / sum * v[static_cast<std::size_t>((b * c.s + l) * c.nkv * c.h + kvh * c.h + d)];
          out[static_cast<std::size_t>((b * c.s + s) * c.n * c.h + n * c.h + d)] = static_cast<float>(acc);
        }
      }
  return out;
}

Attributes gqa_attrs(const Case& c) {
  Attributes a = attrs({{"num_heads", c.n}, {"kv_num_heads", c.nkv}});
  if (c.window >= 0) a.set("local_window_size", c.window);
  if (c.scale != 0.0f) a.set("scale", c.scale);
  return a;
}

TEST(GroupQueryAttention, MatchesAttentionWrittenOut) {
  const Case cases[] = {
      {2, 5, 4, 2, 3, {4, 4}, -1, {}, 0.0f},                  // each kv head serves two query heads
      {2, 6, 6, 2, 2, {5, 3}, -1, {2, 1, 6, 6}, 0.0f},        // right padding; a per-batch bias
      {1, 7, 4, 1, 4, {6}, 3, {1, 4, 7, 7}, 0.5f},            // local window, per-head bias, scale
      {3, 4, 2, 2, 5, {3, 0, 2}, -1, {1, 1, 4, 4}, 0.0f},     // N == Nkv; a batch of one valid key
  };
  int t = 0;
  for (const Case& c : cases) {
    const std::string what = "case " + std::to_string(t++);
    const Tensor q = rnd({c.b, c.s, c.n * c.h}, 10 + t), k = rnd({c.b, c.s, c.nkv * c.h}, 20 + t),
                 v = rnd({c.b, c.s, c.nkv * c.h}, 30 + t);
    const Tensor bias = c.bias_shape.empty() ? none() : rnd(c.bias_shape, 40 + t, -2.0f, 2.0f);
    const Tensor seqlens = i32({c.b}, c.seqlens), total = i32({1}, {static_cast<std::int32_t>(c.s)});
    const std::vector<Tensor> in{q, k, v, none(), none(), seqlens, total, none(), none(), none(), bias};
    const Tensor want = T({c.b, c.s, c.n * c.h}, expected(c, values(q), values(k), values(v),
                                                          c.bias_shape.empty() ? std::vector<float>{} : values(bias)));
    const auto r = ref("com.microsoft.GroupQueryAttention", in, gqa_attrs(c), 3);
    const auto f = fast("com.microsoft.GroupQueryAttention", in, gqa_attrs(c), 3);
    expect_close(r[0], want, 1e-5, 1e-6, what + " reference");
    expect_close(f[0], want, 1e-4, 1e-5, what + " fast");
    // present_key / present_value: K and V per kv head, [B, Nkv, S, H].
    ASSERT_EQ(r[1].shape, (Shape{c.b, c.nkv, c.s, c.h})) << what;
    const auto pk = values(r[1]), kin = values(k);
    for (std::int64_t b = 0; b < c.b; ++b)
      for (std::int64_t j = 0; j < c.nkv; ++j)
        for (std::int64_t l = 0; l < c.s; ++l)
          for (std::int64_t d = 0; d < c.h; ++d)
            ASSERT_EQ(pk[static_cast<std::size_t>(((b * c.nkv + j) * c.s + l) * c.h + d)],
                      kin[static_cast<std::size_t>((b * c.s + l) * c.nkv * c.h + j * c.h + d)])
                << what << " present_key";
    expect_close(f[2], r[2], 0.0, 0.0, what + " present_value");

    // Packed: query holds Q, K and V one after another per token.
    std::vector<float> packed;
    const auto qv = values(q), kv = values(k), vv = values(v);
    for (std::int64_t row = 0; row < c.b * c.s; ++row) {
      packed.insert(packed.end(), qv.begin() + row * c.n * c.h, qv.begin() + (row + 1) * c.n * c.h);
      packed.insert(packed.end(), kv.begin() + row * c.nkv * c.h, kv.begin() + (row + 1) * c.nkv * c.h);
      packed.insert(packed.end(), vv.begin() + row * c.nkv * c.h, vv.begin() + (row + 1) * c.nkv * c.h);
    }
    const Tensor qkv = T({c.b, c.s, (c.n + 2 * c.nkv) * c.h}, packed);
    const auto p = ref("com.microsoft.GroupQueryAttention",
                       {qkv, none(), none(), none(), none(), seqlens, total, none(), none(), none(), bias}, gqa_attrs(c), 3);
    expect_close(p[0], want, 1e-5, 1e-6, what + " packed QKV");
  }
}

// What the kernel does not implement fails by name instead of computing something else.
TEST(GroupQueryAttention, RefusesWhatItDoesNotImplement) {
  const Case c{1, 4, 2, 1, 2, {3}, -1, {}, 0.0f};
  const Tensor q = rnd({1, 4, 4}, 1), k = rnd({1, 4, 2}, 2), v = rnd({1, 4, 2}, 3);
  const Tensor seqlens = i32({1}, {3}), total = i32({1}, {4});
  auto message = [&](std::vector<Tensor> in, Attributes a) -> std::string {
    try {
      ref("com.microsoft.GroupQueryAttention", in, a, 3);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  const Tensor past = rnd({1, 1, 2, 2}, 4);
  EXPECT_NE(message({q, k, v, past, past, seqlens, i32({1}, {6})}, gqa_attrs(c)).find("past_key/past_value"), std::string::npos);
  EXPECT_NE(message({q, k, v, none(), none(), seqlens, i32({1}, {5})}, gqa_attrs(c)).find("only a first prompt"),
            std::string::npos);
  EXPECT_NE(message({q, k, v, none(), none(), i32({1}, {4}), total}, gqa_attrs(c)).find("seqlens_k value 4"), std::string::npos);
  Attributes rotary = gqa_attrs(c);
  rotary.set("do_rotary", std::int64_t{1});
  EXPECT_NE(message({q, k, v, none(), none(), seqlens, total}, rotary).find("do_rotary"), std::string::npos);
  Attributes odd = gqa_attrs(c);
  odd.set("kv_num_heads", std::int64_t{3});
  EXPECT_NE(message({q, rnd({1, 4, 6}, 5), rnd({1, 4, 6}, 6), none(), none(), seqlens, total}, odd).find("kv_num_heads 3"),
            std::string::npos);
}

}  // namespace
