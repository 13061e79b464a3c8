// Within one round, a match whose leaf's producer was replaced in place earlier in the
// same round (the open question of the parallel-rewriter work).
//
// Matches are found on the graph as it was when the round began and applied in order; a
// match reading a node changed since is `stale` and waits for the next round. A leaf binds
// a value, not its producer, and a producer replaced in place keeps its NodeId, id,
// outputs and output types, so such a match was not marked stale. That is harmless for
// what a leaf's type says (rank, dtype, shape from the producer's OutputInfo), and it must
// stay so: marking every such match stale would serialise fusion chains (the ReLU a
// fused Conv2D takes over is the next Conv2D's input), one layer per round
// (ChainsStillFuseInOneRound below).
//
// It is not harmless for the facts of a constant, which a rule reads off the producer
// node itself: `const(x)`, `value(x)`, `values(x)`, a shape taken from a constant's tensor,
// a literal in the pattern; nor for natives, which may read anything. Each case below
// fails without the apply phase's leaf check (engine/rewrite/apply_phase.cpp, ApplyPhase::leaf_changed):
//  - ValueOfAConstantThatWasReplaced: `value(e)` held when the round began; `e`'s Const
//    is replaced in place by an Add before the Pow rule is applied; applying it anyway
//    evaluates `value(e)` on an Add, finds nothing, and writes a PowConst without its
//    `exponent` (build_attrs drops an undefined computed attribute), a wrong graph.
//  - NotConstantThatBecameOne: `!const(v)` held when the round began; `v` becomes a Const
//    in place first; the DynMul rule would then be applied to a constant operand.
//  - NativeReadingTheProducer: a native predicate checks the leaf's producer is a Relu;
//    the Relu becomes a Tanh in place first.
// With the check, the match is stale in round 1 and matched again in round 2 on the
// graph as it is, where it correctly does not fire; incremental and full matching agree.
#include <gtest/gtest.h>

#include <string>

#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse {
namespace {

struct Rewritten {
  Graph g;
  RewriteReport rep;
};

Rewritten rewrite(const char* rules, const char* graph, bool incremental = true, int threads = 1) {
  RuleSet rs = load_rules_from_string(rules, "stale_leaf.yaml");
  Rewritten r{parse_graph_text(graph, "stale_leaf.graph"), {}};
  RewriteOptions opt;
  opt.incremental = incremental;
  opt.threads = threads;
  r.rep = rewrite_graph(r.g, rs, opt);
  r.g.validate();
  return r;
}

std::size_t stale_of(const RewriteReport& rep, const std::string& rule) {
  for (const RuleStats& s : rep.rules)
    if (s.rule == rule) return s.rejected_by(RejectReason::Stale);
  return 0;
}

std::size_t applied_of(const RewriteReport& rep, const std::string& rule) {
  for (const RuleStats& s : rep.rules)
    if (s.rule == rule) return s.applied;
  return 0;
}

// The same graph whatever the worklist and the thread count.
void expect_same_everywhere(const char* rules, const char* graph) {
  std::string ref = write_graph_text(rewrite(rules, graph, false, 1).g);
  for (bool inc : {true, false})
    for (int threads : {1, 2}) EXPECT_EQ(write_graph_text(rewrite(rules, graph, inc, threads).g), ref);
}

// `two_as_sum` (benefit 10, so first) takes over the Const `c` with an Add; `pow_const`
// was matched at `p` with leaf e = c while c was still the constant 2.0.
const char* kValueRules = R"Y(rules:
  - name: two_as_sum
    benefit: 10
    pattern: |
      c = Const()
    where: value(c) == 2.0
    rewrite: Add(1.0, 1.0)
  - name: pow_const
    pattern: Pow(x, e)
    where: const(e)
    rewrite: "PowConst(x) {exponent = value(e)}"
)Y";
const char* kValueGraph = R"Y(input x
c = Const() {value = tensor(float32, [1], [2.0])}
p = Pow(x, c)
output p
)Y";

TEST(StaleLeaf, ValueOfAConstantThatWasReplaced) {
  Rewritten r = rewrite(kValueRules, kValueGraph);
  EXPECT_EQ(applied_of(r.rep, "two_as_sum"), 1u);
  EXPECT_EQ(stale_of(r.rep, "pow_const"), 1u) << "round 1 must not apply pow_const: e is no longer a constant";
  EXPECT_EQ(applied_of(r.rep, "pow_const"), 0u);
  NodeId p = *r.g.find("p");
  EXPECT_EQ(r.g.op(p).name(), "Pow") << write_graph_text(r.g);
  for (NodeId n : r.g.nodes()) {
    if (r.g.op(n).name() == "PowConst") {
      EXPECT_NE(r.g.node(n).attrs.find("exponent"), nullptr) << "a PowConst lost its exponent:\n" << write_graph_text(r.g);
    }
  }
  expect_same_everywhere(kValueRules, kValueGraph);
}

