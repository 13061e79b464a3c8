// Fast kernels against the reference kernels on seeded random shapes (rel err <= 1e-4).
#include <cstring>
#include <limits>
#include <random>

#include "fast/conv_gemm.h"
#include "fast/layout.h"
#include "fast/vmath.h"
#include "graphfuse/kernels/conv.h"
#include "kernels/test_util.h"

namespace {

// Compares one op's fast and reference results output by output.
void same(const std::string& op, const std::vector<Tensor>& in, const Attributes& a = {},
          const std::string& what = "", std::size_t outs = 1) {
  auto r = ref(op, in, a, outs);
  auto f = fast(op, in, a, outs);
  ASSERT_EQ(r.size(), f.size());
  // atol covers sums that cancel to near zero; rtol is the 1e-4 the issue asks for.
  for (std::size_t i = 0; i < r.size(); ++i) expect_close(f[i], r[i], 1e-4, 1e-5, op + " " + what);
}

struct Rng {
  std::mt19937 g{1234};
  std::int64_t pick(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
  }
};

// The channels-last copy of an NCHW tensor (the logical shape is kept).
Tensor nhwc(const Tensor& t) { return gk::fast::convert_layout(t, gk::Layout::Plain, gk::Layout::ChannelsLast); }

const char* kActs[] = {"Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", ""};

TEST(FastVsReference, OnnxConvRandomShapes) {
  Rng r;
  for (int t = 0; t < 24; ++t) {
    const ConvCase cc = random_conv_case(t, [&](std::int64_t lo, std::int64_t hi) { return r.pick(lo, hi); });
    const std::int64_t cin_g = cc.cin_g, g = cc.group, cin = cc.cin, cout = cc.cout;
    const std::int64_t k = cc.k, s = cc.stride, d = cc.dilation, h = cc.h, w = cc.w, n = cc.n;
    Attributes a = attrs({{"strides", Shape{s, s}}, {"dilations", Shape{d, d}}, {"group", g}});
    if (t % 3 == 0) a.set("auto_pad", std::string("SAME_UPPER"));
    else a.set("pads", Shape{r.pick(0, k / 2), r.pick(0, k / 2), r.pick(0, k / 2), r.pick(0, k / 2)});
    const Tensor x = rnd({n, cin, h, w}, 10 + t), wt = rnd({cout, cin_g, k, k}, 100 + t);
    const Tensor b = rnd({cout}, 200 + t);
    const std::string what = "case " + std::to_string(t);
    same("Conv", {x, wt}, a, what);
    same("Conv", {x, wt, b}, a, what);
    // Fused: every activation, with and without the residual input Z.
    Attributes fa = a;
    fa.set("activation", std::string(kActs[t % 7]));
    if (std::string(kActs[t % 7]) == "Clip") fa.set("activation_params", std::vector<float>{-0.5f, 0.5f});
    auto y = ref("Conv", {x, wt, b}, a)[0];
    same("com.microsoft.FusedConv", {x, wt, b}, fa, what);
    same("com.microsoft.FusedConv", {x, wt, b, rnd(y.shape, 300 + t)}, fa, what + " with Z");
  }
}

TEST(FastVsReference, TfConv2DRandomShapes) {
  Rng r;
  for (int t = 0; t < 16; ++t) {
    const bool depthwise = t % 4 == 3;
    const std::int64_t cin = r.pick(1, 12), k = r.pick(1, 3) * 2 - 1, s = r.pick(1, 2), d = r.pick(1, 2);
    const std::int64_t cout = depthwise ? cin : r.pick(1, 12);
    const std::int64_t h = r.pick(k * d, 13), w = r.pick(k * d, 13);
    Attributes a = attrs({{"strides", Shape{1, s, s, 1}}, {"dilations", Shape{d, d}},
                          {"padding", std::string(t % 2 ? "SAME" : "VALID")}});
    const Tensor x = rnd({1, h, w, cin}, 20 + t), wt = rnd({k, k, depthwise ? 1 : cin, cout}, 120 + t);
    const Tensor b = rnd({cout}, 220 + t);
    same("Conv2D", {x, wt}, a, std::to_string(t));
    a.set("activation", std::string(t % 2 ? "ReLU" : "Relu6"));
    same("FusedConv2D_BiasAdd_ReLU", {x, wt, b}, a, std::to_string(t));
  }
}

// Channels-last convolutions with small output planes run as im2col + GEMM (conv_gemm.h):
// against the reference on NCHW, with strides, dilations, asymmetric pads, bias, residual Z
// and an activation, OIHW weights from an owner (cached copy, run twice) and without.
TEST(FastVsReference, ConvAsGemmOnChannelsLastSmallPlanes) {
  struct Case {
    std::int64_t cin, cout, h, w, k, stride, dil, pad_t, pad_l, pad_b, pad_r;
    bool bias, z;
  };
  const Case cases[] = {
      {128, 64, 7, 7, 3, 1, 1, 1, 1, 1, 1, true, false},
      {160, 256, 14, 13, 3, 2, 1, 1, 1, 1, 1, true, true},
      {128, 72, 9, 9, 3, 1, 2, 2, 0, 1, 2, false, true},
      {130, 65, 6, 8, 2, 1, 1, 0, 1, 1, 0, false, false},
  };
  for (const Case& k : cases) {
    gk::ConvParams p;
    p.n = 2;
    p.c_in = k.cin;
    p.h = k.h;
    p.w = k.w;
    p.c_out = k.cout;
    p.kh = p.kw = k.k;
    p.stride_h = p.stride_w = k.stride;
    p.dil_h = p.dil_w = k.dil;
    p.pad_t = k.pad_t;
    p.pad_l = k.pad_l;
    p.pad_b = k.pad_b;
    p.pad_r = k.pad_r;
    p.has_bias = k.bias;
    p.has_sum = k.z;
    p.act = gk::ActivationSpec{gk::Activation::Relu};
    p.finalize();
    gk::ConvParams q = p;
    q.src_channels_last = q.dst_channels_last = true;
    if (std::string(gk::fast::vmath::isa()) != "avx2") GTEST_SKIP() << "the GEMM path is for AVX2 only";
    ASSERT_TRUE(gk::fast::conv_as_gemm(q)) << k.cin << " -> " << k.cout;
    EXPECT_FALSE(gk::fast::conv_as_gemm(p)) << "NCHW activations stay on oneDNN's convolution";
    const Tensor x = rnd(p.input_shape(), 41), w = rnd(p.weight_shape(), 42), b = rnd({p.c_out}, 43);
    const Tensor z = rnd(p.output_shape(), 44);
    std::vector<float> want(static_cast<std::size_t>(z.num_elements()));
    gk::reference::conv2d(p, x.as<float>(), w.as<float>(), b.as<float>(), z.as<float>(), want.data());
    const Tensor x_nhwc = nhwc(x), z_nhwc = nhwc(z), want_nhwc = nhwc(T(p.output_shape(), want));
    for (bool owned : {true, false})
      for (int repeat = 0; repeat < 2; ++repeat) {
        std::vector<float> got(want.size());
        gk::fast::conv2d(q, x_nhwc.as<float>(), w.as<float>(), b.as<float>(), z_nhwc.as<float>(), got.data(),
                         owned ? std::shared_ptr<const void>(w.data) : nullptr);
        expect_close(T(p.output_shape(), got), want_nhwc, 1e-4, 1e-5,
                     "gemm conv " + std::to_string(k.cin) + " -> " + std::to_string(k.cout));
      }
  }
}

// The TF layout (NHWC input, HWIO filter) takes the same path, its weights read in place.
TEST(FastVsReference, ConvAsGemmTakesHwioWeights) {
  if (std::string(gk::fast::vmath::isa()) != "avx2") GTEST_SKIP() << "the GEMM path is for AVX2 only";
  const Tensor x = rnd({1, 9, 9, 144}, 51), w = rnd({3, 3, 144, 96}, 52), b = rnd({96}, 53);
  Attributes a = attrs({{"strides", Shape{1, 2, 2, 1}}, {"padding", std::string("SAME")}});
  gk::ConvParams p = gk::conv_params_tf(a, x.shape, w.shape);
  p.has_bias = true;
  p.act = gk::ActivationSpec{gk::Activation::Relu};
  ASSERT_TRUE(gk::fast::conv_as_gemm(p));
  std::vector<float> want(static_cast<std::size_t>(p.n * p.out_h * p.out_w * p.c_out)), got(want.size());
  gk::reference::conv2d(p, x.as<float>(), w.as<float>(), b.as<float>(), nullptr, want.data());
  gk::fast::conv2d(p, x.as<float>(), w.as<float>(), b.as<float>(), nullptr, got.data(), w.data);
  const Shape out{p.n, p.out_h, p.out_w, p.c_out};
  expect_close(T(out, got), T(out, want), 1e-4, 1e-5, "HWIO");
}

TEST(FastVsReference, ConvAsGemmOnlyWhereItPays) {
  gk::ConvParams p;
  p.c_in = 256;
  p.c_out = 256;
  p.h = p.w = 14;
  p.kh = p.kw = 3;
  p.pad_t = p.pad_l = p.pad_b = p.pad_r = 1;
  p.src_channels_last = p.dst_channels_last = true;
  p.finalize();
  EXPECT_EQ(gk::fast::conv_as_gemm(p), std::string(gk::fast::vmath::isa()) == "avx2");
  gk::ConvParams big = p, one = p, narrow = p, grouped = p;
  big.h = big.w = 28;  // a 28x28 output plane: oneDNN's direct kernel is at its best there
  big.finalize();
  one.kh = one.kw = 1;  // 1x1: already a GEMM inside oneDNN
  one.pad_t = one.pad_l = one.pad_b = one.pad_r = 0;
  one.finalize();
  narrow.c_out = 32;
  grouped.group = 2;
  for (const gk::ConvParams& q : {big, one, narrow, grouped}) EXPECT_FALSE(gk::fast::conv_as_gemm(q));
}

TEST(FastVsReference, ConvWeightCacheFollowsTheOwner) {
  // Two constant weight tensors of one shape: the cached reorder must not be reused
  // for the second, nor survive a changed buffer.
  const Tensor x = rnd({1, 8, 6, 6}, 1);
  gk::ConvParams p = gk::conv_params_onnx({}, x.shape, {8, 8, 3, 3});
  for (unsigned seed : {2u, 3u, 2u}) {
    const Tensor w = rnd({8, 8, 3, 3}, seed);
    std::vector<float> yf(static_cast<std::size_t>(8 * 4 * 4)), yr(yf.size());
    gk::fast::conv2d(p, x.as<float>(), w.as<float>(), nullptr, nullptr, yf.data(), w.data);
    gk::fast::conv2d(p, x.as<float>(), w.as<float>(), nullptr, nullptr, yf.data(), w.data);
    gk::reference::conv2d(p, x.as<float>(), w.as<float>(), nullptr, nullptr, yr.data());
    expect_close(T({1, 8, 4, 4}, yf), T({1, 8, 4, 4}, yr));
  }
}

TEST(FastVsReference, MatMulAndGemm) {
  same("MatMul", {rnd({7, 13}, 1), rnd({13, 5}, 2)});
  same("MatMul", {rnd({3, 4, 7, 13}, 3), rnd({13, 5}, 4)}, {}, "shared weights");
  same("MatMul", {rnd({4, 7, 13}, 5), rnd({4, 13, 5}, 6)}, {}, "batched");
  same("MatMul", {rnd({1, 7, 13}, 7), rnd({4, 13, 5}, 8)}, {}, "A broadcast");
  same("MatMul", {rnd({2, 1, 7, 13}, 9), rnd({1, 3, 13, 5}, 10)}, {}, "both broadcast");
  same("MatMul", {rnd({13}, 11), rnd({2, 13, 5}, 12)}, {}, "1-D A");
  same("MatMul", {rnd({2, 7, 13}, 13), rnd({13}, 14)}, {}, "1-D B");
  for (std::int64_t ta : {0, 1})
    for (std::int64_t tb : {0, 1}) {
      Attributes a = attrs({{"transA", ta}, {"transB", tb}, {"alpha", 0.5f}});
      const Shape as = ta ? Shape{3, 13, 7} : Shape{3, 7, 13};
      const Shape bs = tb ? Shape{5, 13} : Shape{13, 5};
      same("com.microsoft.FusedMatMul", {rnd(as, 15), rnd(bs, 16)}, a, "trans");
      const Shape as2 = ta ? Shape{13, 7} : Shape{7, 13};
      Attributes g = attrs({{"transA", ta}, {"transB", tb}});
      same("Gemm", {rnd(as2, 17), rnd(bs, 18), rnd({5}, 19)}, g, "bias row");
      g.set("alpha", 2.0f);
      g.set("beta", 0.5f);
      same("Gemm", {rnd(as2, 17), rnd(bs, 18), rnd({7, 1}, 20)}, g, "column C");
      same("Gemm", {rnd(as2, 17), rnd(bs, 18), rnd({7, 5}, 21)}, g, "full C");
      same("Gemm", {rnd(as2, 17), rnd(bs, 18)}, g, "no C");
      g.set("activation", std::string(tb ? "Relu" : "LeakyRelu"));
      g.set("activation_alpha", 0.1f);
      same("com.microsoft.FusedGemm", {rnd(as2, 17), rnd(bs, 18), rnd({7, 5}, 21)}, g, "fused gemm");
      same("com.microsoft.FusedGemm", {rnd(as2, 17), rnd(bs, 18), rnd({5}, 22)}, g, "fused gemm, bias row");
    }
}

// Weights fed by a constant take the cached path: copied once into the layout oneDNN
// prefers, rows a multiple of 1 KiB apart padded by a cache line. Widths 256 and 768 get
// padding, 200 does not; MatMul, and Gemm with B transposed (its rows are then K long).
TEST(FastVsReference, MatMulWithConstantWeights) {
  const gk::KernelFn* matmul = gk::registry(gk::KernelSet::Fast).find("MatMul");
  const gk::KernelFn* gemm = gk::registry(gk::KernelSet::Fast).find("Gemm");
  ASSERT_TRUE(matmul && gemm);
  for (std::int64_t width : {256, 768, 200}) {
    const Tensor a = rnd({2, 9, 512}, 31), b = rnd({512, width}, 32), bt = rnd({width, 512}, 33);
    const Attributes none, trans_b = attrs({{"transB", std::int64_t{1}}});
    const Tensor a2 = rnd({9, 512}, 34), c = rnd({width}, 35);
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second run reads the cached copy
      gk::KernelCall mm("mm", "MatMul", none);
      mm.inputs = {&a, &b};
      mm.input_is_const = {false, true};
      expect_close((*matmul)(mm).at(0), ref("MatMul", {a, b})[0], 1e-4, 1e-5, "MatMul " + std::to_string(width));
      gk::KernelCall gm("gemm", "Gemm", trans_b);
      gm.inputs = {&a2, &bt, &c};
      gm.input_is_const = {false, true, true};
      expect_close((*gemm)(gm).at(0), ref("Gemm", {a2, bt, c}, trans_b)[0], 1e-4, 1e-5,
                   "Gemm transB " + std::to_string(width));
    }
  }
}

