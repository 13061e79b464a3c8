// The executor: seeded inputs and constants, fused vs unfused graphs, errors, timing.
#include <algorithm>
#include <random>

#include "kernels/test_util.h"

namespace {

using graphfuse::Graph;
using graphfuse::OpType;
using graphfuse::ValueRef;

// The seed example: x -> Conv2D(w) -> BiasAdd(b) -> ReLU, constants without data.
Graph tf_graph(bool fused) {
  Graph g;
  auto x = g.add_input("x");
  Attributes ws = attrs({{"shape", Shape{3, 3, 3, 8}}});
  auto w = g.add_node("w", OpType::intern("Const"), {}, ws);
  auto b = g.add_node("b", OpType::intern("Const"), {}, attrs({{"shape", Shape{8}}}));
  Attributes ca = attrs({{"strides", Shape{1, 1}}, {"padding", std::string("SAME")}});
  if (fused) {
    ca.set("activation", std::string("ReLU"));
    auto f = g.add_node("relu", OpType::intern("FusedConv2D_BiasAdd_ReLU"), {{x, 0}, {w, 0}, {b, 0}}, ca);
    g.add_output({f, 0});
  } else {
    auto c = g.add_node("conv", OpType::intern("Conv2D"), {{x, 0}, {w, 0}}, ca);
    auto ba = g.add_node("bias", OpType::intern("BiasAdd"), {{c, 0}, {b, 0}});
    auto r = g.add_node("relu", OpType::intern("ReLU"), {{ba, 0}});
    g.add_output({r, 0});
  }
  return g;
}

TEST(Executor, FusedGraphMatchesUnfusedInBothKernelSets) {
  const Graph unfused = tf_graph(false), fused = tf_graph(true);
  EXPECT_EQ(gk::input_shapes(unfused), (std::vector<Shape>{{1, 32, 32, 3}}));  // from the filter
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast})
    for (int threads : {1, 2}) {
      gk::ExecOptions o{set, threads, 7, {}};
      auto a = gk::run_graph(unfused, {}, o);
      auto b = gk::run_graph(fused, {}, o);
      ASSERT_EQ(a.size(), 1u);
      EXPECT_EQ(a[0].shape, (Shape{1, 32, 32, 8}));
      auto d = gk::compare_outputs(b, a, 1e-5, 1e-6, {"relu"});
      EXPECT_TRUE(d[0].pass) << d[0].max_abs;
    }
  // Both kernel sets agree on the same seeded data.
  auto r = gk::run_graph(unfused, {}, {gk::KernelSet::Reference, 1, 7, {}});
  auto f = gk::run_graph(fused, {}, {gk::KernelSet::Fast, 2, 7, {}});
  expect_close(f[0], r[0]);
}