// `fold` (benefit 10) turns w = Fold(k) into a Const in place; `dyn_mul` was matched at
// m with leaf v = w while w was not a constant.
const char* kBecameRules = R"Y(rules:
  - name: fold
    benefit: 10
    pattern: Fold(y)
    rewrite: "Const() {value = tensor(float32, [1], [3.0])}"
  - name: dyn_mul
    pattern: Mul(x, v)
    where: "!const(v)"
    rewrite: DynMul(x, v)
)Y";
const char* kBecameGraph = R"Y(input x
k = Const() {value = tensor(float32, [1], [3.0])}
w = Fold(k)
m = Mul(x, w)
output m
)Y";

TEST(StaleLeaf, NotConstantThatBecameOne) {
  Rewritten r = rewrite(kBecameRules, kBecameGraph);
  EXPECT_EQ(applied_of(r.rep, "fold"), 1u);
  EXPECT_EQ(stale_of(r.rep, "dyn_mul"), 1u);
  for (NodeId n : r.g.nodes()) {
    if (r.g.op(n).name() == "DynMul") {
      EXPECT_FALSE(is_constant(r.g, r.g.node(n).inputs[1])) << "DynMul applied to a constant:\n" << write_graph_text(r.g);
    }
  }
  EXPECT_EQ(r.g.op(*r.g.find("m")).name(), "Mul");
  expect_same_everywhere(kBecameRules, kBecameGraph);
}

// A native predicate sees the leaf's producer: `relu_to_tanh` (first) replaces it in place.
const char* kNativeRules = R"Y(rules:
  - name: relu_to_tanh
    benefit: 10
    pattern: Relu(y)
    rewrite: Tanh(y)
  - name: neg_of_relu
    pattern: Neg(x)
    where: stale_leaf_test_from_relu(x)
    rewrite: NegOfRelu(x)
)Y";
const char* kNativeGraph = R"Y(input a
r = Relu(a)
n = Neg(r)
output n
)Y";

TEST(StaleLeaf, NativeReadingTheProducer) {
  register_predicate("stale_leaf_test_from_relu", [](const Graph& g, std::span<const NativeArg> args) {
    return args.size() == 1 && args[0].value.valid() && g.op(args[0].value.node).name() == "Relu";
  });
  Rewritten r = rewrite(kNativeRules, kNativeGraph);
  EXPECT_EQ(applied_of(r.rep, "relu_to_tanh"), 1u);
  EXPECT_EQ(stale_of(r.rep, "neg_of_relu"), 1u);
  for (NodeId n : r.g.nodes()) {
    if (r.g.op(n).name() == "NegOfRelu") {
      EXPECT_EQ(r.g.op(r.g.node(n).inputs[0].node).name(), "Relu") << write_graph_text(r.g);
    }
  }
  expect_same_everywhere(kNativeRules, kNativeGraph);
}

// The harmless, common case stays as it was: the second block's Conv2D reads the ReLU the
// first block's fused node takes over in place, in the same round. A leaf check on every
// in-place replacement would make the second block stale, and a chain of N blocks would
// take N rounds; its type facts do survive (rank(x) below reads the kept OutputInfo).
TEST(StaleLeaf, ChainsStillFuseInOneRound) {
  const char* rules = R"Y(rules:
  - name: conv_bias_relu
    pattern: |
      conv = Conv2D(x, w)
      bias = BiasAdd(conv, b)
      ReLU(bias)
    where: rank(x) == 4
    rewrite: "Fused(x, w, b) {...conv}"
)Y";
  std::string graph = "input x0\n";
  for (int i = 0; i < 6; ++i) {
    std::string s = std::to_string(i), prev = i == 0 ? "x0" : "r" + std::to_string(i - 1);
    graph += "w" + s + " = Const() {value = tensor(float32, [1, 1, 1, 1], [1.0])}\n";
    graph += "b" + s + " = Const() {value = tensor(float32, [1], [0.0])}\n";
    graph += "c" + s + " = Conv2D(" + prev + ", w" + s + ")\n";
    graph += "a" + s + " = BiasAdd(c" + s + ", b" + s + ")\n";
    graph += "r" + s + " = ReLU(a" + s + ")\n";
  }
  graph += "output r5\n";
  // Every value typed rank 4 (the .graph form has no types; set them on the graph).
  RuleSet rs = load_rules_from_string(rules, "chain.yaml");
  Graph g = parse_graph_text(graph, "chain.graph");
  for (NodeId n : g.nodes()) {
    OutputInfo& o = g.output_infos(n)[0];
    o.type.dtype = DType::Float32;
    o.type.shape = {1, 4, 4, 1};
    o.type.shape_known = true;
  }
  RewriteReport rep = rewrite_graph(g, rs);
  EXPECT_EQ(rep.rounds, 1);
  EXPECT_EQ(applied_of(rep, "conv_bias_relu"), 6u);
  EXPECT_EQ(stale_of(rep, "conv_bias_relu"), 0u);
}

}  // namespace
}  // namespace graphfuse
