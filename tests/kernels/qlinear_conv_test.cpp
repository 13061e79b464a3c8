// The fast QLinearConv (kernels/fast/qlinear_conv.cpp) against the reference loop: the same
// integers, bit for bit, on seeded random shapes (groups, depthwise, strides, dilations,
// padding, per-tensor and per-channel weights, uint8 and int8 activations, with and without
// an int32 bias).
#include <cstring>
#include <random>

#include "kernels/test_util.h"

namespace {

struct Rng {
  std::mt19937 g{4242};
  std::int64_t pick(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(g); }
  float real(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(g); }
  template <class T>
  std::vector<T> ints(std::int64_t n, std::int64_t lo, std::int64_t hi) {
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& e : v) e = static_cast<T>(pick(lo, hi));
    return v;
  }
};

TEST(FastVsReference, QLinearConvIsBitExact) {
  Rng r;
  for (int t = 0; t < 48; ++t) {
    const ConvCase cv = random_conv_case(t, [&](std::int64_t lo, std::int64_t hi) { return r.pick(lo, hi); });
    const std::int64_t cout = cv.cout, k = cv.k;
    Attributes a = attrs({{"strides", Shape{cv.stride, cv.stride}}, {"dilations", Shape{cv.dilation, cv.dilation}},
                          {"group", cv.group}});
    const std::int64_t pad = k / 2;
    a.set("pads", Shape{r.pick(0, pad), r.pick(0, pad), r.pick(0, pad), r.pick(0, pad)});
    const bool signed_x = t % 5 == 4;
    const DType xt = signed_x ? DType::Int8 : DType::UInt8;
    const std::int64_t xlo = signed_x ? -128 : 0, xhi = signed_x ? 127 : 255;
    const Shape xshape{cv.n, cv.cin, cv.h, cv.w};
    const std::int64_t xn = cv.n * cv.cin * cv.h * cv.w, wn = cout * cv.cin_g * k * k;
    const Tensor x = signed_x ? typed(xt, xshape, r.ints<std::int8_t>(xn, xlo, xhi))
                              : typed(xt, xshape, r.ints<std::uint8_t>(xn, xlo, xhi));
    const Tensor xs = Tensor::from_floats({}, {r.real(0.005f, 0.05f)});
    const Tensor xz = signed_x ? typed(xt, {}, r.ints<std::int8_t>(1, -10, 10)) : typed(xt, {}, r.ints<std::uint8_t>(1, 0, 255));
    const Tensor wt = typed(DType::Int8, {cout, cv.cin_g, k, k}, r.ints<std::int8_t>(wn, -127, 127));
    const bool per_channel = t % 2 == 0;
    const std::int64_t ws_n = per_channel ? cout : 1;
    std::vector<float> wsv(static_cast<std::size_t>(ws_n));
    for (float& v : wsv) v = r.real(0.001f, 0.02f);
    const Tensor ws = per_channel ? Tensor::from_floats({cout}, wsv) : Tensor::from_floats({}, wsv);
    // Weight zero points of 0 (what quantizers write) take oneDNN's int8 primitive where the
    // machine has one; nonzero ones take the portable loops.
    const std::int64_t wz_span = t % 3 == 2 ? 3 : 0;
    const Tensor wz = per_channel ? typed(DType::Int8, {cout}, r.ints<std::int8_t>(cout, -wz_span, wz_span))
                                  : typed(DType::Int8, {}, r.ints<std::int8_t>(1, -wz_span, wz_span));
    const Tensor ys = Tensor::from_floats({}, {r.real(0.01f, 0.2f)});
    const Tensor yz = signed_x ? typed(DType::Int8, {}, r.ints<std::int8_t>(1, -20, 20))
                               : typed(DType::UInt8, {}, r.ints<std::uint8_t>(1, 0, 255));
    std::vector<Tensor> in{x, xs, xz, wt, ws, wz, ys, yz};
    if (t % 3 != 0) in.push_back(typed(DType::Int32, {cout}, r.ints<std::int32_t>(cout, -20000, 20000)));
    const auto f = fast("QLinearConv", in, a), e = ref("QLinearConv", in, a);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].shape, e[0].shape) << "case " << t;
    EXPECT_TRUE(f[0] == e[0]) << "case " << t << ": the fast QLinearConv's integers differ from the reference's";
  }
}

// Layers of the sizes real models have, where oneDNN's blocked jit kernels run (the random
// cases above are a few channels wide): a 3 x 3 and a 1 x 1 convolution, a strided
// depthwise one and a 3-channel stem, extreme inputs included (all 255 against weights of
// -128 is the largest product).
TEST(FastVsReference, QLinearConvOnModelSizedLayersIsBitExact) {
  Rng r;
  struct Layer {
    std::int64_t cin, cout, group, k, stride, hw;
  };
  const Layer layers[] = {{64, 64, 1, 3, 1, 28}, {256, 512, 1, 1, 2, 14}, {96, 96, 96, 3, 2, 28}, {3, 32, 1, 3, 2, 56}};
  for (const Layer& l : layers) {
    for (int extreme = 0; extreme < 2; ++extreme) {
      const std::int64_t xn = l.cin * l.hw * l.hw, wn = l.cout * (l.cin / l.group) * l.k * l.k;
      const Tensor x = typed(DType::UInt8, {1, l.cin, l.hw, l.hw},
                             extreme ? std::vector<std::uint8_t>(static_cast<std::size_t>(xn), 255)
                                     : r.ints<std::uint8_t>(xn, 0, 255));
      const Tensor w = typed(DType::Int8, {l.cout, l.cin / l.group, l.k, l.k},
                             extreme ? std::vector<std::int8_t>(static_cast<std::size_t>(wn), -128)
                                     : r.ints<std::int8_t>(wn, -127, 127));
      std::vector<float> wsv(static_cast<std::size_t>(l.cout));
      for (float& v : wsv) v = r.real(0.0001f, 0.002f);
      const std::vector<Tensor> in{x,
                                   Tensor::from_floats({}, {0.02f}),
                                   typed(DType::UInt8, {}, std::vector<std::uint8_t>{extreme ? std::uint8_t{0} : std::uint8_t{131}}),
                                   w,
                                   Tensor::from_floats({l.cout}, wsv),
                                   typed(DType::Int8, {l.cout}, std::vector<std::int8_t>(static_cast<std::size_t>(l.cout), 0)),
                                   Tensor::from_floats({}, {r.real(0.05f, 0.5f)}),
                                   typed(DType::UInt8, {}, std::vector<std::uint8_t>{120}),
                                   typed(DType::Int32, {l.cout}, r.ints<std::int32_t>(l.cout, -5000, 5000))};
      const std::int64_t pad = l.k / 2;
      const Attributes a = attrs({{"strides", Shape{l.stride, l.stride}}, {"pads", Shape{pad, pad, pad, pad}},
                                  {"group", l.group}});
      const auto f = fast("QLinearConv", in, a), e = ref("QLinearConv", in, a);
      EXPECT_TRUE(f[0] == e[0]) << "layer " << l.cin << "->" << l.cout << " g" << l.group << " k" << l.k
                                << (extreme ? " (extreme values)" : "");
    }
  }
}

}  // namespace
