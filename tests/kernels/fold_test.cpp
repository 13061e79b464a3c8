// Constant folding: what folds, what stays, ids and names, and rules that rely on folding.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>

#include "graphfuse/io.h"
#include "graphfuse/kernels/fold.h"
#include "graphfuse/rules.h"
#include "kernels/test_util.h"

namespace {

using graphfuse::Graph;
using graphfuse::NodeId;
using graphfuse::parse_graph_text;

const Tensor* value_of(const Graph& g, const std::string& id) {
  auto n = g.find(id);
  if (!n) return nullptr;
  return g.node(*n).attrs.get_if<Tensor>("value");
}

bool all_pass(const std::vector<gk::TensorDiff>& diffs) {
  for (const auto& d : diffs)
    if (!d.pass) return false;
  return !diffs.empty();
}

// A graph with constant arithmetic (a + b) * c feeding a non-constant Add.
Graph arithmetic_graph() {
  Graph g = parse_graph_text(R"(
    input x
    a = Const() {value = tensor(float32, [2], [1.0, 2.0])}
    b = Const() {value = tensor(float32, [2], [3.0, 4.0])}
    c = Const() {value = tensor(float32, [2], [0.5, 0.25])}
    s = Add(a, b)
    p = Mul(s, c)
    y = Add(x, p)
    output y
  )");
  return g;
}

TEST(Fold, EvaluatesConstantChainsInPlaceAndRemovesDeadConstants) {
  Graph g = arithmetic_graph();
  gk::FoldReport r = gk::fold_constants(g);
  ASSERT_EQ(r.folded.size(), 2u);
  EXPECT_EQ(r.folded[0].node, "s");
  EXPECT_EQ(r.folded[1].node, "p");
  EXPECT_EQ(r.folded[1].op, "Mul");
  // p keeps its id and becomes a Const; a, b, c and the folded s lost their users.
  const Tensor* p = value_of(g, "p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(g.node(*g.find("p")).op.name(), "Const");
  EXPECT_EQ(p->shape, (Shape{2}));
  EXPECT_FLOAT_EQ(p->as<float>()[0], 2.0f);
  EXPECT_FLOAT_EQ(p->as<float>()[1], 1.5f);
  EXPECT_FALSE(g.find("a") || g.find("b") || g.find("c") || g.find("s"));
  EXPECT_EQ(r.removed.size(), 4u);
  EXPECT_EQ(g.size(), 3u);  // x, p, y
  g.validate();
}

TEST(Fold, LeavesNonConstantsGraphOutputsAndDatalessConstants) {
  Graph g = parse_graph_text(R"(
    input x
    a = Const() {value = tensor(float32, [2], [1.0, 2.0])}
    w = Const() {shape = [2]}
    n = Neg(a)
    m = Mul(w, a)
    y = Add(x, m)
    output y, n, a
  )");
  gk::FoldReport r = gk::fold_constants(g);
  ASSERT_EQ(r.folded.size(), 1u);  // n; m reads w, which has no data
  EXPECT_EQ(r.folded[0].node, "n");
  EXPECT_TRUE(g.find("a"));  // a graph output, and still used by m
  EXPECT_EQ(g.node(*g.find("m")).op.name(), "Mul");
  EXPECT_FLOAT_EQ(value_of(g, "n")->as<float>()[1], -2.0f);
}

TEST(Fold, RuleCreatedScopeFoldsOnlyNodesRulesMade) {
  Graph g = arithmetic_graph();
  gk::FoldOptions opt;
  opt.scope = gk::FoldScope::RuleCreated;
  EXPECT_FALSE(gk::fold_constants(g, opt).changed());
  g.attrs(*g.find("s")).set("_rule", std::string("r"));
  g.attrs(*g.find("p")).set("_rule", std::string("r"));
  gk::FoldReport r = gk::fold_constants(g, opt);
  ASSERT_EQ(r.folded.size(), 2u);
  EXPECT_EQ(r.folded[0].node, "s");
  EXPECT_EQ(r.folded[1].node, "p");
  // Provenance survives folding.
  EXPECT_NE(g.node(*g.find("p")).attrs.get_if<std::string>("_rule"), nullptr);
  EXPECT_EQ(gk::fold_scope_from_name("auto"), gk::FoldScope::RuleCreated);
  EXPECT_THROW(gk::fold_scope_from_name("sometimes"), graphfuse::Error);
}

// A constant a rule made (a Shape replaced by its value) is folded into what reads it; the
// model's own constant arithmetic beside it is not.
TEST(Fold, RuleCreatedScopeFoldsWhatReadsARuleMadeConstant) {
  Graph g = parse_graph_text(R"(
    input x
    k = Const() {value = tensor(int64, [3], [2, 16, 64]), _rule = "shape_static"}
    i = Const() {value = tensor(int64, [], [1])}
    d = Gather(k, i)
    a = Const() {value = tensor(float32, [2], [1.0, 2.0])}
    n = Neg(a)
    y = Reshape(x, d)
    z = Add(x, n)
    output y, z
  )");
  gk::FoldOptions opt;
  opt.scope = gk::FoldScope::RuleCreated;
  gk::FoldReport r = gk::fold_constants(g, opt);
  ASSERT_EQ(r.folded.size(), 1u);
  EXPECT_EQ(r.folded[0].node, "d");
  EXPECT_EQ(value_of(g, "d")->as<std::int64_t>()[0], 16);
  EXPECT_EQ(g.node(*g.find("n")).op.name(), "Neg");
}

TEST(Fold, SkipsWhatTheKernelsCannotEvaluate) {
  Graph g = parse_graph_text(R"(
    a = Const() {value = tensor(float32, [2], [1.0, 2.0])}
    u = SomeCustomOp(a)
    output u
  )");
  gk::FoldReport r = gk::fold_constants(g);
  EXPECT_TRUE(r.folded.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("no kernel"), std::string::npos);
}

TEST(Fold, MaterializedConstantsMatchTheExecutorsRandomData) {
  Graph g = parse_graph_text(R"(
    input x
    w = Const() {shape = [1, 2, 3, 3]}
    y = Conv(x, w)
    output y
  )");
  gk::ExecOptions opt;
  opt.seed = 7;
  auto expected = gk::run_graph(g, {}, opt);
  Graph m = g;
  EXPECT_EQ(gk::materialize_constants(m, 7), 1u);
  ASSERT_TRUE(value_of(m, "w")->has_data());
  auto actual = gk::run_graph(m, {}, opt);
  EXPECT_TRUE(all_pass(gk::compare_outputs(actual, expected, 0, 0)));
}

// The ONNX batch-norm fold rule, then folding: one Conv with new constant weights, same numbers.
TEST(Fold, ConvBatchNormFoldRuleKeepsTheNumbers) {
  const std::filesystem::path src = GRAPHFUSE_SOURCE_DIR;
  graphfuse::RuleSet rules = graphfuse::load_rule_files({(src / "rules/onnx/batchnorm.yaml").string()});
  Graph g = parse_graph_text(R"(
    input x
    w = Const() {shape = [4, 3, 3, 3]}
    s = Const() {shape = [4]}
    b = Const() {shape = [4]}
    m = Const() {shape = [4]}
    v = Const() {shape = [4]}
    conv = Conv(x, w) {pads = [1, 1, 1, 1]}
    bn = BatchNormalization(conv, s, b, m, v) {epsilon = 0.001}
    output bn
  )");
  gk::ExecOptions opt;
  gk::materialize_constants(g, opt.seed);
  Graph r = g;
  gk::FoldOptions fold;
  fold.scope = gk::FoldScope::RuleCreated;
  gk::ReferenceFolder folder(fold);
  auto rw = graphfuse::rewrite_and_fold(r, rules, {}, &folder);
  EXPECT_TRUE(rw.converged);
  EXPECT_FALSE(rw.fold.folded.empty());
  const auto& bn = r.node(*r.find("bn"));
  EXPECT_EQ(bn.op.name(), "Conv");
  ASSERT_EQ(bn.inputs.size(), 3u);
  for (std::size_t k = 1; k < 3; ++k) EXPECT_NE(graphfuse::constant_tensor(r, bn.inputs[k]), nullptr);
  EXPECT_EQ(r.size(), 4u);  // x, folded weight, folded bias, the conv
  auto diffs = gk::verify_rewrite(g, r, opt);
  EXPECT_TRUE(all_pass(diffs)) << gk::format_diffs(diffs);
}

// verify_graphs gives a rewritten graph's constants the data of the original's by id, even
// when their consumers (and so the executor's random scale) changed: here the variance
// feeds an Add instead of a BatchNormalization, which alone would make it +-0.1 and the
// square root NaN.
TEST(Fold, VerifyGraphsSharesConstantsById) {
  Graph before = parse_graph_text(R"(
    input x
    s = Const() {shape = [4]}
    b = Const() {shape = [4]}
    m = Const() {shape = [4]}
    v = Const() {shape = [4]}
    y = BatchNormalization(x, s, b, m, v) {epsilon = 0.001}
    output y
  )");
  Graph after = parse_graph_text(R"(
    input x
    s = Const() {shape = [4]}
    b = Const() {shape = [4]}
    m = Const() {shape = [4]}
    v = Const() {shape = [4]}
    shp = Const() {value = tensor(int64, [3], [4, 1, 1])}
    eps = Const() {value = tensor(float32, [], [0.001])}
    ve = Add(v, eps)
    sd = Sqrt(ve)
    f = Div(s, sd)
    mf = Mul(m, f)
    t = Sub(b, mf)
    fr = Reshape(f, shp)
    tr = Reshape(t, shp)
    xf = Mul(x, fr)
    y = Add(xf, tr)
    output y
  )");
  gk::ExecOptions opt;
  opt.default_input_shape = {1, 4, 2, 2};
  auto diffs = gk::verify_graphs(before, after, opt);
  EXPECT_TRUE(all_pass(diffs)) << gk::format_diffs(diffs);
  // The executor alone gives v a different scale in each graph: the outputs differ.
  EXPECT_FALSE(all_pass(gk::verify_rewrite(before, after, opt)));
}

// TF's FusedBatchNorm at inference, hand-computed: y = (x - mean) / sqrt(var + eps) * scale + offset
// per channel (last dim in NHWC, dim 1 in NCHW); the extra outputs echo mean and variance.
TEST(Fold, TfFusedBatchNormReference) {
  Attributes a;
  a.set("epsilon", 0.0f);
  auto y = gk::run_op(gk::KernelSet::Reference, "FusedBatchNormV3",
                      {T({1, 1, 2, 2}, {1, 2, 3, 4}), T({2}, {1, 2}), T({2}, {0, 1}), T({2}, {1, 0}), T({2}, {4, 1})},
                      a, 3);
  ASSERT_EQ(y.size(), 3u);
  // channel 0: (x - 1) / 2 * 1 + 0; channel 1: (x - 0) / 1 * 2 + 1
  EXPECT_FLOAT_EQ(y[0].as<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(y[0].as<float>()[1], 5.0f);
  EXPECT_FLOAT_EQ(y[0].as<float>()[2], 1.0f);
  EXPECT_FLOAT_EQ(y[0].as<float>()[3], 9.0f);
  EXPECT_FLOAT_EQ(y[1].as<float>()[0], 1.0f);  // the mean
  a.set("data_format", std::string("NCHW"));
  auto z = gk::run_op(gk::KernelSet::Reference, "FusedBatchNorm",
                      {T({1, 2, 1, 2}, {1, 3, 2, 4}), T({2}, {1, 2}), T({2}, {0, 1}), T({2}, {1, 0}), T({2}, {4, 1})}, a);
  EXPECT_FLOAT_EQ(z[0].as<float>()[1], 1.0f);
  EXPECT_FLOAT_EQ(z[0].as<float>()[3], 9.0f);
  a.set("is_training", true);
  EXPECT_THROW(gk::run_op(gk::KernelSet::Reference, "FusedBatchNorm",
                          {T({1, 1, 1, 2}, {1, 2}), T({2}, {1, 1}), T({2}, {0, 0}), T({2}, {0, 0}), T({2}, {1, 1})}, a),
               graphfuse::Error);
}

}  // namespace