TEST(FastVsReference, Pooling) {
  const Tensor x = rnd({2, 5, 13, 11}, 3);
  for (std::int64_t ceil : {0, 1})
    for (std::int64_t incl : {0, 1}) {
      Attributes a = attrs({{"kernel_shape", Shape{3, 3}}, {"strides", Shape{2, 2}},
                            {"pads", Shape{1, 0, 1, 1}}, {"ceil_mode", ceil}, {"count_include_pad", incl}});
      same("MaxPool", {x}, a);
      same("AveragePool", {x}, a);
    }
  same("MaxPool", {x}, attrs({{"kernel_shape", Shape{2, 2}}, {"dilations", Shape{2, 2}}}));
  same("GlobalAveragePool", {x});
  same("GlobalMaxPool", {x});
}

// MaxPool on channels-last activations (the executor's layout after a convolution) has a
// loop of its own: bit-identical to the reference on NCHW, whatever the window, stride,
// dilation, padding or ceil_mode, with channel counts that leave a vector tail, NaNs in
// the input and windows that lie wholly in the padding.

// Channels-last MaxPool, AveragePool (with and without count_include_pad) and the global
// pools run their own loop (fast/pool_nhwc.h): the max pools bit-identical to the reference
// on NCHW, the averages within float rounding of its double sums, with ceil_mode overhangs,
// dilations, asymmetric pads, windows wholly in the padding, channel counts off the vector
// width, and NaNs (which max pooling passes over).
TEST(FastVsReference, PoolsChannelsLastMatchTheReference) {
  struct Case {
    Shape x, kernel, strides, pads, dilations;
    std::int64_t ceil;
  };
  const Case cases[] = {
      {{1, 64, 17, 15}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0},
      {{2, 19, 11, 13}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1},
      {{1, 5, 9, 9}, {2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}, 0},
      {{1, 40, 6, 6}, {2, 2}, {3, 3}, {2, 2, 2, 2}, {1, 1}, 1},  // corner windows all padding
      {{1, 130, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0},  // densenet's transition: 3 channel blocks
  };
  auto check = [](const char* op, const Tensor& x, const Attributes& a, const std::string& what) {
    const Tensor want = ref(op, {x}, a)[0];
    const Tensor x_nhwc = nhwc(x);
    gk::KernelCall call("p", op, a);
    call.inputs = {&x_nhwc};
    call.layouts = {gk::Layout::ChannelsLast};
    call.prefer_channels_last = true;
    const Tensor got = (*gk::registry(gk::KernelSet::Fast).find(op))(call).at(0);
    const Tensor want_nhwc = want.shape[2] * want.shape[3] > 1 ? nhwc(want) : want;
    ASSERT_EQ(got.bytes().size(), want_nhwc.bytes().size()) << op << " " << what;
    if (std::string(op).find("Max") != std::string::npos)
      EXPECT_EQ(std::memcmp(got.bytes().data(), want_nhwc.bytes().data(), got.bytes().size()), 0) << op << " " << what;
    else  // a float sum against the reference's double one
      expect_close(got, want_nhwc, 1e-6, 1e-7, std::string(op) + " " + what);
  };
  for (const Case& k : cases) {
    Tensor x = rnd(k.x, 7);
    const std::string what = std::to_string(k.kernel[0]) + "x" + std::to_string(k.kernel[1]) + " on " +
                             std::to_string(k.x[1]) + " channels";
    const Attributes a = attrs({{"kernel_shape", k.kernel}, {"strides", k.strides}, {"pads", k.pads},
                                {"dilations", k.dilations}, {"ceil_mode", k.ceil}});
    for (std::int64_t include : {0, 1}) {
      Attributes avg = attrs({{"kernel_shape", k.kernel}, {"strides", k.strides}, {"pads", k.pads},
                              {"ceil_mode", k.ceil}, {"count_include_pad", include}});
      if (k.dilations != Shape{1, 1}) avg.set("dilations", k.dilations);  // AveragePool-19
      check("AveragePool", x, avg, what + (include ? " counting pads" : ""));
    }
    check("GlobalAveragePool", x, {}, what);
    float* xv = reinterpret_cast<float*>(x.mutable_bytes());
    xv[3] = std::numeric_limits<float>::quiet_NaN();
    xv[x.num_elements() / 2] = std::numeric_limits<float>::quiet_NaN();
    check("MaxPool", x, a, what);
    check("GlobalMaxPool", x, {}, what);
  }
}

TEST(FastVsReference, ElementwiseAndNorms) {
  const Tensor x = rnd({3, 40, 64}, 1);
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    same(op, {x, rnd({3, 40, 64}, 2, 0.5f, 1.5f)}, {}, "same shape");
    same(op, {x, rnd({64}, 3, 0.5f, 1.5f)}, {}, "row");
    same(op, {rnd({64}, 3, 0.5f, 1.5f), x}, {}, "row first");
    same(op, {x, rnd({3, 1, 64}, 4, 0.5f, 1.5f)}, {}, "middle broadcast");
    same(op, {x, T({}, {2.0f})}, {}, "scalar");
  }
  same("Pow", {rnd({3, 40, 64}, 5, 0.1f, 2.0f), T({}, {2.0f})});
  same("Pow", {rnd({3, 40, 64}, 5, 0.1f, 2.0f), T({}, {0.5f})});
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Sqrt",
                         "Erf", "com.microsoft.Gelu", "com.microsoft.QuickGelu", "com.microsoft.FastGelu"})
    same(op, {op == std::string("Sqrt") ? rnd({3, 40, 64}, 6, 0.0f, 4.0f) : x});
  same("Clip", {x, T({}, {-0.2f}), T({}, {0.3f})});
  same("BiasAdd", {rnd({2, 5, 5, 64}, 7), rnd({64}, 8)});
  same("BiasAdd", {rnd({2, 64, 5, 5}, 7), rnd({64}, 8)}, attrs({{"data_format", std::string("NCHW")}}));
  same("Softmax", {x});
  same("Softmax", {x}, attrs({{"axis", std::int64_t{1}}}));
  same("LayerNormalization", {x, rnd({64}, 9), rnd({64}, 10)});
  same("com.microsoft.SkipLayerNormalization", {x, rnd({3, 40, 64}, 11), rnd({64}, 12), rnd({64}, 13), rnd({64}, 14)});
  same("com.microsoft.SkipLayerNormalization", {x, rnd({3, 40, 64}, 11), rnd({64}, 12)});
  same("SimplifiedLayerNormalization", {x, rnd({64}, 9)});
  same("com.microsoft.FastGelu", {x, rnd({64}, 9)}, {}, "with bias");
  same("com.microsoft.SkipSimplifiedLayerNormalization", {x, rnd({3, 40, 64}, 11), rnd({64}, 12)});
  same("com.microsoft.SkipSimplifiedLayerNormalization", {x, rnd({3, 40, 64}, 11), rnd({64}, 12), rnd({64}, 13)});
  // Four outputs: the statistics and input_skip_bias_sum, which a pre-norm block's next residual reads.
  same("com.microsoft.SkipSimplifiedLayerNormalization", {x, rnd({3, 40, 64}, 11), rnd({64}, 12)}, {}, "4 outputs", 4);
  same("com.microsoft.SkipLayerNormalization", {x, rnd({3, 40, 64}, 11), rnd({64}, 12), rnd({64}, 13), rnd({64}, 14)}, {},
       "4 outputs", 4);
  same("BatchNormalization", {rnd({2, 6, 7, 7}, 15), rnd({6}, 16), rnd({6}, 17), rnd({6}, 18), rnd({6}, 19, 0.5f, 2.0f)});
}

