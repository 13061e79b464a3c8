// Cast between every numeric type, the binary ops and Neg over every integer width and
// float64, Size (kernels/reference/cast.cpp, elementwise.cpp, shape_ops.cpp): the rules each
// follows, hand-computed, so that folding with them never changes a result.
#include <cstring>
#include <limits>

#include "core/broadcast.h"
#include "kernels/test_util.h"

namespace {

template <class T>
std::vector<T> elems(const Tensor& t) {
  std::vector<T> v(static_cast<std::size_t>(t.num_elements()));
  std::memcpy(v.data(), t.data->data(), v.size() * sizeof(T));
  return v;
}

std::vector<Tensor> ref(const std::string& op, std::vector<Tensor> in, Attributes a = {}) {
  return gk::run_op(gk::KernelSet::Reference, op, in, a);
}

Attributes to(DType dt) { return attrs({{"to", static_cast<std::int64_t>(dt)}}); }

TEST(NumericOps, CastFloat16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even -> 1.
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties to even -> 1 + 2^-9.
  // 65520 rounds to inf, 65504 is the largest half; 2^-24 is the smallest subnormal,
  // 2^-25 ties to 0 (even), NaN stays NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y = ref("Cast", {T({8}, {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65520.0f, 65504.0f, 0x1p-24f, 0x1p-25f,
                                -2.0f, nan})},
               to(DType::Float16))[0];
  ASSERT_EQ(y.dtype, DType::Float16);
  auto h = elems<std::uint16_t>(y);
  EXPECT_EQ(h[0], 0x3c00);
  EXPECT_EQ(h[1], 0x3c02);
  EXPECT_EQ(h[2], 0x7c00);
  EXPECT_EQ(h[3], 0x7bff);
  EXPECT_EQ(h[4], 0x0001);
  EXPECT_EQ(h[5], 0x0000);
  EXPECT_EQ(h[6], 0xc000);
  EXPECT_EQ(h[7] & 0x7c00, 0x7c00);
  EXPECT_NE(h[7] & 0x03ff, 0);
  // And back: exact, subnormals included.
  auto f = ref("Cast", {y}, to(DType::Float32))[0];
  auto fv = elems<float>(f);
  EXPECT_EQ(fv[0], 1.0f);
  EXPECT_EQ(fv[1], 1.0f + 0x1p-9f);
  EXPECT_EQ(fv[3], 65504.0f);
  EXPECT_EQ(fv[4], 0x1p-24f);
  EXPECT_TRUE(std::isnan(fv[7]));
}

TEST(NumericOps, CastFromBFloat16IsExactToBFloat16Refused) {
  // bfloat16 -> float32 is exact (the bits shifted up); float32 -> bfloat16 is refused since
  // ONNX Runtime rounds to nearest even and older ONNX truncated (the Debian test data).
  auto y = ref("Cast", {typed<std::uint16_t>(DType::BFloat16, {2}, {0x3ef5, 0xc080})}, to(DType::Float32))[0];
  EXPECT_EQ(elems<float>(y), (std::vector<float>{0.478515625f, -4.0f}));
  EXPECT_THROW(ref("Cast", {T({1}, {1.0f})}, to(DType::BFloat16)), graphfuse::Error);
}

TEST(NumericOps, CastIntegersWrapFloatsSaturateBoolIsNonZero) {
  auto y = ref("Cast", {I({3}, {300, -1, 128})}, to(DType::Int8))[0];
  EXPECT_EQ(elems<std::int8_t>(y), (std::vector<std::int8_t>{44, -1, -128}));
  y = ref("Cast", {I({2}, {-1, 65536})}, to(DType::UInt16))[0];
  EXPECT_EQ(elems<std::uint16_t>(y), (std::vector<std::uint16_t>{65535, 0}));
  y = ref("Cast", {T({4}, {1e10f, -1e10f, -0.9f, std::numeric_limits<float>::quiet_NaN()})}, to(DType::Int32))[0];
  EXPECT_EQ(elems<std::int32_t>(y), (std::vector<std::int32_t>{INT32_MAX, INT32_MIN, 0, 0}));
  y = ref("Cast", {T({3}, {0.0f, -0.0f, 0.5f})}, to(DType::Bool))[0];
  EXPECT_EQ(elems<char>(y), (std::vector<char>{0, 0, 1}));
  y = ref("Cast", {typed<double>(DType::Float64, {2}, {0.1, 1e300})}, to(DType::Float32))[0];
  EXPECT_EQ(elems<float>(y)[0], 0.1f);
  EXPECT_TRUE(std::isinf(elems<float>(y)[1]));
  y = ref("Cast", {typed<std::uint8_t>(DType::UInt8, {2}, {255, 7})}, to(DType::Float64))[0];
  EXPECT_EQ(elems<double>(y), (std::vector<double>{255.0, 7.0}));
  // A type the kernels cannot hold is refused (the node is left unfolded).
  Tensor s = I({1}, {1});
  EXPECT_THROW(ref("Cast", {s}, to(DType::String)), graphfuse::Error);
}