// An NCHW graph mixing layout-aware kernels (Conv, Relu, Add, MaxPool) with ones that
// need NCHW (Concat, Transpose): channels-last mode must convert exactly where needed.
TEST(Executor, ChannelsLastModeMatchesPlain) {
  Graph g;
  auto x = float_input(g, "x", {1, 3, 12, 10});
  auto cst = [&](const char* id, Shape s) {
    return g.add_node(id, OpType::intern("Const"), {}, attrs({{"shape", s}}));
  };
  Attributes pad = attrs({{"pads", Shape{1, 1, 1, 1}}});
  auto c1 = g.add_node("c1", OpType::intern("Conv"), {{x, 0}, {cst("w1", {8, 3, 3, 3}), 0}, {cst("b1", {8}), 0}}, pad);
  auto r1 = g.add_node("r1", OpType::intern("Relu"), {{c1, 0}});
  auto c2 = g.add_node("c2", OpType::intern("Conv"), {{r1, 0}, {cst("w2", {8, 8, 3, 3}), 0}}, pad);
  auto add = g.add_node("add", OpType::intern("Add"), {{c2, 0}, {r1, 0}});
  auto clip = g.add_node("clip", OpType::intern("Clip"), {{add, 0}, {g.add_node("lo", OpType::intern("Const"), {}, attrs({{"value", T({}, {0.0f})}})), 0}});
  auto cat = g.add_node("cat", OpType::intern("Concat"), {{clip, 0}, {r1, 0}}, attrs({{"axis", std::int64_t{1}}}));
  auto mp = g.add_node("mp", OpType::intern("MaxPool"), {{cat, 0}}, attrs({{"kernel_shape", Shape{2, 2}}, {"strides", Shape{1, 1}}}));
  // count_include_pad over a ceil_mode overhang: the fast set's reference fallback, fed NHWC.
  auto pool = g.add_node("pool", OpType::intern("AveragePool"), {{mp, 0}},
                         attrs({{"kernel_shape", Shape{3, 3}}, {"strides", Shape{2, 2}}, {"pads", Shape{1, 1, 0, 0}},
                                {"ceil_mode", std::int64_t{1}}, {"count_include_pad", std::int64_t{1}}}));
  auto fc = g.add_node("fc", OpType::intern("com.microsoft.FusedConv"),
                       {{pool, 0}, {cst("w3", {4, 16, 1, 1}), 0}, {cst("b3", {4}), 0},
                        {g.add_node("z", OpType::intern("Conv"), {{pool, 0}, {cst("w4", {4, 16, 1, 1}), 0}}), 0}},
                       attrs({{"activation", std::string("Relu")}}));
  auto tr = g.add_node("tr", OpType::intern("Transpose"), {{fc, 0}}, attrs({{"perm", Shape{0, 2, 3, 1}}}));
  g.add_output({tr, 0});
  g.add_output({add, 0});
  auto r = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 3, {}});
  gk::ExecOptions plain{gk::KernelSet::Fast, 2, 3, {}};
  plain.channels_last = false;
  auto p = gk::run_graph(g, {}, plain);
  auto c = gk::run_graph(g, {}, {gk::KernelSet::Fast, 2, 3, {}});
  for (std::size_t i = 0; i < r.size(); ++i) {
    expect_close(p[i], r[i], 1e-4, 1e-5, "plain");
    expect_close(c[i], r[i], 1e-4, 1e-5, "channels-last");
  }
}

