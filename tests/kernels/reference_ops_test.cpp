// Reference kernels for the non-convolution ops against hand-computed cases.
#include <cmath>

#include "kernels/test_util.h"

namespace {

TEST(ReferenceOps, BroadcastArithmetic) {
  const Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_values(ref("Add", {a, T({3}, {10, 20, 30})})[0], {2, 3}, {11, 22, 33, 14, 25, 36});
  expect_values(ref("Sub", {a, T({2, 1}, {1, 2})})[0], {2, 3}, {0, 1, 2, 2, 3, 4});
  expect_values(ref("Mul", {T({}, {2}), a})[0], {2, 3}, {2, 4, 6, 8, 10, 12});
  expect_values(ref("Div", {a, T({1, 3}, {1, 2, 4})})[0], {2, 3}, {1, 1, 0.75f, 4, 2.5f, 1.5f});
  expect_values(ref("Pow", {a, T({}, {2})})[0], {2, 3}, {1, 4, 9, 16, 25, 36});
  expect_values(ref("Pow", {T({2}, {2, 3}), I({}, {3})})[0], {2}, {8, 27});
  // Both sides broadcast: [2,1] x [1,3].
  expect_values(ref("Add", {T({2, 1}, {1, 2}), T({1, 3}, {10, 20, 30})})[0], {2, 3},
                {11, 21, 31, 12, 22, 32});
  expect_values(ref("Sqrt", {T({2}, {4, 9})})[0], {2}, {2, 3});
  EXPECT_THROW(ref("Add", {T({2}, {1, 2}), T({3}, {1, 2, 3})}), graphfuse::Error);
  // Integer shape arithmetic (exported transformers compute reshape dims this way).
  EXPECT_EQ(ivalues(ref("Div", {I({1}, {768}), I({1}, {3})})[0]), (std::vector<std::int64_t>{256}));
  EXPECT_EQ(ivalues(ref("Mul", {I({2}, {2, 3}), I({}, {4})})[0]), (std::vector<std::int64_t>{8, 12}));
}

TEST(ReferenceOps, VariadicSumMeanMaxMin) {
  const Tensor a = T({2, 3}, {1, 5, 3, 4, 2, 6});
  const Tensor b = T({3}, {2, 2, 2});
  const Tensor c = T({2, 1}, {0, 10});
  // Three inputs broadcast together, folded left to right.
  expect_values(ref("Sum", {a, b, c})[0], {2, 3}, {3, 7, 5, 16, 14, 18});
  expect_values(ref("Mean", {a, b})[0], {2, 3}, {1.5f, 3.5f, 2.5f, 3, 2, 4});
  expect_values(ref("Max", {a, b, c})[0], {2, 3}, {2, 5, 3, 10, 10, 10});
  expect_values(ref("Min", {a, b})[0], {2, 3}, {1, 2, 2, 2, 2, 2});
  expect_values(ref("Mean", {a})[0], {2, 3}, {1, 5, 3, 4, 2, 6});  // one input: itself
  EXPECT_EQ(ivalues(ref("Max", {I({2}, {1, 7}), I({}, {3})})[0]), (std::vector<std::int64_t>{3, 7}));
  // A NaN operand gives NaN, in either position.
  const float nan = std::nanf("");
  EXPECT_TRUE(std::isnan(ref("Max", {T({1}, {nan}), T({1}, {1})})[0].as<float>()[0]));
  EXPECT_TRUE(std::isnan(ref("Min", {T({1}, {1}), T({1}, {nan})})[0].as<float>()[0]));
  EXPECT_THROW(ref("Sum", {a, I({1}, {1})}), graphfuse::Error);  // mixed types
  EXPECT_THROW(ref("Mean", {I({1}, {1}), I({1}, {3})}), graphfuse::Error);  // int64 Mean
  EXPECT_THROW(ref("Max", {T({2}, {1, 2}), T({3}, {1, 2, 3})}), graphfuse::Error);  // no broadcast
}

TEST(ReferenceOps, UnaryAndGelu) {
  expect_values(ref("Erf", {T({2}, {0, 1})})[0], {2}, {0, std::erf(1.0f)});
  expect_values(ref("Sigmoid", {T({1}, {0})})[0], {1}, {0.5f});
  expect_values(ref("Tanh", {T({1}, {0.5f})})[0], {1}, {std::tanh(0.5f)});
  const float g1 = 0.5f * (1.0f + std::erf(1.0f / std::sqrt(2.0f)));  // Gelu(1)
  expect_values(ref("Gelu", {T({2}, {0, 1})})[0], {2}, {0, g1});
  expect_values(ref("com.microsoft.Gelu", {T({2}, {0, 1})})[0], {2}, {0, g1});
  expect_values(ref("com.microsoft.BiasGelu", {T({2}, {-1, 0}), T({2}, {1, 1})})[0], {2}, {0, g1});
  const float q = 2.0f / (1.0f + std::exp(-1.702f * 2.0f));
  expect_values(ref("com.microsoft.QuickGelu", {T({1}, {2})})[0], {1}, {q});
  expect_values(ref("com.microsoft.QuickGelu", {T({1}, {2})}, attrs({{"alpha", 1.0f}}))[0], {1},
                {2.0f / (1.0f + std::exp(-2.0f))});
  const float gt = 0.5f * (1 + std::tanh(std::sqrt(2.0f / 3.14159265f) * (1 + 0.044715f)));
  expect_values(ref("Gelu", {T({1}, {1})}, attrs({{"approximate", std::string("tanh")}}))[0], {1}, {gt});
}

TEST(ReferenceOps, MatMulBatchedAndBroadcast) {
  const Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = T({3, 2}, {1, 0, 0, 1, 1, 1});
  expect_values(ref("MatMul", {a, b})[0], {2, 2}, {4, 5, 10, 11});
  // Batched A [2,1,2] with shared B [2,2]; and B batched with A broadcast.
  const Tensor a3 = T({2, 1, 2}, {1, 2, 3, 4});
  const Tensor b2 = T({2, 2}, {1, 1, 0, 1});
  expect_values(ref("MatMul", {a3, b2})[0], {2, 1, 2}, {1, 3, 3, 7});
  expect_values(ref("MatMul", {T({1, 2}, {1, 2}), T({2, 2, 1}, {1, 1, 2, 3})})[0], {2, 1, 1}, {3, 8});
  // 1-D operands are promoted and the promoted dims dropped.
  expect_values(ref("MatMul", {T({3}, {1, 1, 1}), b})[0], {2}, {2, 2});
  expect_values(ref("MatMul", {a, T({3}, {1, 0, 1})})[0], {2}, {4, 10});
  auto y = ref("com.microsoft.FusedMatMul", {T({3, 2}, {1, 4, 2, 5, 3, 6}), b},
               attrs({{"transA", std::int64_t{1}}, {"alpha", 2.0f}}));
  expect_values(y[0], {2, 2}, {8, 10, 20, 22});
  EXPECT_THROW(ref("MatMul", {a, a}), graphfuse::Error);
  // transBatchB + transB == B transposed by perm (1, 2, 0), as ONNX Runtime folds it.
  const Tensor bt = T({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});  // [K=2][batch=2][N=3]
  const Tensor a2 = T({2, 1, 3}, {1, 0, 0, 0, 1, 1});
  auto fb = ref("com.microsoft.FusedMatMul", {a2, bt},
                attrs({{"transB", std::int64_t{1}}, {"transBatchB", std::int64_t{1}}}));
  auto tb = ref("Transpose", {bt}, attrs({{"perm", Shape{1, 2, 0}}}));
  expect_values(fb[0], {2, 1, 2}, values(ref("MatMul", {a2, tb[0]})[0]));
}

TEST(ReferenceOps, Gemm) {
  const Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor bt = T({2, 3}, {1, 0, 1, 0, 1, 0});  // B^T
  expect_values(ref("Gemm", {a, bt, T({2}, {1, -1})}, attrs({{"transB", std::int64_t{1}}}))[0],
                {2, 2}, {5, 1, 11, 4});
  expect_values(ref("Gemm", {a, bt, T({2, 1}, {1, 2})},
                    attrs({{"transB", std::int64_t{1}}, {"alpha", 2.0f}, {"beta", 0.5f}}))[0],
                {2, 2}, {8.5f, 4.5f, 21, 11});
  expect_values(ref("com.microsoft.FusedGemm", {a, bt, T({2}, {-6, -1})},
                    attrs({{"transB", std::int64_t{1}}, {"activation", std::string("Relu")}}))[0],
                {2, 2}, {0, 1, 4, 4});
  expect_values(ref("Gemm", {T({3, 2}, {1, 4, 2, 5, 3, 6}), T({3, 1}, {1, 1, 1})},
                    attrs({{"transA", std::int64_t{1}}}))[0],
                {2, 1}, {6, 15});
}

TEST(ReferenceOps, BatchNormAndLayerNorm) {
  auto y = ref("BatchNormalization", {T({1, 2, 1, 2}, {1, 2, 3, 4}), T({2}, {1, 2}), T({2}, {0, 1}),
                                      T({2}, {1, 3}), T({2}, {4, 1})},
               attrs({{"epsilon", 0.0f}}));
  expect_values(y[0], {1, 2, 1, 2}, {0, 0.5f, 1, 3});
  // Row [1, 3]: mean 2, var 1 -> [-1, 1]; scale [1, 2], bias [0, 1].
  y = ref("LayerNormalization", {T({2, 2}, {1, 3, 5, 7}), T({2}, {1, 2}), T({2}, {0, 1})},
          attrs({{"epsilon", 0.0f}}), 3);
  ASSERT_EQ(y.size(), 3u);
  expect_values(y[0], {2, 2}, {-1, 3, -1, 3}, 1e-4f);
  expect_values(y[1], {2, 1}, {2, 6});
  auto s = ref("com.microsoft.SkipLayerNormalization",
               {T({1, 2, 2}, {0, 1, 2, 3}), T({1, 2, 2}, {1, 2, 3, 4}), T({2}, {1, 2}), T({2}, {0, 1}),
                T({2}, {0, 0})},
               attrs({{"epsilon", 0.0f}}), 4);
  ASSERT_EQ(s.size(), 4u);
  expect_values(s[0], {1, 2, 2}, {-1, 3, -1, 3}, 1e-4f);
  expect_values(s[3], {1, 2, 2}, {1, 3, 5, 7});
}

TEST(ReferenceOps, SoftmaxAndReduce) {
  auto y = ref("Softmax", {T({2, 2}, {0, 0, 0, std::log(3.0f)})});
  expect_values(y[0], {2, 2}, {0.5f, 0.5f, 0.25f, 0.75f});
  y = ref("Softmax", {T({2, 2}, {0, 0, 0, std::log(3.0f)})}, attrs({{"axis", std::int64_t{0}}}));
  expect_values(y[0], {2, 2}, {0.5f, 0.25f, 0.5f, 0.75f});
  const Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_values(ref("ReduceMean", {x}, attrs({{"axes", Shape{-1}}}))[0], {2, 1}, {2, 5});
  expect_values(ref("ReduceMean", {x}, attrs({{"axes", Shape{0}}, {"keepdims", std::int64_t{0}}}))[0],
                {3}, {2.5f, 3.5f, 4.5f});
  expect_values(ref("ReduceMean", {x, I({1}, {1})})[0], {2, 1}, {2, 5});
  expect_values(ref("ReduceMean", {x})[0], {1, 1}, {3.5f});
  expect_values(ref("ReduceSum", {x, I({1}, {0})}, attrs({{"keepdims", std::int64_t{0}}}))[0], {3},
                {5, 7, 9});
  expect_values(ref("ReduceMax", {x}, attrs({{"axes", Shape{1}}}))[0], {2, 1}, {3, 6});
}

TEST(ReferenceOps, Pooling) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  const Tensor x = T({1, 1, 4, 4}, v);
  auto k2 = attrs({{"kernel_shape", Shape{2, 2}}, {"strides", Shape{2, 2}}});
  expect_values(ref("MaxPool", {x}, k2)[0], {1, 1, 2, 2}, {5, 7, 13, 15});
  expect_values(ref("AveragePool", {x}, k2)[0], {1, 1, 2, 2}, {2.5f, 4.5f, 10.5f, 12.5f});
  // 3x3 stride 2 pad 1 (ResNet's stem pool).
  auto k3 = attrs({{"kernel_shape", Shape{3, 3}}, {"strides", Shape{2, 2}}, {"pads", Shape{1, 1, 1, 1}}});
  expect_values(ref("MaxPool", {x}, k3)[0], {1, 1, 2, 2}, {5, 7, 13, 15});
  // Padding excluded from the average unless count_include_pad.
  expect_values(ref("AveragePool", {x}, k3)[0], {1, 1, 2, 2}, {2.5f, 4, 8.5f, 10});
  k3.set("count_include_pad", std::int64_t{1});
  expect_values(ref("AveragePool", {x}, k3)[0], {1, 1, 2, 2}, {10.0f / 9, 24.0f / 9, 51.0f / 9, 90.0f / 9});
  // ceil_mode keeps the partial last window.
  auto kc = attrs({{"kernel_shape", Shape{3, 3}}, {"strides", Shape{2, 2}}, {"ceil_mode", std::int64_t{1}}});
  expect_values(ref("MaxPool", {x}, kc)[0], {1, 1, 2, 2}, {10, 11, 14, 15});
  expect_values(ref("GlobalAveragePool", {x})[0], {1, 1, 1, 1}, {7.5f});
  expect_values(ref("GlobalMaxPool", {x})[0], {1, 1, 1, 1}, {15});
}

