// The vectorized transcendental kernels (kernels/fast/vmath) against double-precision math,
// the fast elementwise ops built on them against the reference kernels, and broadcasting
// binary ops in the executor's channels-last mode.
#include <cmath>
#include <cstring>
#include <limits>

#include "../../kernels/fast/vmath.h"  // internal to the kernels library
#include "kernels/test_util.h"

namespace {

namespace vm = graphfuse::kernels::fast::vmath;
using graphfuse::Graph;
using graphfuse::OpType;

double exact(vm::Fn f, float xf, float alpha) {
  const double x = xf;
  switch (f) {
    case vm::Fn::Exp: return std::exp(x);
    case vm::Fn::Logistic: return 1.0 / (1.0 + std::exp(-x));
    case vm::Fn::Tanh: return std::tanh(x);
    case vm::Fn::Erf: return std::erf(x);
    case vm::Fn::Gelu: return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case vm::Fn::GeluTanh: {
      // In float, as the kernel rounds it; 0.5 (1 + tanh v) written as logistic(2v), which
      // keeps the left tail exact in double too.
      const float v = 0.7978845608f * (xf + 0.044715f * xf * xf * xf);
      return x / (1.0 + std::exp(-2.0 * v));
    }
    case vm::Fn::Swish: return x / (1.0 + std::exp(-static_cast<double>(alpha * xf)));
  }
  return 0;
}

struct Case {
  vm::Fn f;
  const char* name;
  float lo, hi;
  double rtol, atol;
};

TEST(VMath, WithinTolerancesOfDoubleMath) {
  const Case cases[] = {
      {vm::Fn::Exp, "exp", -87.0f, 88.5f, 4e-7, 0},
      {vm::Fn::Logistic, "logistic", -80.0f, 80.0f, 4e-7, 0},
      {vm::Fn::Tanh, "tanh", -12.0f, 12.0f, 4e-7, 0},
      {vm::Fn::Erf, "erf", -6.0f, 6.0f, 4e-7, 2e-7},
      {vm::Fn::Gelu, "gelu", -12.0f, 12.0f, 4e-7, 2e-7},
      {vm::Fn::GeluTanh, "gelu_tanh", -12.0f, 12.0f, 2e-6, 2e-7},
      {vm::Fn::Swish, "swish", -40.0f, 40.0f, 2e-6, 0},
  };
  for (const Case& c : cases) {
    std::vector<float> x;
    for (float v = c.lo; v <= c.hi; v += (c.hi - c.lo) / 200003.0f) x.push_back(v);
    for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -3e-5f}) x.push_back(v);
    std::vector<float> y(x.size());
    vm::apply(c.f, x.data(), y.data(), static_cast<std::int64_t>(x.size()), 1.702f);
    int bad = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double e = exact(c.f, x[i], 1.702f);
      if (std::fabs(y[i] - e) > c.atol + c.rtol * std::fabs(e) && bad++ < 5)
        ADD_FAILURE() << c.name << "(" << x[i] << ") = " << y[i] << ", exact " << e << " (" << vm::isa() << ")";
    }
    EXPECT_EQ(bad, 0) << c.name;
  }
}

TEST(VMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto one = [](vm::Fn f, float x) {
    float y;
    vm::apply(f, &x, &y, 1, 1.0f);
    return y;
  };
  for (vm::Fn f : {vm::Fn::Exp, vm::Fn::Logistic, vm::Fn::Tanh, vm::Fn::Erf, vm::Fn::Gelu, vm::Fn::GeluTanh,
                   vm::Fn::Swish})
    EXPECT_TRUE(std::isnan(one(f, nan))) << static_cast<int>(f);
  EXPECT_EQ(one(vm::Fn::Exp, inf), inf);
  EXPECT_EQ(one(vm::Fn::Exp, 89.0f), inf);
  EXPECT_EQ(one(vm::Fn::Exp, -inf), 0.0f);
  EXPECT_EQ(one(vm::Fn::Exp, 0.0f), 1.0f);
  EXPECT_EQ(one(vm::Fn::Logistic, inf), 1.0f);
  EXPECT_EQ(one(vm::Fn::Logistic, -inf), 0.0f);
  EXPECT_EQ(one(vm::Fn::Tanh, inf), 1.0f);
  EXPECT_EQ(one(vm::Fn::Tanh, -inf), -1.0f);
  EXPECT_EQ(one(vm::Fn::Erf, inf), 1.0f);
  EXPECT_EQ(one(vm::Fn::Erf, -inf), -1.0f);
  EXPECT_EQ(one(vm::Fn::Gelu, inf), inf);
  EXPECT_EQ(one(vm::Fn::Swish, inf), inf);
}