// A quantized network in the executor's channels-last mode: uint8 activations stay NHWC from
// one QLinearConv to the next and through QLinearAdd (same shapes), QLinearSigmoid and
// QLinearMul by a per-channel squeeze-and-excitation scale; QLinearGlobalAveragePool, MaxPool
// and a QLinearConv with uint8 weights (the portable path) need NCHW. Every output must be
// byte-identical to the plain mode's and to the reference kernels'.
TEST(Executor, QuantizedChannelsLastModeMatchesPlainAndReference) {
  std::mt19937 rng(21);
  auto ints = [&](DType dtype, Shape shape, int lo, int hi) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    std::string b(static_cast<std::size_t>(n), '\0');
    for (char& c : b) c = static_cast<char>(std::uniform_int_distribution<int>(lo, hi)(rng));
    Tensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data = std::make_shared<const std::string>(std::move(b));
    return t;
  };
  Graph g;
  auto x = float_input(g, "x", {1, 3, 12, 10});
  int ids = 0;
  auto cst = [&](const Tensor& v) {
    return ValueRef{g.add_node("k" + std::to_string(ids++), OpType::intern("Const"), {}, attrs({{"value", v}})), 0};
  };
  auto f = [&](float v) { return cst(T({}, {v})); };
  auto u8 = [&](int v) { return cst(typed(DType::UInt8, {}, std::vector<std::uint8_t>{static_cast<std::uint8_t>(v)})); };
  auto node = [&](const char* id, const char* op, std::vector<ValueRef> in, Attributes a = {}) {
    return ValueRef{g.add_node(id, OpType::intern(op), in, a), 0};
  };
  Attributes pad1 = attrs({{"pads", Shape{1, 1, 1, 1}}});
  // QLinearConv with int8 weights (zero point 0), per-channel scales, an int32 bias.
  auto qconv = [&](const char* id, ValueRef in, std::int64_t cin, std::int64_t cout, std::int64_t group, float ys) {
    const Shape w{cout, cin / group, 3, 3};
    std::vector<float> ws(static_cast<std::size_t>(cout));
    for (float& v : ws) v = std::uniform_real_distribution<float>(0.002f, 0.01f)(rng);
    Attributes a = pad1;
    a.set("group", group);
    return node(id, "QLinearConv",
                {in, f(0.05f), u8(10), cst(ints(DType::Int8, w, -127, 127)), cst(T({cout}, ws)),
                 cst(typed(DType::Int8, {cout}, std::vector<std::int8_t>(static_cast<std::size_t>(cout), 0))), f(ys),
                 u8(10), cst(typed(DType::Int32, {cout}, std::vector<std::int32_t>(static_cast<std::size_t>(cout), 300)))},
                a);
  };
  auto q = node("q", "QuantizeLinear", {{x, 0}, f(0.05f), u8(10)});
  auto c1 = qconv("c1", q, 3, 16, 1, 0.05f);
  auto c2 = qconv("c2", c1, 16, 16, 1, 0.05f);
  auto add = node("add", "com.microsoft.QLinearAdd", {c2, f(0.05f), u8(10), c1, f(0.05f), u8(10), f(0.05f), u8(10)});
  auto sig = node("sig", "com.microsoft.QLinearSigmoid", {add, f(0.05f), u8(10), f(1.0f / 255), u8(0)});
  auto gap = node("gap", "com.microsoft.QLinearGlobalAveragePool", {sig, f(1.0f / 255), u8(0), f(1.0f / 255), u8(0)});
  auto se = node("se", "com.microsoft.QLinearMul", {add, f(0.05f), u8(10), gap, f(1.0f / 255), u8(0), f(0.05f), u8(10)});
  auto dw = qconv("dw", se, 16, 16, 16, 0.05f);
  auto mp = node("mp", "MaxPool", {dw}, attrs({{"kernel_shape", Shape{2, 2}}, {"strides", Shape{2, 2}}}));
  // uint8 weights with zero point 128: not oneDNN's, the portable loops, fed NHWC.
  auto portable = node("portable", "QLinearConv",
                       {se, f(0.05f), u8(10), cst(ints(DType::UInt8, {8, 16, 3, 3}, 0, 255)), f(0.004f), u8(128),
                        f(0.1f), u8(20)},
                       pad1);
  g.add_output({g.add_node("out1", OpType::intern("DequantizeLinear"), {mp, f(0.05f), u8(10)}), 0});
  g.add_output(portable);
  g.add_output(sig);
  auto r = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 5, {}});
  gk::ExecOptions plain{gk::KernelSet::Fast, 2, 5, {}};
  plain.channels_last = false;
  auto p = gk::run_graph(g, {}, plain);
  auto c = gk::run_graph(g, {}, {gk::KernelSet::Fast, 2, 5, {}});
  ASSERT_EQ(r.size(), 3u);
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_TRUE(p[i] == r[i]) << "output " << i << ": plain mode differs from the reference kernels";
    EXPECT_TRUE(c[i] == r[i]) << "output " << i << ": channels-last mode differs from the reference kernels";
  }
  // Not saturated to one value: the comparison says something.
  const auto* b = reinterpret_cast<const std::uint8_t*>(r[1].bytes().data());
  EXPECT_NE(*std::min_element(b, b + r[1].num_elements()), *std::max_element(b, b + r[1].num_elements()));
}

