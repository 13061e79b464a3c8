// The full pattern language on the rewrite side: several roots, the duplicate policy and
// its cycle check, computed attributes, variadic and constant inputs, dead constants.
#include <gtest/gtest.h>

#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

using namespace graphfuse;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

const char* kHorizontal =
    "rules:\n"
    "  # Conv(x, w1), Conv(x, w2) -> Split(Conv(x, Concat(w1, w2)))\n"
    "  - name: horizontal\n"
    "    pattern: |\n"
    "      p = Conv(x, w)\n"
    "      q = Conv(x, v) {k = p.k}\n"
    "      p, q\n"
    "    rewrite: |\n"
    "      f = Conv(x, Concat(w, v) {axis = 0}) {...p}\n"
    "      a, b = Split(f) {axis = 1}\n"
    "      a, b\n";

std::vector<std::string> input_ids(const Graph& g, const char* id) {
  std::vector<std::string> out;
  for (ValueRef v : g.node(*g.find(id)).inputs) out.push_back(g.value_name(v));
  return out;
}

}  // namespace

TEST(LangRewrite, TwoRootsFuseHorizontally) {
  RuleSet rs = load_rules_from_string(kHorizontal, "t.yaml");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId w1 = g.add_node("w1", op("Const")), w2 = g.add_node("w2", op("Const"));
  Attributes k;
  k.set("k", std::int64_t{3});
  NodeId c1 = g.add_node("c1", op("Conv"), {{x, 0}, {w1, 0}}, k);
  NodeId c2 = g.add_node("c2", op("Conv"), {{x, 0}, {w2, 0}}, k);
  NodeId t1 = g.add_node("t1", op("Tanh"), {{c1, 0}});
  NodeId t2 = g.add_node("t2", op("Tanh"), {{c2, 0}});
  g.add_output({t1, 0});
  g.add_output({t2, 0});
  RewriteOptions opt;
  opt.trace = true;
  RewriteReport rep = rewrite_graph(g, rs, opt);
  g.validate();
  EXPECT_EQ(rep.rules[0].applied, 1u);
  EXPECT_FALSE(g.find("c1") || g.find("c2"));
  // A multi-output node is named after its first target.
  EXPECT_EQ(input_ids(g, "t1"), std::vector<std::string>{"c1/a"});
  EXPECT_EQ(input_ids(g, "t2"), std::vector<std::string>{"c1/a:1"});
  EXPECT_EQ(input_ids(g, "c1/f"), (std::vector<std::string>{"x", "c1/concat"}));
  EXPECT_EQ(input_ids(g, "c1/concat"), (std::vector<std::string>{"w1", "w2"}));
  EXPECT_EQ(*g.node(*g.find("c1/f")).attrs.get_if<std::int64_t>("k"), 3);
  EXPECT_EQ(*g.node(*g.find("c1/a")).attrs.get_if<std::string>("_rule"), "horizontal");
  ASSERT_EQ(rep.trace.size(), 1u);
  EXPECT_EQ(rep.trace[0],
            "round 1: t.yaml:3 horizontal at 'c1': Conv erased, uses now read 'c1/a'; Conv erased, uses now "
            "read 'c1/a:1'; added c1/concat, c1/f, c1/a");
}

TEST(LangRewrite, TwoRootsThatWouldCloseACycleAreRejected) {
  // c2's weight is computed from c1: one node replacing both would feed itself.
  RuleSet rs = load_rules_from_string(kHorizontal, "t.yaml");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId w1 = g.add_node("w1", op("Const"));
  Attributes k;
  k.set("k", std::int64_t{1});
  NodeId c1 = g.add_node("c1", op("Conv"), {{x, 0}, {w1, 0}}, k);
  NodeId t = g.add_node("t", op("Relu"), {{c1, 0}});
  NodeId c2 = g.add_node("c2", op("Conv"), {{x, 0}, {t, 0}}, k);
  g.add_output({g.add_node("out", op("Tanh"), {{c2, 0}}), 0});
  Graph before = g;
  RewriteReport rep = rewrite_graph(g, rs);
  g.validate();
  EXPECT_EQ(rep.rules[0].applied, 0u);
  EXPECT_EQ(rep.rules[0].matched, 2u);  // anchored at c1 and at c2
  EXPECT_EQ(rep.rules[0].rejected_by(RejectReason::Cycle), 2u);
  EXPECT_EQ(g.size(), before.size());
}