TEST(NumericOps, IntegerArithmeticWrapsAndTruncates) {
  auto a = typed<std::uint8_t>(DType::UInt8, {3}, {250, 3, 7});
  auto b = typed<std::uint8_t>(DType::UInt8, {3}, {10, 5, 2});
  EXPECT_EQ(elems<std::uint8_t>(ref("Add", {a, b})[0]), (std::vector<std::uint8_t>{4, 8, 9}));
  EXPECT_EQ(elems<std::uint8_t>(ref("Sub", {a, b})[0]), (std::vector<std::uint8_t>{240, 254, 5}));
  EXPECT_EQ(elems<std::uint8_t>(ref("Mul", {a, b})[0]), (std::vector<std::uint8_t>{196, 15, 14}));
  EXPECT_EQ(elems<std::uint8_t>(ref("Div", {a, b})[0]), (std::vector<std::uint8_t>{25, 0, 3}));
  // Signed: truncation toward zero, MIN / -1 wraps, broadcasting, 65535 * 65535 in uint16
  // (int promotion would overflow a signed int).
  auto c = typed<std::int32_t>(DType::Int32, {3}, {-7, INT32_MIN, 7});
  auto d = typed<std::int32_t>(DType::Int32, {3}, {2, -1, -2});
  EXPECT_EQ(elems<std::int32_t>(ref("Div", {c, d})[0]), (std::vector<std::int32_t>{-3, INT32_MIN, -3}));
  auto e = typed<std::int16_t>(DType::Int16, {2, 1}, {1, 2});
  auto f = typed<std::int16_t>(DType::Int16, {2}, {10, 32767});
  EXPECT_EQ(elems<std::int16_t>(ref("Add", {e, f})[0]), (std::vector<std::int16_t>{11, -32768, 12, -32767}));
  auto u = typed<std::uint16_t>(DType::UInt16, {1}, {65535});
  EXPECT_EQ(elems<std::uint16_t>(ref("Mul", {u, u})[0]), (std::vector<std::uint16_t>{1}));
  EXPECT_THROW(ref("Div", {a, typed<std::uint8_t>(DType::UInt8, {1}, {0})}), graphfuse::Error);
  auto x = typed<double>(DType::Float64, {2}, {1.0, -3.0});
  EXPECT_EQ(elems<double>(ref("Sub", {x, x})[0]), (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(elems<double>(ref("Div", {x, typed<double>(DType::Float64, {}, {4.0})})[0]),
            (std::vector<double>{0.25, -0.75}));
  // Mixed element types are refused.
  EXPECT_THROW(ref("Add", {a, c}), graphfuse::Error);
}

TEST(NumericOps, NegEveryAcceptedType) {
  auto y = ref("Neg", {typed<std::int8_t>(DType::Int8, {3}, {-128, 5, 0})})[0];
  EXPECT_EQ(elems<std::int8_t>(y), (std::vector<std::int8_t>{-128, -5, 0}));
  y = ref("Neg", {typed<double>(DType::Float64, {1}, {2.5})})[0];
  EXPECT_EQ(elems<double>(y), (std::vector<double>{-2.5}));
  y = ref("Neg", {typed<std::uint16_t>(DType::Float16, {2}, {0x3c00, 0x8000})})[0];
  EXPECT_EQ(elems<std::uint16_t>(y), (std::vector<std::uint16_t>{0xbc00, 0x0000}));
  expect_values(ref("Neg", {T({2}, {1.5f, -0.0f})})[0], {2}, {-1.5f, 0.0f});
  EXPECT_THROW(ref("Neg", {typed<std::uint8_t>(DType::UInt8, {1}, {1})}), graphfuse::Error);
}

TEST(NumericOps, SizeIsAnInt64Scalar) {
  auto y = ref("Size", {T({2, 3}, std::vector<float>(6, 0.0f))})[0];
  EXPECT_EQ(y.dtype, DType::Int64);
  EXPECT_TRUE(y.shape.empty());
  EXPECT_EQ(elems<std::int64_t>(y), (std::vector<std::int64_t>{6}));
  EXPECT_EQ(elems<std::int64_t>(ref("Size", {T({0, 4}, {})})[0]), (std::vector<std::int64_t>{0}));
}

}  // namespace

namespace {

TEST(IndexOps, GatherElementsNegativeIndicesAnyAxis) {
  // data [[1, 2], [3, 4]]; axis 1, indices [[0, -1], [1, 0]] -> [[1, 2], [4, 3]].
  Tensor x = T({2, 2}, {1, 2, 3, 4});
  auto y = ref("GatherElements", {x, I({2, 2}, {0, -1, 1, 0})}, attrs({{"axis", std::int64_t{1}}}))[0];
  expect_values(y, {2, 2}, {1, 2, 4, 3});
  // axis -2 (= 0), indices smaller than data: [[1, 0]] -> [[3, 2]].
  y = ref("GatherElements", {x, I({1, 2}, {1, 0})}, attrs({{"axis", std::int64_t{-2}}}))[0];
  expect_values(y, {1, 2}, {3, 2});
  EXPECT_THROW(ref("GatherElements", {x, I({1, 2}, {2, 0})}), graphfuse::Error);
}

TEST(IndexOps, TriluUpperLowerAndK) {
  Tensor x = T({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_values(ref("Trilu", {x})[0], {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expect_values(ref("Trilu", {x, I({}, {-1})}, attrs({{"upper", std::int64_t{0}}}))[0], {3, 3},
                {0, 0, 0, 4, 0, 0, 7, 8, 0});
  expect_values(ref("Trilu", {x, I({}, {1})})[0], {3, 3}, {0, 2, 3, 0, 0, 6, 0, 0, 0});
  // k far beyond the matrix: all kept or all dropped, no overflow.
  expect_values(ref("Trilu", {x, I({}, {INT64_MIN})})[0], {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_values(ref("Trilu", {x, I({}, {INT64_MAX})})[0], {3, 3}, std::vector<float>(9, 0.0f));
}

TEST(IndexOps, RangeAccumulatesAndCounts) {
  expect_values(ref("Range", {T({}, {1}), T({}, {2}), T({}, {0.25f})})[0], {4}, {1, 1.25f, 1.5f, 1.75f});
  auto y = ref("Range", {I({}, {10}), I({}, {4}), I({}, {-3})})[0];
  EXPECT_EQ(elems<std::int64_t>(y), (std::vector<std::int64_t>{10, 7}));
  EXPECT_EQ(ref("Range", {I({}, {5}), I({}, {1}), I({}, {1})})[0].num_elements(), 0);
  EXPECT_THROW(ref("Range", {I({}, {0}), I({}, {1}), I({}, {0})}), graphfuse::Error);
}

}  // namespace

// broadcast_apply merges dims and runs along rows: every output element, for every start
// and end of a range, must be f of the operands plain index arithmetic gives.
TEST(Broadcast, MergedWalkMatchesIndexArithmetic) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4, 3, 2, 5}, {4, 1, 1, 1}}, {{4, 3, 2, 5}, {5}},       {{1, 3, 1}, {2, 1, 4}},
      {{2, 3, 4}, {2, 3, 4}},       {{}, {3, 2}},               {{3, 1, 2}, {1, 4, 1}},
      {{6}, {}},                    {{2, 1, 3, 1}, {1, 5, 1, 2}}, {{1}, {1}}};
  for (const auto& [as, bs] : cases) {
    const Shape ys = gk::broadcast_shapes(as, bs);
    std::int64_t na = 1, nb = 1, ny = 1;
    for (auto d : as) na *= d;
    for (auto d : bs) nb *= d;
    for (auto d : ys) ny *= d;
    std::vector<std::int64_t> a(static_cast<std::size_t>(na)), b(static_cast<std::size_t>(nb));
    for (std::int64_t i = 0; i < na; ++i) a[static_cast<std::size_t>(i)] = i * 1000;
    for (std::int64_t i = 0; i < nb; ++i) b[static_cast<std::size_t>(i)] = i;
    // Expected: a's and b's flat index of each output multi-index.
    std::vector<std::int64_t> want(static_cast<std::size_t>(ny));
    for (std::int64_t i = 0; i < ny; ++i) {
      std::int64_t rest = i, ia = 0, ib = 0, ma = 1, mb = 1;
      for (std::size_t d = ys.size(); d-- > 0;) {
        const std::int64_t k = rest % ys[d];
        rest /= ys[d];
        const std::size_t off = ys.size() - d;
        if (off <= as.size()) {
          const std::int64_t n = as[as.size() - off];
          ia += (n == 1 ? 0 : k) * ma;
          ma *= n;
        }
        if (off <= bs.size()) {
          const std::int64_t n = bs[bs.size() - off];
          ib += (n == 1 ? 0 : k) * mb;
          mb *= n;
        }
      }
      want[static_cast<std::size_t>(i)] = a[static_cast<std::size_t>(ia)] + b[static_cast<std::size_t>(ib)];
    }
    for (std::int64_t begin = 0; begin < ny; ++begin)
      for (std::int64_t end = begin + 1; end <= ny; ++end) {
        std::vector<std::int64_t> y(static_cast<std::size_t>(ny), -1);
        gk::broadcast_apply(a.data(), as, b.data(), bs, y.data(), ys, begin, end,
                            [](std::int64_t u, std::int64_t v) { return u + v; });
        for (std::int64_t i = 0; i < ny; ++i)
          ASSERT_EQ(y[static_cast<std::size_t>(i)], i >= begin && i < end ? want[static_cast<std::size_t>(i)] : -1)
              << "element " << i << " of [" << begin << ", " << end << ")";
      }
  }
}