// DenseNet's BatchNormalization -> Relu: in the fast set the Relu runs inside the norm
// (kernels/executor/epilogue_fusion.h), and takes no time of its own, in both layouts. A norm
// that something else reads too, and one that is a graph output, keep their Relu a kernel
// call. Every output equals the reference kernels' within float rounding.
TEST(Executor, BatchNormReluRunsInOnePassWhereTheReluIsTheOnlyReader) {
  Graph g;
  auto x = float_input(g, "x", {2, 8, 6, 5});
  auto cst = [&](const std::string& id, Tensor t) {
    return g.add_node(id, OpType::intern("Const"), {}, attrs({{"value", t}}));
  };
  auto bn = [&](const std::string& id, graphfuse::NodeId in, unsigned seed) {
    return g.add_node(id, OpType::intern("BatchNormalization"),
                      {{in, 0}, {cst(id + "s", rnd({8}, seed, 0.5f, 1.5f)), 0}, {cst(id + "b", rnd({8}, seed + 1)), 0},
                       {cst(id + "m", rnd({8}, seed + 2)), 0}, {cst(id + "v", rnd({8}, seed + 3, 0.5f, 2.0f)), 0}});
  };
  auto n1 = bn("n1", x, 10);
  auto r1 = g.add_node("r1", OpType::intern("Relu"), {{n1, 0}});                           // fused
  auto conv = g.add_node("conv", OpType::intern("Conv"), {{r1, 0}, {cst("w", rnd({8, 8, 1, 1}, 11)), 0}});
  auto n2 = bn("n2", conv, 20);
  auto r2 = g.add_node("r2", OpType::intern("Relu"), {{n2, 0}});                           // n2 is read twice
  auto add = g.add_node("add", OpType::intern("Add"), {{r2, 0}, {n2, 0}});
  auto n3 = bn("n3", add, 30);
  auto r3 = g.add_node("r3", OpType::intern("Relu"), {{n3, 0}});                           // n3 is an output
  g.add_output({r3, 0});
  g.add_output({n3, 0});
  const auto r = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 4, {}});
  for (bool channels_last : {false, true}) {
    gk::ExecOptions o{gk::KernelSet::Fast, 1, 4, {}};
    o.channels_last = channels_last;
    gk::RunProfile prof;
    const auto f = gk::run_graph(g, {}, o, &prof);
    for (std::size_t i = 0; i < r.size(); ++i) expect_close(f[i], r[i], 1e-5, 1e-6, channels_last ? "NHWC" : "NCHW");
    std::vector<std::string> relus_called;
    for (const auto& t : prof.nodes)
      if (t.op == "Relu" && t.ms > 0.0) relus_called.push_back(g.node(t.node).id);
    EXPECT_EQ(relus_called, (std::vector<std::string>{"r2", "r3"}));
  }
  // Not all clamped: the Relu inside the norm did something to compare.
  const auto v = values(r[0]);
  EXPECT_GT(std::count(v.begin(), v.end(), 0.0f), 0);
  EXPECT_GT(std::count_if(v.begin(), v.end(), [](float e) { return e > 0.0f; }), 0);
}

// A constant node holding t.
graphfuse::NodeId add_const(Graph& g, const std::string& id, Tensor t) {
  return g.add_node(id, OpType::intern("Const"), {}, attrs({{"value", t}}));
}

// One fast run of g (expected: the reference kernels' output 0): the ids of the nodes whose
// kernel ran, among those whose op is in `ops`, in order.
std::vector<std::string> kernel_calls(const Graph& g, const gk::ExecOptions& o, const std::vector<std::string>& ops,
                                      const Tensor& expected, double rtol) {
  std::vector<std::string> called;
  gk::Executor ex(g, o);
  ex.set_node_observer([&](const graphfuse::Node& n, const gk::KernelCall&, const std::vector<Tensor>&) {
    if (std::find(ops.begin(), ops.end(), std::string(n.op.name())) != ops.end()) called.push_back(n.id);
  });
  const auto f = ex.run({});
  expect_close(f[0], expected, rtol, rtol / 10, o.channels_last ? "NHWC" : "NCHW");
  return called;
}