TEST(LangRewrite, DuplicateKeepsInteriorNodesForTheirOtherUsers) {
  const std::string rule =
      "rules:\n"
      "  # Relu(BiasAdd(Conv2D(x, w), b)) -> Fused(x, w, b)\n"
      "  - name: fuse\n"
      "    on_external_use: POLICY\n"
      "    pattern: |\n"
      "      conv = Conv2D(x, w)\n"
      "      bias = BiasAdd(conv, b)\n"
      "      Relu(bias)\n"
      "    rewrite: Fused(x, w, b)\n";
  auto graph = [] {
    Graph g;
    NodeId x = g.add_input("x");
    NodeId w = g.add_node("w", op("Const")), b = g.add_node("b", op("Const"));
    NodeId conv = g.add_node("conv", op("Conv2D"), {{x, 0}, {w, 0}});
    NodeId bias = g.add_node("bias", op("BiasAdd"), {{conv, 0}, {b, 0}});
    NodeId relu = g.add_node("relu", op("Relu"), {{bias, 0}});
    NodeId other = g.add_node("other", op("Tanh"), {{conv, 0}});
    g.add_output({relu, 0});
    g.add_output({other, 0});
    return g;
  };
  auto with = [&](const char* policy) {
    std::string y = rule;
    y.replace(y.find("POLICY"), 6, policy);
    return load_rules_from_string(y, "t.yaml");
  };
  Graph g = graph();
  RewriteReport reject = rewrite_graph(g, with("reject"));
  EXPECT_EQ(reject.rules[0].rejected_by(RejectReason::ExternalUse), 1u);
  Graph d = graph();
  RewriteReport dup = rewrite_graph(d, with("duplicate"));
  d.validate();
  EXPECT_EQ(dup.rules[0].applied, 1u);
  EXPECT_EQ(d.node(*d.find("relu")).op, op("Fused"));
  EXPECT_TRUE(d.find("conv"));   // still read by `other`
  EXPECT_FALSE(d.find("bias"));  // nobody else read it
  EXPECT_EQ(input_ids(d, "other"), std::vector<std::string>{"conv"});
}

TEST(LangRewrite, ComputedAttributesFromConstantsAndDeadConstantsGo) {
  RuleSet rs = load_rules_from_string(
      "rules:\n"
      "  # Clip(Conv(x, w), lo, hi) -> FusedConv(x, w) {Clip [lo, hi]}\n"
      "  - name: conv_clip\n"
      "    pattern: |\n"
      "      conv = Conv(x, w)\n"
      "      Clip(conv, lo, hi)\n"
      "    rewrite: |\n"
      "      FusedConv(x, w) {...conv, activation = \"Clip\", activation_params = [value(lo), value(hi)]}\n",
      "t.yaml");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId w = g.add_node("w", op("Const"));
  Attributes lo, hi;
  lo.set("value", Tensor::from_floats({}, {0.0f}));
  hi.set("value", Tensor::from_floats({}, {6.0f}));
  NodeId l = g.add_node("lo", op("Const"), {}, lo), h = g.add_node("hi", op("Const"), {}, hi);
  NodeId v = g.add_input("v");  // not a constant: value(v) is undefined, so no match
  NodeId conv = g.add_node("conv", op("Conv"), {{x, 0}, {w, 0}});
  NodeId clip = g.add_node("clip", op("Clip"), {{conv, 0}, {l, 0}, {h, 0}});
  NodeId conv2 = g.add_node("conv2", op("Conv"), {{x, 0}, {w, 0}});
  NodeId clip2 = g.add_node("clip2", op("Clip"), {{conv2, 0}, {l, 0}, {v, 0}});
  g.add_output({clip, 0});
  g.add_output({clip2, 0});
  RewriteReport rep = rewrite_graph(g, rs);
  g.validate();
  EXPECT_EQ(rep.rules[0].applied, 1u);
  EXPECT_EQ(rep.rules[0].matched, 1u);
  const Node& f = g.node(clip);
  EXPECT_EQ(f.op, op("FusedConv"));
  EXPECT_EQ(*f.attrs.get_if<std::vector<float>>("activation_params"), (std::vector<float>{0.0f, 6.0f}));
  EXPECT_TRUE(g.find("lo"));   // clip2 still reads it
  EXPECT_FALSE(g.find("hi"));  // a constant the match read and nobody reads any more
  (void)clip2;
}

TEST(LangRewrite, VariadicAndConstantInputsInTheRewrite) {
  RuleSet rs = load_rules_from_string(
      "rules:\n"
      "  # Relu(Concat(xs...)) -> Concat(Relu each...) is not expressible; this one keeps the list\n"
      "  - name: cat\n"
      "    pattern: Relu(Concat(a, xs...))\n"
      "    rewrite: |\n"
      "      CatRelu(xs..., a, 2.0) {n = len(xs)}\n",
      "t.yaml");
  Graph g;
  NodeId a = g.add_input("a"), b = g.add_input("b"), c = g.add_input("c");
  NodeId cat = g.add_node("cat", op("Concat"), {{a, 0}, {b, 0}, {c, 0}});
  NodeId r = g.add_node("r", op("Relu"), {{cat, 0}});
  g.add_output({r, 0});
  rewrite_graph(g, rs);
  g.validate();
  EXPECT_EQ(input_ids(g, "r"), (std::vector<std::string>{"b", "c", "a", "r/const"}));
  EXPECT_EQ(*g.node(*g.find("r")).attrs.get_if<std::int64_t>("n"), 2);
  const Tensor* t = constant_tensor(g, {*g.find("r/const"), 0});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->as<float>()[0], 2.0f);
}

TEST(LangRewrite, PriorityOrdersRulesAcrossFiles) {
  RuleSet rs = load_rules_from_string(
      "rules:\n"
      "  - {name: first, pattern: \"Relu(x)\", rewrite: \"A(x)\"}\n"
      "  - {name: second, pattern: \"Relu(x)\", rewrite: \"B(x)\", priority: 5}\n",
      "t.yaml");
  EXPECT_EQ(rs[0].name, "second");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId r = g.add_node("r", op("Relu"), {{x, 0}});
  g.add_output({r, 0});
  rewrite_graph(g, rs);
  EXPECT_EQ(g.node(r).op, op("B"));
}
