// The fast QLinearMatMul (kernels/fast/qlinear_matmul.cpp: oneDNN's int8 matmul where the
// machine has VNNI, the reference kernel elsewhere) against the reference kernel: the same
// integers for linear-layer shapes (3-D rows times a 2-D int8 matrix), uint8 and int8 rows,
// per-tensor and per-column scales, the largest products (255 - 0 against -128), and the
// shapes it leaves to the reference (weight zero points, batched right operands).
#include <random>

#include "kernels/test_util.h"

namespace {

template <class Int>
Tensor ints(std::mt19937& g, DType dtype, Shape shape, int lo, int hi) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::string bytes(static_cast<std::size_t>(n) * sizeof(Int), '\0');
  auto* p = reinterpret_cast<Int*>(bytes.data());
  for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<Int>(std::uniform_int_distribution<int>(lo, hi)(g));
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::make_shared<const std::string>(std::move(bytes));
  return t;
}

TEST(FastVsReference, QLinearMatMulIsBitExact) {
  std::mt19937 g(3);
  struct Case {
    Shape a, b;
    bool signed_a, per_column, extreme, weight_zero_point;
  };
  const Case cases[] = {{{2, 16, 96}, {96, 64}, false, true, false, false},  {{3, 40, 200}, {200, 33}, true, false, false, false},
                        {{8, 48}, {48, 256}, false, false, true, false},     {{5, 7, 64}, {64, 24}, false, true, false, true},
                        {{2, 4, 9, 16}, {2, 4, 16, 9}, false, false, false, false}};
  for (const Case& c : cases) {
    const DType at = c.signed_a ? DType::Int8 : DType::UInt8;
    const Tensor a = c.extreme ? ints<std::uint8_t>(g, at, c.a, 255, 255)
                               : (c.signed_a ? ints<std::int8_t>(g, at, c.a, -128, 127) : ints<std::uint8_t>(g, at, c.a, 0, 255));
    const Tensor b = c.extreme ? ints<std::int8_t>(g, DType::Int8, c.b, -128, -128) : ints<std::int8_t>(g, DType::Int8, c.b, -127, 127);
    const std::int64_t n = c.b.back();
    std::vector<float> bs(static_cast<std::size_t>(c.per_column ? n : 1));
    for (float& v : bs) v = std::uniform_real_distribution<float>(0.001f, 0.01f)(g);
    const Tensor bz = c.weight_zero_point ? ints<std::int8_t>(g, DType::Int8, {}, 1, 3) : ints<std::int8_t>(g, DType::Int8, {}, 0, 0);
    const Tensor az = c.signed_a ? ints<std::int8_t>(g, at, {}, -20, 20) : ints<std::uint8_t>(g, at, {}, c.extreme ? 0 : 100, c.extreme ? 0 : 150);
    const std::vector<Tensor> in{a,
                                 T({}, {0.02f}),
                                 az,
                                 b,
                                 c.per_column ? T({n}, bs) : T({}, bs),
                                 bz,
                                 T({}, {c.extreme ? 0.05f : 0.3f}),
                                 ints<std::uint8_t>(g, DType::UInt8, {}, 100, 140)};
    const auto f = fast("QLinearMatMul", in), e = ref("QLinearMatMul", in);
    EXPECT_EQ(f[0].shape, e[0].shape);
    EXPECT_TRUE(f[0] == e[0]) << c.a.size() << "-d x " << c.b.size() << "-d, k " << c.b[c.b.size() - 2]
                              << (c.extreme ? " (extreme values)" : "") << (c.weight_zero_point ? " (weight zero point)" : "");
  }
}

// The fast com.microsoft.QGemm (kernels/fast/qgemm.cpp): the reference kernel's numbers with
// and without transB, a per-column C ([N] and [1, N]), alpha, per-column b scales, uint8 and
// int8 outputs and the float32 output without y_scale; transA, a C over rows and columns and
// B zero points take the reference path.
TEST(FastVsReference, QGemmIsBitExact) {
  std::mt19937 g(9);
  struct Case {
    std::int64_t m, k, n;
    bool trans_b, trans_a, bias_rows, weight_zero_point, float_out, int8_out;
    Shape bias_shape;
  };
  const Case cases[] = {{1, 512, 100, true, false, false, false, false, false, {100}},
                        {4, 96, 33, false, false, false, false, false, true, {1, 33}},
                        {3, 64, 20, true, false, false, false, true, false, {20}},
                        {5, 40, 12, true, true, false, false, false, false, {12}},
                        {2, 32, 8, false, false, true, false, false, false, {2, 8}},
                        {2, 32, 8, true, false, false, true, false, false, {8}}};
  for (const Case& c : cases) {
    const Tensor a = c.trans_a ? ints<std::uint8_t>(g, DType::UInt8, {c.k, c.m}, 0, 255)
                               : ints<std::uint8_t>(g, DType::UInt8, {c.m, c.k}, 0, 255);
    const Tensor b = c.trans_b ? ints<std::int8_t>(g, DType::Int8, {c.n, c.k}, -127, 127)
                               : ints<std::int8_t>(g, DType::Int8, {c.k, c.n}, -127, 127);
    std::vector<float> bs(static_cast<std::size_t>(c.n));
    for (float& v : bs) v = std::uniform_real_distribution<float>(0.001f, 0.01f)(g);
    std::vector<std::int32_t> bias(static_cast<std::size_t>(c.bias_rows ? c.m * c.n : c.n));
    for (auto& v : bias) v = std::uniform_int_distribution<int>(-4000, 4000)(g);
    std::vector<Tensor> in{a,
                           T({}, {0.02f}),
                           ints<std::uint8_t>(g, DType::UInt8, {}, 120, 130),
                           b,
                           T({c.n}, bs),
                           c.weight_zero_point ? ints<std::int8_t>(g, DType::Int8, {}, 1, 2) : ints<std::int8_t>(g, DType::Int8, {}, 0, 0),
                           typed(DType::Int32, c.bias_shape, bias)};
    if (!c.float_out) {
      in.push_back(T({}, {0.25f}));
      in.push_back(c.int8_out ? ints<std::int8_t>(g, DType::Int8, {}, -5, 5) : ints<std::uint8_t>(g, DType::UInt8, {}, 100, 140));
    }
    Attributes attrs_;
    attrs_.set("transA", AttrValue(std::int64_t{c.trans_a}));
    attrs_.set("transB", AttrValue(std::int64_t{c.trans_b}));
    attrs_.set("alpha", AttrValue(0.75f));
    const auto f = fast("com.microsoft.QGemm", in, attrs_), e = ref("com.microsoft.QGemm", in, attrs_);
    EXPECT_EQ(f[0].dtype, e[0].dtype);
    EXPECT_TRUE(f[0] == e[0]) << c.m << "x" << c.k << "x" << c.n << (c.trans_b ? " transB" : "") << (c.float_out ? " float" : "");
  }
}

}  // namespace
