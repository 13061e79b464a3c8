// The TF ops of kernels/reference/tf_*.cpp: hand-computed cases, the fused ops against the
// unfused graph they replace, and the fast set against the reference set.
#include <cmath>

#include "kernels/test_util.h"

namespace {

using Strings = std::vector<std::string>;

// The unfused activation op applied to t (LeakyRelu with the fused ops' alpha).
Tensor activate(const std::string& act, const Tensor& t) {
  return ref(act, {t}, act == "LeakyRelu" ? attrs({{"alpha", 0.3f}}) : Attributes{})[0];
}

TEST(TfOps, TransposeTakesItsPermAsAnInput) {
  const Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_values(ref("Transpose", {x, I({2}, {1, 0})})[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  // A 3-D permutation that is not its own inverse: y[i][j][k] = x[j][k][i].
  const Tensor x3 = T({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  expect_values(ref("Transpose", {x3, I({3}, {2, 0, 1})})[0], {3, 2, 2},
                {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  // The ONNX form (perm attribute) is unchanged.
  expect_values(ref("Transpose", {x}, attrs({{"perm", Shape{1, 0}}}))[0], {3, 2}, {1, 4, 2, 5, 3, 6});
}

TEST(TfOps, ConcatV2AndSplitV) {
  const Tensor a = T({2, 1}, {1, 2});
  const Tensor b = T({2, 2}, {3, 4, 5, 6});
  const Tensor c = ref("ConcatV2", {a, b, I({}, {-1})})[0];
  expect_values(c, {2, 3}, {1, 3, 4, 2, 5, 6});
  // -1 takes the rest of the axis.
  auto parts = ref("SplitV", {c, I({2}, {-1, 2}), I({}, {1})}, attrs({{"num_split", std::int64_t{2}}}), 2);
  ASSERT_EQ(parts.size(), 2u);
  expect_values(parts[0], {2, 1}, {1, 2});
  expect_values(parts[1], {2, 2}, {3, 4, 5, 6});
  EXPECT_THROW(ref("SplitV", {c, I({2}, {2, 2}), I({}, {1})}, {}, 2), graphfuse::Error);
  EXPECT_THROW(ref("SplitV", {c, I({2}, {-1, -1}), I({}, {1})}, {}, 2), graphfuse::Error);
}

TEST(TfOps, AddV2AndElu) {
  expect_values(ref("AddV2", {T({2}, {1, 2}), T({}, {10})})[0], {2}, {11, 12});
  expect_values(ref("Elu", {T({3}, {-1, 0, 2})})[0], {3}, {std::expm1(-1.0f), 0, 2});
  expect_values(ref("Elu", {T({1}, {-1})}, attrs({{"alpha", 2.0f}}))[0], {1}, {2 * std::expm1(-1.0f)});
}

TEST(TfOps, MatMulTransposeAttributes) {
  const Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor at = T({3, 2}, {1, 4, 2, 5, 3, 6});  // a transposed
  const Tensor b = T({3, 2}, {1, 0, 0, 1, 1, 1});
  const Tensor bt = T({2, 3}, {1, 0, 1, 0, 1, 1});  // b transposed
  const std::vector<float> ab{4, 5, 10, 11};
  expect_values(ref("MatMul", {a, b})[0], {2, 2}, ab);
  expect_values(ref("MatMul", {at, b}, attrs({{"transpose_a", true}}))[0], {2, 2}, ab);
  expect_values(ref("MatMul", {a, bt}, attrs({{"transpose_a", false}, {"transpose_b", true}}))[0], {2, 2}, ab);
  expect_values(ref("MatMul", {at, bt}, attrs({{"transpose_a", true}, {"transpose_b", true}}))[0], {2, 2}, ab);
  expect_values(fast("MatMul", {at, bt}, attrs({{"transpose_a", true}, {"transpose_b", true}}))[0], {2, 2}, ab);
}

TEST(TfOps, FusedMatMulIsMatMulBiasAddActivation) {
  const Tensor a = rnd({5, 7}, 1);
  const Tensor w = rnd({6, 7}, 2);  // used with transpose_b
  const Tensor b = rnd({6}, 3);
  Attributes mm = attrs({{"transpose_b", true}});
  const Tensor biased = ref("BiasAdd", {ref("MatMul", {a, w}, mm)[0], b})[0];
  for (const std::string act : {"Relu", "Relu6", "Elu", "Tanh", "Sigmoid", "LeakyRelu"}) {
    Attributes f = attrs({{"transpose_b", true}, {"fused_ops", Strings{"BiasAdd", act}},
                          {"num_args", std::int64_t{1}}, {"leakyrelu_alpha", 0.3f}});
    const Tensor want = activate(act, biased);
    expect_close(ref("_FusedMatMul", {a, w, b}, f)[0], want, 1e-5, 1e-6, act);
    expect_close(fast("_FusedMatMul", {a, w, b}, f)[0], want, 1e-4, 1e-5, "fast " + act);
  }
  Attributes plain = attrs({{"transpose_b", true}, {"fused_ops", Strings{"BiasAdd"}}});
  expect_close(ref("_FusedMatMul", {a, w, b}, plain)[0], biased, 1e-5, 1e-6);
  // The bias must be a vector of the product's width.
  EXPECT_THROW(ref("_FusedMatMul", {a, w, rnd({5}, 4)}, plain), graphfuse::Error);
}

TEST(TfOps, FusedConv2DWithResidualAndEveryActivation) {
  // Batch 2, non-square, stride 2, SAME padding (the odd pixel padded at the end).
  const Tensor x = rnd({2, 7, 6, 3}, 5);
  const Tensor w = rnd({3, 3, 3, 4}, 6);
  const Tensor b = rnd({4}, 7);
  Attributes conv = attrs({{"strides", Shape{1, 2, 2, 1}}, {"padding", std::string("SAME")}});
  const Tensor biased = ref("BiasAdd", {ref("Conv2D", {x, w}, conv)[0], b})[0];
  ASSERT_EQ(biased.shape, (Shape{2, 4, 3, 4}));
  const Tensor z = rnd({2, 4, 3, 4}, 8);
  const Tensor sum = ref("Add", {biased, z})[0];
  for (const std::string act : {"Relu", "Relu6", "Elu", "Tanh", "Sigmoid", "LeakyRelu"}) {
    Attributes f = conv;
    f.set("fused_ops", Strings{"BiasAdd", act});
    f.set("num_args", std::int64_t{1});
    f.set("leakyrelu_alpha", 0.3f);
    const Tensor want = activate(act, biased);
    expect_close(ref("_FusedConv2D", {x, w, b}, f)[0], want, 1e-5, 1e-6, act);
    expect_close(fast("_FusedConv2D", {x, w, b}, f)[0], want, 1e-4, 1e-5, "fast " + act);
    f.set("fused_ops", Strings{"BiasAdd", "Add", act});
    f.set("num_args", std::int64_t{2});
    const Tensor want_sum = activate(act, sum);
    expect_close(ref("_FusedConv2D", {x, w, b, z}, f)[0], want_sum, 1e-5, 1e-6, "Add " + act);
    expect_close(fast("_FusedConv2D", {x, w, b, z}, f)[0], want_sum, 1e-4, 1e-5, "fast Add " + act);
  }
}

// An NCHW Conv2D (which TF's CPU kernels lack) is the NHWC one between Transposes, with its
// strides, dilations and explicit paddings given in NCHW order.
TEST(TfOps, Conv2DNchwIsNhwcBetweenTransposes) {
  const Tensor x = rnd({2, 7, 6, 3}, 15);  // NHWC
  const Tensor w = rnd({3, 2, 3, 4}, 16);
  const Tensor x_nchw = ref("Transpose", {x}, attrs({{"perm", Shape{0, 3, 1, 2}}}))[0];
  for (const Attributes& nhwc :
       {attrs({{"strides", Shape{1, 2, 1, 1}}, {"dilations", Shape{1, 1, 2, 1}}, {"padding", std::string("SAME")}}),
        attrs({{"padding", std::string("EXPLICIT")}, {"explicit_paddings", Shape{0, 0, 1, 2, 0, 1, 0, 0}}})}) {
    Attributes nchw = nhwc;
    nchw.set("data_format", std::string("NCHW"));
    for (const char* name : {"strides", "dilations"})
      if (auto v = nhwc.get_if<std::vector<std::int64_t>>(name)) nchw.set(name, Shape{(*v)[0], (*v)[3], (*v)[1], (*v)[2]});
    if (auto e = nhwc.get_if<std::vector<std::int64_t>>("explicit_paddings"))
      nchw.set("explicit_paddings", Shape{(*e)[0], (*e)[1], (*e)[6], (*e)[7], (*e)[2], (*e)[3], (*e)[4], (*e)[5]});
    const Tensor want = ref("Transpose", {ref("Conv2D", {x, w}, nhwc)[0]}, attrs({{"perm", Shape{0, 3, 1, 2}}}))[0];
    expect_close(ref("Conv2D", {x_nchw, w}, nchw)[0], want, 1e-6, 1e-6, "reference");
    expect_close(fast("Conv2D", {x_nchw, w}, nchw)[0], want, 1e-4, 1e-5, "fast");
  }
  EXPECT_THROW(ref("Conv2D", {rnd({2, 3, 4}, 1), w}, attrs({{"data_format", std::string("NCHW")}})), graphfuse::Error);
}

TEST(TfOps, FusedConv2DRejectsWhatItCannotCompute) {
  const Tensor x = rnd({1, 4, 4, 2}, 9), w = rnd({1, 1, 2, 3}, 10), b = rnd({3}, 11);
  auto fused = [](Strings ops, std::int64_t args) {
    return attrs({{"fused_ops", ops}, {"num_args", args}});
  };
  EXPECT_THROW(ref("_FusedConv2D", {x, w, b}, fused({"BiasAdd", "Gelu"}, 1)), graphfuse::Error);
  EXPECT_THROW(ref("_FusedConv2D", {x, w, b}, fused({"BiasAdd", "Relu", "Add"}, 2)), graphfuse::Error);
  EXPECT_THROW(ref("_FusedConv2D", {x, w, b}, fused({"FusedBatchNorm"}, 4)), graphfuse::Error);
  // The residual is missing, or has a broadcastable but different shape (TF rejects it too).
  EXPECT_THROW(ref("_FusedConv2D", {x, w, b}, fused({"BiasAdd", "Add"}, 2)), graphfuse::Error);
  EXPECT_THROW(ref("_FusedConv2D", {x, w, b, rnd({3}, 12)}, fused({"BiasAdd", "Add"}, 2)), graphfuse::Error);
}

}  // namespace
