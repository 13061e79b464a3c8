// The fast element-wise quantized ops against the reference kernels (dequantize, float op,
// quantize), and the fast QuantizeLinear / DequantizeLinear. QLinearAdd / QLinearMul (kernels/fast/qlinear_binary.cpp, one vector pass): the same
// integers on seeded random tensors, uint8 and int8, scales that saturate and scales that
// put many values on rounding ties, per-row and scalar operands on either side, and a
// broadcast the vector loop leaves to the reference kernel.
#include <limits>
#include <random>
#include <utility>

#include "kernels/test_util.h"

namespace {

template <class T>
Tensor random_ints(std::mt19937& g, DType dtype, Shape shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<T> v(static_cast<std::size_t>(n));
  const int lo = dtype == DType::Int8 ? -128 : 0;
  for (T& e : v) e = static_cast<T>(std::uniform_int_distribution<int>(lo, lo + 255)(g));
  return typed(dtype, std::move(shape), v);
}

template <class Int>
void check_op(const std::string& op, DType dtype, std::mt19937& g) {
  const int lo = dtype == DType::Int8 ? -128 : 0;
  auto zp = [&] { return typed(dtype, {}, std::vector<Int>{static_cast<Int>(std::uniform_int_distribution<int>(lo, lo + 255)(g))}); };
  // Power-of-two scales put many results exactly halfway between two integers; the
  // tiny output scale saturates nearly everything.
  const float scales[][3] = {{0.02f, 0.03f, 0.05f}, {0.5f, 0.25f, 1.0f}, {0.125f, 0.5f, 2.0f}, {0.1f, 0.2f, 1e-6f}};
  const Shape shapes[] = {{1, 64, 17, 19}, {3, 1000}, {7}};
  for (const auto& s : scales)
    for (const Shape& shape : shapes) {
      const std::vector<Tensor> in{random_ints<Int>(g, dtype, shape), T({}, {s[0]}), zp(),
                                   random_ints<Int>(g, dtype, shape), T({}, {s[1]}), zp(),
                                   T({}, {s[2]}), zp()};
      const auto f = fast(op, in), e = ref(op, in);
      EXPECT_TRUE(f[0] == e[0]) << op << " " << graphfuse::dtype_name(dtype) << " scales " << s[0] << " " << s[1]
                                << " " << s[2] << " over " << shape.size() << "-d: the integers differ";
    }
  // Per-row operands (squeeze-and-excitation's [N, C, 1, 1] scale, a scalar), on either
  // side, take the vector loop; [2, 3, 4] with [4] goes to the reference kernel.
  const std::pair<Shape, Shape> pairs[] = {{{1, 64, 17, 19}, {1, 64, 1, 1}}, {{1, 64, 1, 1}, {1, 64, 17, 19}},
                                           {{2, 8, 5, 3}, {8, 1, 1}},        {{2, 8, 5, 3}, {}},
                                           {{2, 8, 5, 1}, {1}},              {{2, 3, 4}, {4}}};
  for (const auto& [sa, sb] : pairs) {
    const std::vector<Tensor> in{random_ints<Int>(g, dtype, sa), T({}, {0.1f}), zp(), random_ints<Int>(g, dtype, sb),
                                 T({}, {0.2f}), zp(), T({}, {0.3f}), zp()};
    const auto f = fast(op, in), e = ref(op, in);
    EXPECT_EQ(f[0].shape, e[0].shape) << op << " broadcasting " << sa.size() << "-d with " << sb.size() << "-d";
    EXPECT_TRUE(f[0] == e[0]) << op << " broadcasting " << sa.size() << "-d with " << sb.size() << "-d";
  }
}

TEST(FastVsReference, QLinearAddAndMulAreBitExact) {
  std::mt19937 g(77);
  for (const char* op : {"com.microsoft.QLinearAdd", "com.microsoft.QLinearMul"}) {
    check_op<std::uint8_t>(op, DType::UInt8, g);
    check_op<std::int8_t>(op, DType::Int8, g);
  }
}

// QLinearSigmoid / QLinearLeakyRelu (kernels/fast/qlinear_lookup.cpp) look each element up
// in a table of the reference kernel's 256 outputs: every input value, uint8 and int8 (whose
// negative values index by their bits), with and without an output zero point.
TEST(FastVsReference, QLinearSigmoidAndLeakyReluTablesAreBitExact) {
  std::mt19937 g(5);
  Attributes leaky;
  leaky.set("alpha", AttrValue(0.1f));
  for (const char* op : {"com.microsoft.QLinearSigmoid", "com.microsoft.QLinearLeakyRelu"})
    for (DType dtype : {DType::UInt8, DType::Int8}) {
      const Attributes a = std::string(op).find("Leaky") != std::string::npos ? leaky : Attributes{};
      const Tensor x = dtype == DType::UInt8 ? random_ints<std::uint8_t>(g, dtype, {4, 300})
                                             : random_ints<std::int8_t>(g, dtype, {4, 300});
      const Tensor xz = dtype == DType::UInt8 ? typed(dtype, {}, std::vector<std::uint8_t>{140})
                                              : typed(dtype, {}, std::vector<std::int8_t>{-7});
      const Tensor yz = dtype == DType::UInt8 ? typed(dtype, {}, std::vector<std::uint8_t>{3})
                                              : typed(dtype, {}, std::vector<std::int8_t>{-100});
      for (bool with_yz : {true, false}) {
        std::vector<Tensor> in{x, T({}, {0.05f}), xz, T({}, {1.0f / 250.0f})};
        if (with_yz) in.push_back(yz);
        const auto f = fast(op, in, a), e = ref(op, in, a);
        EXPECT_EQ(f[0].dtype, e[0].dtype) << op;
        EXPECT_TRUE(f[0] == e[0]) << op << " " << graphfuse::dtype_name(dtype) << (with_yz ? "" : " without y_zero_point");
      }
    }
}

// QLinearGlobalAveragePool (kernels/fast/qlinear_pool.cpp): one pass with a table of the
// dequantized values, summed in the reference's order; uint8 and int8, with and without an
// output zero point, planes of one element and of thousands.
TEST(FastVsReference, QLinearGlobalAveragePoolIsBitExact) {
  std::mt19937 g(8);
  const Shape shapes[] = {{2, 5, 7, 9}, {1, 3, 56, 56}, {1, 4, 1, 1}};
  for (const Shape& shape : shapes)
    for (DType dtype : {DType::UInt8, DType::Int8})
      for (bool with_yz : {true, false}) {
        const Tensor x = dtype == DType::UInt8 ? random_ints<std::uint8_t>(g, dtype, shape) : random_ints<std::int8_t>(g, dtype, shape);
        const Tensor xz = dtype == DType::UInt8 ? typed(dtype, {}, std::vector<std::uint8_t>{77})
                                                : typed(dtype, {}, std::vector<std::int8_t>{-3});
        std::vector<Tensor> in{x, T({}, {0.0371f}), xz, T({}, {0.0123f})};
        if (with_yz) in.push_back(dtype == DType::UInt8 ? typed(dtype, {}, std::vector<std::uint8_t>{128})
                                                        : typed(dtype, {}, std::vector<std::int8_t>{5}));
        const auto f = fast("com.microsoft.QLinearGlobalAveragePool", in), e = ref("com.microsoft.QLinearGlobalAveragePool", in);
        EXPECT_EQ(f[0].shape, e[0].shape);
        EXPECT_TRUE(f[0] == e[0]) << graphfuse::dtype_name(dtype) << " " << shape[2] << "x" << shape[3]
                                  << (with_yz ? "" : " without y_zero_point");
      }
}

// QLinearConcat (kernels/fast/qlinear_concat.cpp) copies through a 256-entry table per input:
// the reference's integers for two and three inputs with their own scales and zero points,
// uint8 and int8 inputs mixed, positive and negative axes, with and without an output zero
// point; mismatched shapes stay the reference's error.
TEST(FastVsReference, QLinearConcatIsBitExact) {
  std::mt19937 g(13);
  const Tensor u8z = typed(DType::UInt8, {}, std::vector<std::uint8_t>{100});
  const Tensor i8z = typed(DType::Int8, {}, std::vector<std::int8_t>{-9});
  struct Case {
    std::int64_t axis;
    std::vector<Shape> shapes;
    bool signed_second, with_yz;
  };
  const Case cases[] = {{1, {{2, 3, 4, 5}, {2, 7, 4, 5}}, false, true},
                        {-1, {{3, 4}, {3, 1}, {3, 6}}, true, true},
                        {0, {{2, 5}, {4, 5}}, false, false}};
  for (const Case& cs : cases) {
    std::vector<Tensor> in{T({}, {0.07f}), u8z};
    for (std::size_t i = 0; i < cs.shapes.size(); ++i) {
      const bool s8 = cs.signed_second && i == 1;
      in.push_back(s8 ? random_ints<std::int8_t>(g, DType::Int8, cs.shapes[i]) : random_ints<std::uint8_t>(g, DType::UInt8, cs.shapes[i]));
      in.push_back(T({}, {0.03f + 0.02f * static_cast<float>(i)}));
      in.push_back(s8 ? i8z : u8z);
    }
    if (!cs.with_yz) in[1] = none();
    Attributes a;
    a.set("axis", AttrValue(cs.axis));
    const auto f = fast("com.microsoft.QLinearConcat", in, a), e = ref("com.microsoft.QLinearConcat", in, a);
    EXPECT_EQ(f[0].shape, e[0].shape);
    EXPECT_TRUE(f[0] == e[0]) << "axis " << cs.axis << ", " << cs.shapes.size() << " inputs";
  }
  // Shapes that do not concatenate: the reference's refusal in both sets.
  const std::vector<Tensor> bad{T({}, {0.07f}), u8z, random_ints<std::uint8_t>(g, DType::UInt8, {2, 3}), T({}, {0.05f}), u8z,
                                random_ints<std::uint8_t>(g, DType::UInt8, {4, 4}), T({}, {0.05f}), u8z};
  Attributes a0;
  a0.set("axis", AttrValue(std::int64_t{0}));
  EXPECT_THROW(fast("com.microsoft.QLinearConcat", bad, a0), graphfuse::Error);
  EXPECT_THROW(ref("com.microsoft.QLinearConcat", bad, a0), graphfuse::Error);
}

// QuantizeLinear / DequantizeLinear per tensor (kernels/fast/quantize_linear.cpp): the
// reference's bytes for ties (x / s = k + 0.5), saturation, infinities and NaN, uint8 and
// int8, with and without a zero point; per-axis parameters take the reference path.
TEST(FastVsReference, QuantizeAndDequantizeLinearAreBitExact) {
  std::mt19937 g(11);
  std::vector<float> x;
  for (int k = -300; k <= 300; ++k) x.push_back(static_cast<float>(k) * 0.5f);  // every tie
  for (int i = 0; i < 1000; ++i) x.push_back(std::uniform_real_distribution<float>(-1e4f, 1e4f)(g));
  for (float v : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f, 1e30f, -1e30f})
    x.push_back(v);
  const Tensor xt = T({static_cast<std::int64_t>(x.size())}, x);
  for (float scale : {1.0f, 0.5f, 0.037f, 3.0f}) {
    const std::vector<std::vector<Tensor>> cases = {
        {xt, T({}, {scale})},
        {xt, T({}, {scale}), typed(DType::UInt8, {}, std::vector<std::uint8_t>{129})},
        {xt, T({1}, {scale}), typed(DType::Int8, {1}, std::vector<std::int8_t>{-5})}};
    for (const auto& in : cases) {
      const auto f = fast("QuantizeLinear", in), e = ref("QuantizeLinear", in);
      EXPECT_TRUE(f[0] == e[0]) << "QuantizeLinear scale " << scale << " with " << in.size() << " inputs";
      std::vector<Tensor> dq = in;
      dq[0] = f[0];
      const auto fd = fast("DequantizeLinear", dq), ed = ref("DequantizeLinear", dq);
      EXPECT_TRUE(fd[0] == ed[0]) << "DequantizeLinear scale " << scale << " with " << in.size() << " inputs";
    }
  }
  // Per axis: the reference path, same result.
  const Tensor m = T({2, 3}, {0.1f, 7.5f, -3.0f, 250.0f, 1.0f, 2.5f});
  const std::vector<Tensor> per_axis{m, T({3}, {0.5f, 1.0f, 2.0f}), typed(DType::UInt8, {3}, std::vector<std::uint8_t>{1, 2, 3})};
  EXPECT_TRUE(fast("QuantizeLinear", per_axis)[0] == ref("QuantizeLinear", per_axis)[0]);
}

}  // namespace
