// The fast QLinearConv (kernels/fast/qlinear_conv.cpp) against the reference loop: the same
// integers, bit for bit, on seeded random shapes (groups, depthwise, strides, dilations,
// padding, per-tensor and per-channel weights, uint8 and int8 activations, with and without
// an int32 bias).
#include <cstring>
#include <random>

#include "kernels/test_util.h"

namespace {

template <class T>
Tensor typed(DType dtype, Shape shape, const std::vector<T>& v) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  return t;
}

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
  for (int t = 0; t < 32; ++t) {
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
    const Tensor wz = per_channel ? typed(DType::Int8, {cout}, r.ints<std::int8_t>(cout, -3, 3))
                                  : typed(DType::Int8, {}, r.ints<std::int8_t>(1, -3, 3));
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

}  // namespace