TEST(FastVsReference, FusedEqualsUnfusedComposition) {
  // FusedConv2D_BiasAdd_ReLU(x, w, b) == ReLU(BiasAdd(Conv2D(x, w), b)) in both sets.
  const Tensor x = rnd({1, 9, 9, 16}, 1), w = rnd({3, 3, 16, 24}, 2), b = rnd({24}, 3);
  Attributes a = attrs({{"strides", Shape{1, 1}}, {"padding", std::string("SAME")}});
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
    auto conv = gk::run_op(set, "Conv2D", {x, w}, a)[0];
    auto bias = gk::run_op(set, "BiasAdd", {conv, b})[0];
    auto relu = gk::run_op(set, "ReLU", {bias})[0];
    Attributes fa = a;
    fa.set("activation", std::string("ReLU"));
    auto fused = gk::run_op(set, "FusedConv2D_BiasAdd_ReLU", {x, w, b}, fa)[0];
    expect_close(fused, relu, 1e-5, 1e-6, std::string(gk::kernel_set_name(set)));
  }
  // ONNX: FusedConv(x, w, b, z, Relu) == Relu(Add(Conv(x, w, b), z)).
  const Tensor xn = rnd({1, 16, 9, 9}, 4), wn = rnd({8, 16, 3, 3}, 5), bn = rnd({8}, 6);
  const Tensor z = rnd({1, 8, 9, 9}, 7);
  Attributes pads = attrs({{"pads", Shape{1, 1, 1, 1}}});
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
    auto conv = gk::run_op(set, "Conv", {xn, wn, bn}, pads)[0];
    auto relu = gk::run_op(set, "Relu", {gk::run_op(set, "Add", {conv, z})[0]})[0];
    Attributes fa = pads;
    fa.set("activation", std::string("Relu"));
    auto fused = gk::run_op(set, "com.microsoft.FusedConv", {xn, wn, bn, z}, fa)[0];
    expect_close(fused, relu, 1e-5, 1e-6, std::string(gk::kernel_set_name(set)));
  }
}

}  // namespace