// Conv -> Relu / LeakyRelu / HardSigmoid in a graph no rule fused: the fast set runs each
// activation as the convolution's post-op (no call of its own, 0 ms), in both layouts, with
// the reference kernels' results. Not fused: a Sigmoid (its standalone kernel is faster than
// oneDNN's post-op), an activation after a FusedConv that applies one already, one after a
// convolution something else reads too, and ExecOptions::fuse_epilogues = false.
TEST(Executor, ConvolutionsApplyTheirOnlyReadersPiecewiseLinearActivation) {
  Graph g;
  auto x = float_input(g, "x", {1, 6, 9, 7});
  auto cst = [&](const std::string& id, Tensor t) { return add_const(g, id, std::move(t)); };
  unsigned seed = 40;
  auto conv = [&](const std::string& id, graphfuse::NodeId in, const char* op = "Conv", Attributes a = {}) {
    a.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    return g.add_node(id, OpType::intern(op),
                      {{in, 0}, {cst(id + "w", rnd({6, 6, 3, 3}, seed++, -0.5f, 0.5f)), 0}, {cst(id + "b", rnd({6}, seed++)), 0}},
                      a);
  };
  auto c1 = conv("c1", x);
  auto relu = g.add_node("relu", OpType::intern("Relu"), {{c1, 0}});  // fused
  auto c2 = conv("c2", relu);
  auto leaky = g.add_node("leaky", OpType::intern("LeakyRelu"), {{c2, 0}}, attrs({{"alpha", 0.3f}}));  // fused
  auto c3 = conv("c3", leaky);
  auto hsig = g.add_node("hsig", OpType::intern("HardSigmoid"), {{c3, 0}}, attrs({{"alpha", 0.4f}, {"beta", 0.45f}}));  // fused
  auto c4 = conv("c4", hsig);
  auto sig = g.add_node("sig", OpType::intern("Sigmoid"), {{c4, 0}});  // transcendental: its own kernel
  auto c5 = conv("c5", sig, "com.microsoft.FusedConv", attrs({{"activation", std::string("Relu")}}));
  auto relu5 = g.add_node("relu5", OpType::intern("Relu"), {{c5, 0}});  // c5 has an activation already
  auto c6 = conv("c6", relu5);
  auto relu6 = g.add_node("relu6", OpType::intern("Relu"), {{c6, 0}});  // c6 is read twice
  auto add = g.add_node("add", OpType::intern("Add"), {{relu6, 0}, {c6, 0}});
  g.add_output({add, 0});
  const auto r = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 4, {}});
  auto own_calls = [&](const gk::ExecOptions& o) {
    return kernel_calls(g, o, {"Relu", "LeakyRelu", "HardSigmoid", "Sigmoid"}, r[0], 1e-4);
  };
  for (bool channels_last : {false, true}) {
    gk::ExecOptions o{gk::KernelSet::Fast, 1, 4, {}};
    o.channels_last = channels_last;
    EXPECT_EQ(own_calls(o), (std::vector<std::string>{"sig", "relu5", "relu6"}));
    o.fuse_epilogues = false;
    EXPECT_EQ(own_calls(o), (std::vector<std::string>{"relu", "leaky", "hsig", "sig", "relu5", "relu6"}));
  }
  // The activations changed something: negatives were clipped and scaled on the way.
  const auto v = values(r[0]);
  EXPECT_GT(std::count_if(v.begin(), v.end(), [](float e) { return e > 0.0f; }), 0);
}

