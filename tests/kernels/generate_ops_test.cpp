// ConstantOfShape, Expand, Where, Equal (kernels/reference/generate_ops.cpp): hand-computed
// cases for each ONNX rule they follow, in both kernel sets.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/test_util.h"

namespace {

Tensor bools(Shape shape, std::vector<char> v) {
  Tensor t;
  t.dtype = DType::Bool;
  t.shape = std::move(shape);
  t.data = std::make_shared<const std::string>(v.begin(), v.end());
  return t;
}

std::vector<char> bool_values(const Tensor& t) {
  EXPECT_EQ(t.dtype, DType::Bool);
  return std::vector<char>(t.data->begin(), t.data->end());
}

Tensor halves(Shape shape, std::vector<std::uint16_t> bits, DType dtype) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  std::string bytes(bits.size() * 2, '\0');
  std::memcpy(bytes.data(), bits.data(), bytes.size());
  t.data = std::make_shared<const std::string>(std::move(bytes));
  return t;
}

const gk::KernelSet kSets[] = {gk::KernelSet::Reference, gk::KernelSet::Fast};

TEST(GenerateOps, ConstantOfShape) {
  for (auto set : kSets) {
    auto y = gk::run_op(set, "ConstantOfShape", {I({2}, {2, 3})}, {});
    expect_values(y[0], {2, 3}, std::vector<float>(6, 0.0f));  // default: float32 zeros
    y = gk::run_op(set, "ConstantOfShape", {I({3}, {1, 2, 2})}, attrs({{"value", I({1}, {-7})}}));
    EXPECT_EQ(y[0].shape, (Shape{1, 2, 2}));
    EXPECT_EQ(ivalues(y[0]), std::vector<std::int64_t>(4, -7));
    y = gk::run_op(set, "ConstantOfShape", {I({0}, {})}, attrs({{"value", T({1}, {2.5f})}}));
    expect_values(y[0], {}, {2.5f});  // an empty shape: a scalar
    y = gk::run_op(set, "ConstantOfShape", {I({2}, {0, 4})}, {});
    EXPECT_EQ(y[0].num_elements(), 0);
    EXPECT_THROW(gk::run_op(set, "ConstantOfShape", {I({1}, {-1})}, {}), graphfuse::Error);
    EXPECT_THROW(gk::run_op(set, "ConstantOfShape", {I({1}, {2})}, attrs({{"value", T({2}, {1, 2})}})),
                 graphfuse::Error);
    EXPECT_THROW(gk::run_op(set, "ConstantOfShape", {T({1}, {2})}, {}), graphfuse::Error);
  }
}

TEST(GenerateOps, ExpandBroadcastsBothWays) {
  for (auto set : kSets) {
    // [3, 1] to [2, 1, 4]: the result is [2, 3, 4] (a 1 in the shape keeps the input's dim).
    auto y = gk::run_op(set, "Expand", {T({3, 1}, {1, 2, 3}), I({3}, {2, 1, 4})}, {});
    ASSERT_EQ(y[0].shape, (Shape{2, 3, 4}));
    auto v = values(y[0]);
    for (int b = 0; b < 2; ++b)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) EXPECT_EQ(v[b * 12 + r * 4 + c], r + 1);
    // A shape smaller than the input's rank.
    y = gk::run_op(set, "Expand", {I({2, 2}, {1, 2, 3, 4}), I({1}, {1})}, {});
    EXPECT_EQ(y[0].shape, (Shape{2, 2}));
    EXPECT_EQ(ivalues(y[0]), (std::vector<std::int64_t>{1, 2, 3, 4}));
    // ViT's class token: [1, 1, 3] to [1, 1, 3].
    y = gk::run_op(set, "Expand", {T({1, 1, 3}, {4, 5, 6}), I({3}, {1, 1, 3})}, {});
    expect_values(y[0], {1, 1, 3}, {4, 5, 6});
    EXPECT_THROW(gk::run_op(set, "Expand", {T({3}, {1, 2, 3}), I({1}, {2})}, {}), graphfuse::Error);
  }
}

TEST(GenerateOps, WhereBroadcastsAllThree) {
  for (auto set : kSets) {
    auto y = gk::run_op(set, "Where", {bools({2, 1}, {1, 0}), T({3}, {1, 2, 3}), T({}, {-1})}, {});
    expect_values(y[0], {2, 3}, {1, 2, 3, -1, -1, -1});
    y = gk::run_op(set, "Where", {bools({3}, {0, 1, 0}), I({3}, {1, 2, 3}), I({3}, {7, 8, 9})}, {});
    EXPECT_EQ(ivalues(y[0]), (std::vector<std::int64_t>{7, 2, 9}));
    EXPECT_THROW(gk::run_op(set, "Where", {bools({1}, {1}), T({1}, {1}), I({1}, {1})}, {}), graphfuse::Error);
    EXPECT_THROW(gk::run_op(set, "Where", {T({1}, {1}), T({1}, {1}), T({1}, {1})}, {}), graphfuse::Error);
  }
}

TEST(GenerateOps, EqualComparesValuesPerType) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto set : kSets) {
    auto y = gk::run_op(set, "Equal", {T({4}, {1.0f, nan, 0.0f, 2.0f}), T({4}, {1.0f, nan, -0.0f, 3.0f})}, {});
    EXPECT_EQ(bool_values(y[0]), (std::vector<char>{1, 0, 1, 0}));
    y = gk::run_op(set, "Equal", {I({2, 1}, {1, 2}), I({3}, {1, 2, 3})}, {});
    EXPECT_EQ(y[0].shape, (Shape{2, 3}));
    EXPECT_EQ(bool_values(y[0]), (std::vector<char>{1, 0, 0, 0, 1, 0}));
    y = gk::run_op(set, "Equal", {bools({2}, {1, 0}), bools({2}, {1, 1})}, {});
    EXPECT_EQ(bool_values(y[0]), (std::vector<char>{1, 0}));
    // float16: 1.0 == 1.0, NaN != NaN, +0 == -0, 1.0 != 2.0.
    y = gk::run_op(set, "Equal",
                   {halves({4}, {0x3c00, 0x7e00, 0x0000, 0x3c00}, DType::Float16),
                    halves({4}, {0x3c00, 0x7e00, 0x8000, 0x4000}, DType::Float16)},
                   {});
    EXPECT_EQ(bool_values(y[0]), (std::vector<char>{1, 0, 1, 0}));
    EXPECT_THROW(gk::run_op(set, "Equal", {T({1}, {1}), I({1}, {1})}, {}), graphfuse::Error);
  }
}

}  // namespace