TEST(VMath, ResultsDoNotDependOnTheSplit) {
  const Tensor t = rnd({1001}, 5, -9.0f, 9.0f);
  const float* x = t.as<float>();
  for (vm::Fn f : {vm::Fn::Logistic, vm::Fn::Erf, vm::Fn::Gelu}) {
    std::vector<float> whole(1001), parts(1001);
    vm::apply(f, x, whole.data(), 1001);
    for (std::int64_t b = 0; b < 1001; b += 37) vm::apply(f, x + b, parts.data() + b, std::min<std::int64_t>(37, 1001 - b));
    EXPECT_EQ(0, std::memcmp(whole.data(), parts.data(), whole.size() * sizeof(float)));
  }
}

// Softmax rows of every length up to a few vectors (whole vectors plus each tail length),
// with masked keys (-inf) and one huge score, against double-precision softmax.
TEST(VMath, SoftmaxRowsOfEveryLengthMatchDoubleMath) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (std::int64_t n = 1; n <= 50; ++n) {
    const Tensor t = rnd({n}, static_cast<std::uint64_t>(n), -12.0f, 12.0f);
    std::vector<float> x(t.as<float>(), t.as<float>() + n);
    if (n > 3) x[2] = ninf;     // a masked key
    if (n > 7) x[n - 1] = 80.0f;  // exp would overflow without the max
    std::vector<float> y(static_cast<std::size_t>(n));
    vm::softmax_row(x.data(), y.data(), n);
    double mx = -INFINITY, sum = 0.0;
    for (float v : x) mx = std::max(mx, static_cast<double>(v));
    for (float v : x) sum += std::exp(v - mx);
    for (std::int64_t i = 0; i < n; ++i) {
      const double want = std::exp(x[static_cast<std::size_t>(i)] - mx) / sum;
      EXPECT_NEAR(y[static_cast<std::size_t>(i)], want, 1e-6 * want + 1e-12) << "n " << n << " i " << i;
    }
  }
  std::vector<float> masked(19, ninf), y(19);
  vm::softmax_row(masked.data(), y.data(), 19);
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[18])) << "a row with every key masked has no softmax";
}

TEST(FastElementwise, TranscendentalOpsMatchTheReference) {
  // 70,000 elements: several TBB chunks and a tail.
  const Tensor x = rnd({7, 10000}, 11, -8.0f, 8.0f);
  for (const char* op : {"Sigmoid", "Tanh", "Erf", "Exp", "com.microsoft.Gelu", "com.microsoft.FastGelu", "Gelu"}) {
    const auto r = ref(op, {x});
    const auto f = fast(op, {x});
    expect_close(f[0], r[0], 1e-5, 1e-6, op);
  }
  const Attributes alpha = attrs({{"alpha", 1.0f}});
  expect_close(fast("com.microsoft.QuickGelu", {x}, alpha)[0], ref("com.microsoft.QuickGelu", {x}, alpha)[0], 1e-5,
               1e-6, "QuickGelu alpha 1");
  expect_close(fast("com.microsoft.QuickGelu", {x})[0], ref("com.microsoft.QuickGelu", {x})[0], 1e-5, 1e-6,
               "QuickGelu");
  const Attributes tanh = attrs({{"approximate", std::string("tanh")}});
  expect_close(fast("Gelu", {x}, tanh)[0], ref("Gelu", {x}, tanh)[0], 1e-5, 1e-6, "Gelu tanh");
  // With a bias along the last axis, and one that is not (the reference's broadcast).
  for (const Shape& bs : {Shape{10000}, Shape{1, 10000}, Shape{7, 1}}) {
    const Tensor b = rnd(bs, 12);
    for (const char* op : {"com.microsoft.BiasGelu", "com.microsoft.FastGelu"})
      expect_close(fast(op, {x, b})[0], ref(op, {x, b})[0], 1e-5, 1e-6, op);
  }
}

TEST(FastElementwise, BroadcastingBinaryOpsMatchTheReference) {
  const Tensor a = rnd({2, 3, 5, 7}, 21);
  for (const Shape& bs : {Shape{1, 3, 1, 1}, Shape{3, 1, 1}, Shape{7}, Shape{5, 1}, Shape{2, 1, 5, 1}, Shape{1},
                          Shape{2, 3, 5, 7}, Shape{1, 1, 1, 7}, Shape{2, 1, 1, 1}})
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      const Tensor b = rnd(bs, 22, 0.5f, 1.5f);
      expect_close(fast(op, {a, b})[0], ref(op, {a, b})[0], 1e-6, 1e-7, op);
      expect_close(fast(op, {b, a})[0], ref(op, {b, a})[0], 1e-6, 1e-7, std::string(op) + " swapped");
    }
}