// DenseNet's Concat -> BatchNormalization -> Relu: the fast set writes the concatenation
// normalized (and clamped) in one pass; the norm and the Relu run no kernel of their own,
// in both layouts, and the result is the reference kernels'. A norm whose Concat something
// else reads too keeps its own call (its Relu still runs inside it), and so does a norm after
// an Add (not a Concat). Concat -> norm without a Relu fuses too.
TEST(Executor, ConcatWritesTheNormalizationThatAloneReadsIt) {
  Graph g;
  auto x = float_input(g, "x", {1, 4, 7, 6});
  auto cst = [&](const std::string& id, Tensor t) { return add_const(g, id, std::move(t)); };
  unsigned seed = 60;
  auto conv = [&](const std::string& id, graphfuse::NodeId in, std::int64_t cin, std::int64_t cout) {
    return g.add_node(id, OpType::intern("Conv"),
                      {{in, 0}, {cst(id + "w", rnd({cout, cin, 1, 1}, seed++)), 0}, {cst(id + "b", rnd({cout}, seed++)), 0}});
  };
  auto bn = [&](const std::string& id, graphfuse::NodeId in, std::int64_t ch) {
    return g.add_node(id, OpType::intern("BatchNormalization"),
                      {{in, 0}, {cst(id + "s", rnd({ch}, seed++, 0.5f, 1.5f)), 0}, {cst(id + "b", rnd({ch}, seed++)), 0},
                       {cst(id + "m", rnd({ch}, seed++)), 0}, {cst(id + "v", rnd({ch}, seed++, 0.5f, 2.0f)), 0}},
                      attrs({{"epsilon", 1e-3f}}));
  };
  auto concat = [&](const std::string& id, std::vector<graphfuse::NodeId> ins) {
    std::vector<ValueRef> refs;
    for (auto n : ins) refs.push_back({n, 0});
    return g.add_node(id, OpType::intern("Concat"), refs, attrs({{"axis", std::int64_t{1}}}));
  };
  auto a = conv("a", x, 4, 3), b = conv("b", x, 4, 5);
  auto cat1 = concat("cat1", {a, b});                                                // fused with n1 and r1
  auto n1 = bn("n1", cat1, 8);
  auto r1 = g.add_node("r1", OpType::intern("Relu"), {{n1, 0}});
  auto c = conv("c", r1, 8, 6);
  auto cat2 = concat("cat2", {a, b, c});                                             // also read by add
  auto n2 = bn("n2", cat2, 14);
  auto r2 = g.add_node("r2", OpType::intern("Relu"), {{n2, 0}});                     // inside n2
  auto add = g.add_node("add", OpType::intern("Add"), {{cat2, 0}, {r2, 0}});
  auto n3 = bn("n3", add, 14);                                                       // after an Add
  auto cat3 = concat("cat3", {n3, c});                                               // fused with n4, no Relu
  auto n4 = bn("n4", cat3, 20);
  g.add_output({n4, 0});
  const auto r = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 4, {}});
  auto own_calls = [&](const gk::ExecOptions& o) { return kernel_calls(g, o, {"BatchNormalization", "Relu"}, r[0], 1e-5); };
  for (bool channels_last : {false, true}) {
    gk::ExecOptions o{gk::KernelSet::Fast, 1, 4, {}};
    o.channels_last = channels_last;
    EXPECT_EQ(own_calls(o), (std::vector<std::string>{"n2", "n3"}));
    o.fuse_epilogues = false;
    EXPECT_EQ(own_calls(o), (std::vector<std::string>{"n1", "r1", "n2", "r2", "n3", "n4"}));
  }
}

TEST(Executor, VerifyRewriteComparesOnSharedInputs) {
  const Graph unfused = tf_graph(false), fused = tf_graph(true);
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
    auto d = gk::verify_rewrite(unfused, fused, {set, 1, 11, {}});
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].name, "relu");
    EXPECT_TRUE(d[0].pass) << d[0].max_rel;
  }
  // A wrong rewrite (no ReLU) fails.
  Graph wrong = tf_graph(true);
  wrong.attrs(*wrong.find("relu")).set("activation", std::string("None"));
  EXPECT_FALSE(gk::verify_rewrite(unfused, wrong, {})[0].pass);
}

TEST(Executor, SeedsAreDeterministicAndDistinct) {
  const Graph g = tf_graph(false);
  auto a = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 1, {}});
  auto b = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 1, {}});
  auto c = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 2, {}});
  EXPECT_EQ(*a[0].data, *b[0].data);
  EXPECT_NE(*a[0].data, *c[0].data);
  auto in1 = gk::make_random_inputs(g, 5), in2 = gk::make_random_inputs(g, 5);
  EXPECT_EQ(*in1[0].data, *in2[0].data);
  for (float v : values(in1[0])) ASSERT_TRUE(v >= -1.0f && v < 1.0f);
}

TEST(Executor, GivenInputsTypedInputsAndMultipleOutputs) {
  Graph g;
  auto x = float_input(g, "x", {-1, 4});  // a symbolic batch runs at 1
  auto two = g.add_node("two", OpType::intern("Const"), {}, attrs({{"value", T({}, {2.0f})}}));
  auto m = g.add_node("m", OpType::intern("Mul"), {{x, 0}, {two, 0}});
  auto r = g.add_node("r", OpType::intern("Relu"), {{m, 0}});
  g.add_output({r, 0});
  g.add_output({m, 0});
  EXPECT_EQ(gk::input_shapes(g), (std::vector<Shape>{{1, 4}}));
  auto out = gk::run_graph(g, {T({1, 4}, {-1, 0, 1, 2})}, {});
  ASSERT_EQ(out.size(), 2u);
  expect_values(out[0], {1, 4}, {0, 0, 2, 4});
  expect_values(out[1], {1, 4}, {-2, 0, 2, 4});
  EXPECT_THROW(gk::run_graph(g, {T({4}, {1, 2, 3, 4}), T({4}, {1, 2, 3, 4})}, {}), graphfuse::Error);
}

