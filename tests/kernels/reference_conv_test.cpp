// Reference convolution kernels against hand-computed cases (ONNX and TF conventions).
#include <cmath>

#include "graphfuse/kernels/conv.h"
#include "kernels/test_util.h"

namespace {

const Tensor kX33 = T({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

TEST(ReferenceConv, DiagonalKernelValid) {
  auto y = ref("Conv", {kX33, T({1, 1, 2, 2}, {1, 0, 0, 1})});
  expect_values(y[0], {1, 1, 2, 2}, {6, 8, 12, 14});
  y = ref("Conv", {kX33, T({1, 1, 2, 2}, {1, 0, 0, 1}), T({1}, {1})});
  expect_values(y[0], {1, 1, 2, 2}, {7, 9, 13, 15});
}

TEST(ReferenceConv, PadsAndStrides) {
  const Tensor ones = T({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto y = ref("Conv", {kX33, ones}, attrs({{"pads", Shape{1, 1, 1, 1}}}));
  expect_values(y[0], {1, 1, 3, 3}, {12, 21, 16, 27, 45, 33, 24, 39, 28});
  y = ref("Conv", {kX33, ones}, attrs({{"pads", Shape{1, 1, 1, 1}}, {"strides", Shape{2, 2}}}));
  expect_values(y[0], {1, 1, 2, 2}, {12, 16, 24, 28});
  // Asymmetric pads: only the bottom/right.
  y = ref("Conv", {kX33, ones}, attrs({{"pads", Shape{0, 0, 1, 1}}}));
  expect_values(y[0], {1, 1, 2, 2}, {45, 33, 39, 28});
}

TEST(ReferenceConv, AutoPadSameUpperAndLower) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  const Tensor x = T({1, 1, 4, 4}, v);
  const Tensor ones = T({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto y = ref("Conv", {x, ones}, attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Shape{2, 2}}}));
  expect_values(y[0], {1, 1, 2, 2}, {54, 45, 72, 54});
  y = ref("Conv", {x, ones}, attrs({{"auto_pad", std::string("SAME_LOWER")}, {"strides", Shape{2, 2}}}));
  expect_values(y[0], {1, 1, 2, 2}, {14, 30, 57, 99});
}

TEST(ReferenceConv, Dilation) {
  auto y = ref("Conv", {kX33, T({1, 1, 2, 2}, {1, 1, 1, 1})}, attrs({{"dilations", Shape{2, 2}}}));
  expect_values(y[0], {1, 1, 1, 1}, {20});
}

TEST(ReferenceConv, GroupsAndChannels) {
  auto y = ref("Conv", {T({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), T({2, 1, 1, 1}, {2, -1})},
               attrs({{"group", std::int64_t{2}}}));
  expect_values(y[0], {1, 2, 2, 2}, {2, 4, 6, 8, -5, -6, -7, -8});
  y = ref("Conv", {T({1, 2, 1, 1}, {3, 4}), T({3, 2, 1, 1}, {1, 1, 1, -1, 2, 0})});
  expect_values(y[0], {1, 3, 1, 1}, {7, -1, 6});
}

TEST(ReferenceConv, TfConv2DSameStride) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  auto y = ref("Conv2D", {T({1, 4, 4, 1}, v), T({3, 3, 1, 1}, std::vector<float>(9, 1.0f))},
               attrs({{"padding", std::string("SAME")}, {"strides", Shape{1, 2, 2, 1}}}));
  expect_values(y[0], {1, 2, 2, 1}, {54, 45, 72, 54});
  y = ref("Conv2D", {T({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), T({2, 2, 1, 1}, {1, 1, 1, 1})},
          attrs({{"padding", std::string("VALID")}, {"dilations", Shape{2, 2}}}));
  expect_values(y[0], {1, 1, 1, 1}, {20});
}

TEST(ReferenceConv, TfHwioChannelsAndFused) {
  const Tensor x = T({1, 1, 1, 2}, {3, 4});
  const Tensor w = T({1, 1, 2, 3}, {1, 1, 2, 1, -1, 0});  // HWIO: w[i][o]
  expect_values(ref("Conv2D", {x, w})[0], {1, 1, 1, 3}, {7, -1, 6});
  const Tensor b = T({3}, {-8, 0, 1});
  expect_values(ref("FusedConv2D_BiasAdd_ReLU", {x, w, b}, attrs({{"activation", std::string("ReLU")}}))[0],
                {1, 1, 1, 3}, {0, 0, 7});
  // Without the attribute the op name says which activation.
  expect_values(ref("FusedConv2D_BiasAdd_Relu6", {x, w, T({3}, {-8, 0, 1})})[0], {1, 1, 1, 3}, {0, 0, 6});
  expect_values(ref("FusedConv2D_BiasAdd", {x, w, b})[0], {1, 1, 1, 3}, {-1, -1, 7});
  expect_values(ref("_FusedConv2D", {x, w, b},
                    attrs({{"fused_ops", std::vector<std::string>{"BiasAdd", "Relu"}}}))[0],
                {1, 1, 1, 3}, {0, 0, 7});
}

TEST(ReferenceConv, TfDepthwiseViaGroups) {
  // Input depth 2, filter depth 1: TF's grouped convolution, one group per channel.
  auto y = ref("Conv2D", {T({1, 1, 2, 2}, {1, 5, 2, 6}), T({1, 1, 1, 2}, {2, -1})});
  expect_values(y[0], {1, 1, 2, 2}, {2, -5, 4, -6});
}

TEST(ReferenceConv, OnnxFusedConvActivationsAndSum) {
  const Tensor x = T({1, 2, 1, 1}, {3, 4});
  const Tensor w = T({3, 2, 1, 1}, {1, 1, 1, -1, 2, 0});
  const Tensor b = T({3}, {-8, 0, 1});
  auto act = [&](const std::string& name, std::vector<float> params) {
    Attributes a = attrs({{"activation", name}});
    if (!params.empty()) a.set("activation_params", params);
    return ref("com.microsoft.FusedConv", {x, w, b}, a)[0];
  };
  expect_values(act("Relu", {}), {1, 3, 1, 1}, {0, 0, 7});
  expect_values(act("LeakyRelu", {0.1f}), {1, 3, 1, 1}, {-0.1f, -0.1f, 7});
  expect_values(act("Clip", {0.0f, 5.0f}), {1, 3, 1, 1}, {0, 0, 5});
  expect_values(act("HardSigmoid", {0.2f, 0.5f}), {1, 3, 1, 1}, {0.3f, 0.3f, 1});
  const float s1 = 1.0f / (1.0f + std::exp(1.0f)), s7 = 1.0f / (1.0f + std::exp(-7.0f));
  expect_values(act("Sigmoid", {}), {1, 3, 1, 1}, {s1, s1, s7});
  expect_values(act("Tanh", {}), {1, 3, 1, 1}, {std::tanh(-1.0f), std::tanh(-1.0f), std::tanh(7.0f)});
  // Z is added before the activation.
  auto y = ref("com.microsoft.FusedConv", {x, w, b, T({1, 3, 1, 1}, {1, 2, 3})},
               attrs({{"activation", std::string("Relu")}}));
  expect_values(y[0], {1, 3, 1, 1}, {0, 1, 10});
}

TEST(ReferenceConv, EpilogueOps) {
  expect_values(ref("BiasAdd", {T({1, 1, 2, 2}, {1, 2, 3, 4}), T({2}, {10, 20})})[0], {1, 1, 2, 2},
                {11, 22, 13, 24});
  expect_values(ref("BiasAdd", {T({1, 2, 1, 2}, {1, 2, 3, 4}), T({2}, {10, 20})},
                    attrs({{"data_format", std::string("NCHW")}}))[0],
                {1, 2, 1, 2}, {11, 12, 23, 24});
  expect_values(ref("ReLU", {T({4}, {-1, 0, 2, -3})})[0], {4}, {0, 0, 2, 0});
  expect_values(ref("Relu6", {T({3}, {-1, 3, 9})})[0], {3}, {0, 3, 6});
  expect_values(ref("Clip", {T({3}, {-1, 3, 9}), T({}, {0}), T({}, {5})})[0], {3}, {0, 3, 5});
  expect_values(ref("Clip", {T({3}, {-1, 3, 9}), none(), T({}, {5})})[0], {3}, {-1, 3, 5});
  expect_values(ref("Clip", {T({2}, {-1, 9})}, attrs({{"min", 0.0f}, {"max", 6.0f}}))[0], {2}, {0, 6});
  expect_values(ref("LeakyRelu", {T({2}, {-10, 10})})[0], {2}, {-0.1f, 10});
  expect_values(ref("HardSigmoid", {T({3}, {-5, 0, 5})})[0], {3}, {0, 0.5f, 1});
  expect_values(ref("HardSwish", {T({3}, {-4, 1, 4})})[0], {3}, {0, 1.0f * (1.0f / 6 + 0.5f), 4});
}

TEST(ReferenceConv, ShapeInferenceAndErrors) {
  graphfuse::Attributes a = attrs({{"padding", std::string("SAME")}, {"strides", Shape{2, 2}}});
  auto p = gk::conv_params_tf(a, {1, 7, 9, 3}, {3, 3, 3, 8});
  EXPECT_EQ(p.output_shape(), (Shape{1, 4, 5, 8}));
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 4 * 5 * 8 * 27);
  p = gk::conv_params_onnx(attrs({{"pads", Shape{1, 1, 1, 1}}, {"dilations", Shape{2, 2}},
                                  {"group", std::int64_t{2}}}),
                           {2, 4, 10, 10}, {6, 2, 3, 3});
  EXPECT_EQ(p.output_shape(), (Shape{2, 6, 8, 8}));
  EXPECT_THROW(gk::conv_params_onnx({}, {1, 4, 10, 10}, {6, 3, 3, 3}), graphfuse::Error);
  EXPECT_THROW(ref("Conv", {T({1, 1, 2, 2}, {1, 2, 3, 4}), T({1, 1, 3, 3}, std::vector<float>(9, 1))}),
               graphfuse::Error);
  EXPECT_THROW(gk::parse_activation("Swish"), graphfuse::Error);
  try {
    ref("NoSuchOp", {});
    FAIL();
  } catch (const graphfuse::Error& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchOp"), std::string::npos);
  }
}

}  // namespace