TEST(ReferenceOps, ShapeOps) {
  const Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(ref("Reshape", {x, I({2}, {3, -1})})[0].shape, (Shape{3, 2}));
  EXPECT_EQ(ref("Reshape", {x, I({3}, {0, 3, 1})})[0].shape, (Shape{2, 3, 1}));
  EXPECT_THROW(ref("Reshape", {x, I({2}, {4, -1})}), graphfuse::Error);
  EXPECT_EQ(ref("Flatten", {T({2, 3, 1, 1}, {1, 2, 3, 4, 5, 6})})[0].shape, (Shape{2, 3}));
  EXPECT_EQ(ref("Flatten", {x}, attrs({{"axis", std::int64_t{0}}}))[0].shape, (Shape{1, 6}));
  expect_values(ref("Transpose", {x})[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  auto t3 = ref("Transpose", {T({2, 1, 3}, {1, 2, 3, 4, 5, 6})}, attrs({{"perm", Shape{2, 0, 1}}}));
  expect_values(t3[0], {3, 2, 1}, {1, 4, 2, 5, 3, 6});
  expect_values(ref("Concat", {x, T({2, 1}, {7, 8})}, attrs({{"axis", std::int64_t{1}}}))[0], {2, 4},
                {1, 2, 3, 7, 4, 5, 6, 8});
  expect_values(ref("Concat", {x, T({1, 3}, {7, 8, 9})}, attrs({{"axis", std::int64_t{0}}}))[0], {3, 3},
                {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_values(ref("Gather", {x, I({2}, {2, -3})}, attrs({{"axis", std::int64_t{1}}}))[0], {2, 2},
                {3, 1, 6, 4});
  EXPECT_EQ(ivalues(ref("Gather", {I({3}, {1, 128, 256}), I({}, {1})})[0]), (std::vector<std::int64_t>{128}));
  EXPECT_EQ(ref("Gather", {I({3}, {1, 128, 256}), I({}, {1})})[0].shape, Shape{});
  EXPECT_EQ(ivalues(ref("Shape", {x})[0]), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(ref("Unsqueeze", {x, I({2}, {0, -1})})[0].shape, (Shape{1, 2, 3, 1}));
  EXPECT_EQ(ref("Unsqueeze", {x}, attrs({{"axes", Shape{1}}}))[0].shape, (Shape{2, 1, 3}));
  EXPECT_EQ(ref("Squeeze", {T({1, 2, 1}, {1, 2})})[0].shape, (Shape{2}));
  EXPECT_EQ(ref("Squeeze", {T({1, 2, 1}, {1, 2}), I({1}, {2})})[0].shape, (Shape{1, 2}));
  expect_values(ref("Slice", {x, I({1}, {1}), I({1}, {100}), I({1}, {1})})[0], {2, 2}, {2, 3, 5, 6});
  expect_values(ref("Slice", {x, I({1}, {-1}), I({1}, {-100}), I({1}, {1}), I({1}, {-2})})[0], {2, 2},
                {3, 1, 6, 4});
  EXPECT_EQ(ivalues(ref("Cast", {T({2}, {1.9f, -2.5f})}, attrs({{"to", std::int64_t{7}}}))[0]),
            (std::vector<std::int64_t>{1, -2}));
  auto sp = ref("Split", {x, I({2}, {1, 2})}, attrs({{"axis", std::int64_t{1}}}), 2);
  ASSERT_EQ(sp.size(), 2u);
  expect_values(sp[0], {2, 1}, {1, 4});
  expect_values(sp[1], {2, 2}, {2, 3, 5, 6});
  sp = ref("Split", {T({5}, {1, 2, 3, 4, 5})}, {}, 3);
  expect_values(sp[2], {1}, {5});
  auto id = ref("Identity", {x});
  EXPECT_EQ(id[0].data, x.data);  // shares bytes
  auto dr = ref("Dropout", {x}, {}, 2);
  ASSERT_EQ(dr.size(), 2u);
  EXPECT_EQ(dr[1].dtype, DType::Bool);
  expect_values(ref("Constant", {}, attrs({{"value", x}}))[0], {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_values(ref("Constant", {}, attrs({{"value_float", 2.5f}}))[0], {}, {2.5f});
}

TEST(ReferenceOps, PadModes) {
  const Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto mode = [](const char* m) { return attrs({{"mode", std::string(m)}}); };
  // pads = [begin_0, begin_1, end_0, end_1]
  expect_values(ref("Pad", {x, I({4}, {0, 1, 1, 0})})[0], {3, 4}, {0, 1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0});
  expect_values(ref("Pad", {x, I({4}, {0, 0, 0, 1}), T({}, {9})})[0], {2, 4}, {1, 2, 3, 9, 4, 5, 6, 9});
  expect_values(ref("Pad", {x, I({4}, {0, 2, 0, 1})}, mode("reflect"))[0], {2, 6},
                {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5});
  expect_values(ref("Pad", {x, I({4}, {1, 0, 0, 0})}, mode("edge"))[0], {3, 3}, {1, 2, 3, 1, 2, 3, 4, 5, 6});
  expect_values(ref("Pad", {x, I({4}, {0, 1, 0, 1})}, mode("wrap"))[0], {2, 5}, {3, 1, 2, 3, 1, 6, 4, 5, 6, 4});
  expect_values(ref("Pad", {x, I({4}, {0, -1, 0, 0})})[0], {2, 2}, {2, 3, 5, 6});  // negative: crops
  // axes input (opset 18): pads for the listed axes only.
  expect_values(ref("Pad", {x, I({2}, {1, 0}), T({}, {7}), I({1}, {-1})})[0], {2, 4}, {7, 1, 2, 3, 7, 4, 5, 6});
  EXPECT_THROW(ref("Pad", {x, I({3}, {0, 0, 0})}), graphfuse::Error);
  EXPECT_THROW(ref("Pad", {x, I({4}, {0, -4, 0, 0})}), graphfuse::Error);
  EXPECT_THROW(ref("Pad", {x, I({4}, {0, 0, 0, 0})}, mode("mirror")), graphfuse::Error);
  EXPECT_THROW(ref("Pad", {T({0}, {}), I({2}, {1, 0})}, mode("edge")), graphfuse::Error);
}

TEST(ReferenceOps, ResizeNearestAndLinear) {
  const Tensor none = T({0}, {});  // an absent roi / scales
  const Tensor x = T({1, 1, 2, 2}, {1, 2, 3, 4});
  // half_pixel, round_prefer_floor (the defaults): -0.25 -> 0, 0.25 -> 0, 0.75 -> 1, 1.25 -> 1.
  expect_values(ref("Resize", {x, none, T({4}, {1, 1, 2, 2})})[0], {1, 1, 4, 4},
                {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  const Tensor row = T({1, 1, 1, 2}, {1, 2});
  const auto linear = [](const char* coord) {
    return attrs({{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string(coord)}});
  };
  // half_pixel: source -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
  expect_values(ref("Resize", {row, none, T({4}, {1, 1, 1, 2})}, linear("half_pixel"))[0], {1, 1, 1, 4},
                {1, 1.25f, 1.75f, 2});
  expect_values(ref("Resize", {row, none, none, I({4}, {1, 1, 1, 3})}, linear("align_corners"))[0], {1, 1, 1, 3},
                {1, 1.5f, 2});
  expect_values(ref("Resize", {row, none, T({4}, {1, 1, 1, 2})}, linear("asymmetric"))[0], {1, 1, 1, 4},
                {1, 1.5f, 2, 2});
  // Bilinear in both axes at once: the centre of the 2x2 block.
  expect_values(ref("Resize", {x, none, none, I({4}, {1, 1, 1, 1})}, linear("align_corners"))[0], {1, 1, 1, 1},
                {1});
  expect_values(ref("Resize", {x, none, T({4}, {1, 1, 0.5f, 0.5f})}, linear("half_pixel"))[0], {1, 1, 1, 1},
                {2.5f});
  EXPECT_THROW(ref("Resize", {x, none, T({4}, {1, 1, 2, 2}), I({4}, {1, 1, 4, 4})}), graphfuse::Error);
  EXPECT_THROW(ref("Resize", {x, none, T({4}, {1, 1, 0, 2})}), graphfuse::Error);
  EXPECT_THROW(ref("Resize", {x, none, T({4}, {1, 1, 2, 2})}, attrs({{"mode", std::string("cubic")}})),
               graphfuse::Error);
}

TEST(ReferenceOps, RegistryListsEveryRequiredOp) {
  for (const char* op :
       {"Conv2D", "BiasAdd", "ReLU", "FusedConv2D_BiasAdd_ReLU", "Conv", "Relu", "Clip", "Sigmoid",
        "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Erf", "Add", "Sub", "Mul", "Div", "Pow",
        "Sqrt", "MatMul", "Gemm", "BatchNormalization", "MaxPool", "AveragePool",
        "GlobalAveragePool", "Flatten", "Reshape", "Transpose", "Concat", "Softmax", "ReduceMean",
        "LayerNormalization", "Gelu", "Identity", "Dropout", "Shape", "Gather", "Unsqueeze",
        "Squeeze", "Constant", "Slice", "Pad", "Resize", "Sum", "Mean", "Max", "Min", "com.microsoft.FusedConv", "com.microsoft.FusedMatMul",
        "com.microsoft.Gelu", "com.microsoft.BiasGelu", "com.microsoft.QuickGelu",
        "com.microsoft.SkipLayerNormalization"}) {
    EXPECT_TRUE(gk::registry(gk::KernelSet::Reference).has(op)) << op;
    EXPECT_TRUE(gk::registry(gk::KernelSet::Fast).has(op)) << op;
  }
}

}  // namespace