TEST(Executor, ErrorsNameTheNodeAndOp) {
  Graph g;
  auto x = g.add_input("x");
  auto u = g.add_node("mystery", OpType::intern("FrobnicateOp"), {{x, 0}});
  g.add_output({u, 0});
  try {
    gk::run_graph(g, {}, {});
    FAIL();
  } catch (const graphfuse::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("FrobnicateOp"), std::string::npos) << m;
    EXPECT_NE(m.find("mystery"), std::string::npos) << m;
  }
  Graph h;
  auto a = h.add_input("a");
  auto bad = h.add_node("bad_reshape", OpType::intern("Reshape"),
                        {{a, 0}, {h.add_node("s", OpType::intern("Const"), {}, attrs({{"value", I({1}, {7})}})), 0}});
  h.add_output({bad, 0});
  try {
    gk::run_graph(h, {T({2, 2}, {1, 2, 3, 4})}, {});
    FAIL();
  } catch (const graphfuse::Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'bad_reshape' (Reshape)"), std::string::npos) << e.what();
  }
}

TEST(Executor, BenchReportsPerOpMedians) {
  const Graph g = tf_graph(false);
  auto rep = gk::bench_graph(g, {}, {gk::KernelSet::Fast, 1, 0, {}}, 3);
  EXPECT_EQ(rep.runs, 3);
  ASSERT_EQ(rep.ops.size(), 3u);
  EXPECT_GT(rep.median_ms, 0.0);
  for (const auto& op : rep.ops) EXPECT_EQ(op.count, 1) << op.op;
}

// Two graphs benched together (runs interleaved, CPU clock): one report each, in the order
// given, each with its own ops.
TEST(Executor, BenchGraphsInterleavedReportsEach) {
  const Graph fused = tf_graph(true);
  const Graph plain = tf_graph(false);
  auto reps = gk::bench_graphs({&plain, &fused}, {}, {gk::KernelSet::Fast, 1, 0, {}}, 4, gk::BenchClock::Cpu);
  ASSERT_EQ(reps.size(), 2u);
  EXPECT_EQ(reps[0].runs, 4);
  EXPECT_EQ(reps[1].runs, 4);
  EXPECT_EQ(reps[0].ops.size(), 3u);
  EXPECT_LT(reps[1].ops.size(), reps[0].ops.size());
  for (const auto& r : reps) {
    EXPECT_GT(r.median_ms, 0.0);
    EXPECT_LE(r.min_ms, r.median_ms);
  }
  EXPECT_THROW(gk::bench_graphs({}, {}, {gk::KernelSet::Fast, 1, 0, {}}, 1), graphfuse::Error);
}

TEST(Executor, CompareReportsErrors) {
  auto d = gk::compare_outputs({T({3}, {1.0f, 2.0f, 0.0f})}, {T({3}, {1.0f, 2.001f, 1e-7f})}, 1e-4, 1e-6);
  EXPECT_FALSE(d[0].pass);
  EXPECT_NEAR(d[0].max_abs, 0.001, 1e-6);
  // The near-zero element is judged against atol: 1e-7 / 1e-6.
  EXPECT_NEAR(d[0].max_rel, 0.1, 1e-6);
  d = gk::compare_outputs({T({2}, {1.0f, 2.0f})}, {T({2}, {1.0f, 2.001f})}, 1e-4, 1e-6);
  EXPECT_NEAR(d[0].max_rel, 0.001 / 2.001, 1e-6);
  d = gk::compare_outputs({T({2}, {1, 2})}, {T({1, 2}, {1, 2})}, 1e-4, 0);
  EXPECT_FALSE(d[0].shape_ok);
  d = gk::compare_outputs({T({1}, {NAN})}, {T({1}, {NAN})}, 1e-4, 0);
  EXPECT_TRUE(d[0].pass);
}

}  // namespace