// Squeeze-and-excitation: a per-channel scale [1, C, 1, 1] times a channels-last activation,
// computed in NHWC without converting the activation (and a [C, 1, 1] bias likewise).
TEST(FastElementwise, PerChannelOperandsInChannelsLastMode) {
  Graph g;
  auto x = float_input(g, "x", {2, 4, 9, 11});
  auto cst = [&](const char* id, Shape s) { return g.add_node(id, OpType::intern("Const"), {}, attrs({{"shape", s}})); };
  auto c1 = g.add_node("c1", OpType::intern("Conv"), {{x, 0}, {cst("w1", {6, 4, 1, 1}), 0}});
  auto pool = g.add_node("pool", OpType::intern("GlobalAveragePool"), {{c1, 0}});
  auto se = g.add_node("se", OpType::intern("Conv"), {{pool, 0}, {cst("w2", {6, 6, 1, 1}), 0}});
  auto sig = g.add_node("sig", OpType::intern("Sigmoid"), {{se, 0}});
  auto mul = g.add_node("mul", OpType::intern("Mul"), {{c1, 0}, {sig, 0}});
  auto add = g.add_node("add", OpType::intern("Add"), {{cst("bias", {6, 1, 1}), 0}, {mul, 0}});
  auto c2 = g.add_node("c2", OpType::intern("Conv"), {{add, 0}, {cst("w3", {3, 6, 3, 3}), 0}});
  g.add_output({c2, 0});
  g.add_output({mul, 0});
  const auto r = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 3, {}});
  for (int threads : {1, 2}) {
    const auto f = gk::run_graph(g, {}, {gk::KernelSet::Fast, threads, 3, {}});
    for (std::size_t i = 0; i < r.size(); ++i) expect_close(f[i], r[i], 1e-4, 1e-5, "output " + std::to_string(i));
  }
}

}  // namespace

namespace {

// DenseNet's shapes in channels-last mode: BatchNormalization -> Relu -> Conv, Concat along
// channels of NHWC and NCHW inputs, an all-zero Pad before AveragePool, and the cases these
// kernels hand to the reference (Concat on another axis, a real Pad) after converting.
TEST(FastLayoutOps, DenseNetPiecesInChannelsLastMode) {
  Graph g;
  auto x = float_input(g, "x", {1, 3, 10, 12});
  auto cst = [&](const char* id, Shape s) { return g.add_node(id, OpType::intern("Const"), {}, attrs({{"shape", s}})); };
  auto ints = [&](const char* id, std::vector<std::int64_t> v) {
    return g.add_node(id, OpType::intern("Const"), {}, attrs({{"value", I({static_cast<std::int64_t>(v.size())}, v)}}));
  };
  auto c1 = g.add_node("c1", OpType::intern("Conv"), {{x, 0}, {cst("w1", {8, 3, 3, 3}), 0}},
                       attrs({{"pads", Shape{1, 1, 1, 1}}}));
  auto var = g.add_node("var", OpType::intern("Const"), {}, attrs({{"value", T({8}, {1, 2, 3, 4, 0.5f, 0.25f, 1, 1})}}));
  auto bn = g.add_node("bn", OpType::intern("BatchNormalization"),
                       {{c1, 0}, {cst("s", {8}), 0}, {cst("b", {8}), 0}, {cst("m", {8}), 0}, {var, 0}});
  auto relu = g.add_node("relu", OpType::intern("Relu"), {{bn, 0}});
  auto c2 = g.add_node("c2", OpType::intern("Conv"), {{relu, 0}, {cst("w2", {4, 8, 1, 1}), 0}});
  // x (NCHW input) first, then two NHWC convolution outputs.
  auto cat = g.add_node("cat", OpType::intern("Concat"), {{x, 0}, {c1, 0}, {c2, 0}}, attrs({{"axis", std::int64_t{-3}}}));
  auto pad0 = g.add_node("pad0", OpType::intern("Pad"), {{cat, 0}, {ints("p0", {0, 0, 0, 0, 0, 0, 0, 0}), 0}});
  auto pool = g.add_node("pool", OpType::intern("AveragePool"), {{pad0, 0}},
                         attrs({{"kernel_shape", Shape{2, 2}}, {"strides", Shape{2, 2}}}));
  auto pad1 = g.add_node("pad1", OpType::intern("Pad"), {{pool, 0}, {ints("p1", {0, 0, 1, 2, 0, 1, 0, 0}), 0}},
                         attrs({{"mode", std::string("reflect")}}));
  auto c3 = g.add_node("c3", OpType::intern("Conv"), {{pad1, 0}, {cst("w3", {5, 16, 1, 1}), 0}});
  auto cat0 = g.add_node("cat0", OpType::intern("Concat"), {{c3, 0}, {c3, 0}}, attrs({{"axis", std::int64_t{0}}}));
  g.add_output({cat0, 0});
  g.add_output({cat, 0});
  const auto r = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 4, {}});
  for (int threads : {1, 2}) {
    const auto f = gk::run_graph(g, {}, {gk::KernelSet::Fast, threads, 4, {}});
    for (std::size_t i = 0; i < r.size(); ++i) expect_close(f[i], r[i], 1e-4, 1e-5, "output " + std::to_string(i));
  }
}

}  // namespace
