// The seed fusion end to end through rewrite_graph: legality, rewiring, rounds, threads,
// and the template attribute cache that applying uses.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <sstream>

#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "rewrite/attr_cache.h"

using namespace graphfuse;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

const RuleSet& seed() {
  static const RuleSet rs = load_rule_files({std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml"});
  return rs;
}

struct Chain {
  NodeId conv, bias, relu;
};

// conv = Conv2D(x, w) {strides, padding}; bias = BiasAdd(conv, b); relu = ReLU(bias)
Chain add_chain(Graph& g, ValueRef x, const std::string& p) {
  NodeId w = g.add_node(p + "w", op("Const"));
  NodeId b = g.add_node(p + "b", op("Const"));
  Attributes a;
  a.set("strides", std::vector<std::int64_t>{1, 1});
  a.set("padding", std::string("SAME"));
  NodeId conv = g.add_node(p + "conv", op("Conv2D"), {x, {w, 0}}, a);
  NodeId bias = g.add_node(p + "bias", op("BiasAdd"), {{conv, 0}, {b, 0}});
  NodeId relu = g.add_node(p + "relu", op("ReLU"), {{bias, 0}});
  return {conv, bias, relu};
}

std::string str(const AttrValue& v) {
  std::ostringstream o;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, float> || std::is_same_v<T, bool>) o << x;
        else if constexpr (std::is_same_v<T, std::string>) o << '"' << x << '"';
        else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<float>> ||
                           std::is_same_v<T, std::vector<std::string>>) {
          o << '[';
          for (const auto& e : x) o << e << ',';
          o << ']';
        } else o << "<" << attr_kind_name(v) << ">";
      },
      v);
  return o.str();
}

// A canonical text of the whole graph, for "byte-identical" comparisons.
std::string dump(const Graph& g) {
  std::string s;
  for (NodeId n : g.nodes()) {
    const Node& nd = g.node(n);
    s += nd.id + " = " + std::string(nd.op.name()) + "(";
    for (ValueRef v : nd.inputs) s += (v.valid() ? g.value_name(v) : "-") + ",";
    s += ") {";
    for (const auto& [k, v] : nd.attrs) s += k + "=" + str(v) + ",";
    s += "}\n";
  }
  for (ValueRef v : g.outputs()) s += "output " + g.value_name(v) + "\n";
  return s;
}

std::vector<std::string> input_ids(const Graph& g, const char* id) {
  std::vector<std::string> out;
  for (ValueRef v : g.node(*g.find(id)).inputs) out.push_back(g.value_name(v));
  return out;
}

std::size_t count_op(const Graph& g, const char* name) {
  std::size_t c = 0;
  for (NodeId n : g.nodes()) c += g.node(n).op == op(name);
  return c;
}

}  // namespace

TEST(RewriteSeed, SingleChainFuses) {
  Graph g;
  NodeId x = g.add_input("x");
  Chain c = add_chain(g, {x, 0}, "");
  NodeId out = g.add_node("out", op("Softmax"), {{c.relu, 0}});
  g.add_output({out, 0});
  RewriteReport rep = rewrite_graph(g, seed());
  g.validate();
  EXPECT_TRUE(rep.converged);
  EXPECT_EQ(rep.rounds, 1);
  EXPECT_EQ(rep.nodes_before, 7u);
  EXPECT_EQ(rep.nodes_after, 5u);
  ASSERT_EQ(rep.rules.size(), 1u);
  EXPECT_EQ(rep.rules[0].applied, 1u);
  EXPECT_EQ(rep.stop_reason, "fixed point");
  // The fused node took over the ReLU's NodeId and id.
  const Node& f = g.node(c.relu);
  EXPECT_EQ(f.id, "relu");
  EXPECT_EQ(f.op, op("FusedConv2D_BiasAdd_ReLU"));
  EXPECT_EQ(input_ids(g, "relu"), (std::vector<std::string>{"x", "w", "b"}));
  EXPECT_EQ(*f.attrs.get_if<std::vector<std::int64_t>>("strides"), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(*f.attrs.get_if<std::string>("padding"), "SAME");
  EXPECT_EQ(*f.attrs.get_if<std::string>("activation"), "ReLU");
  EXPECT_EQ(*f.attrs.get_if<std::string>("_rule"), "conv2d_biasadd_relu");
  EXPECT_EQ(input_ids(g, "out"), std::vector<std::string>{"relu"});
  EXPECT_FALSE(g.find("conv"));
  EXPECT_FALSE(g.find("bias"));
  EXPECT_FALSE(g.alive(c.conv));
  // Tracing is off by default; on, it names the rule, the root and what went.
  Graph h;
  add_chain(h, {h.add_input("x"), 0}, "");
  RewriteOptions opt;
  opt.trace = true;
  RewriteReport traced = rewrite_graph(h, seed(), opt);
  EXPECT_TRUE(rep.trace.empty());
  ASSERT_EQ(traced.trace.size(), 1u);
  EXPECT_EQ(traced.trace[0], "round 1: " + seed()[0].label() +
                                 " at 'relu': FusedConv2D_BiasAdd_ReLU replaces ReLU; removed 'bias', 'conv'");
}

TEST(RewriteSeed, ConvWithTwoConsumersIsUnchanged) {
  Graph g;
  NodeId x = g.add_input("x");
  Chain c = add_chain(g, {x, 0}, "");
  g.add_node("other", op("Tanh"), {{c.conv, 0}});
  std::string before = dump(g);
  RewriteReport rep = rewrite_graph(g, seed());
  EXPECT_EQ(dump(g), before);
  EXPECT_EQ(rep.rules[0].matched, 1u);
  EXPECT_EQ(rep.rules[0].rejected_by(RejectReason::ExternalUse), 1u);
}

TEST(RewriteSeed, BiasAddWithTwoConsumersIsUnchanged) {
  Graph g;
  NodeId x = g.add_input("x");
  Chain c = add_chain(g, {x, 0}, "");
  g.add_node("other", op("Tanh"), {{c.bias, 0}});
  std::string before = dump(g);
  rewrite_graph(g, seed());
  EXPECT_EQ(dump(g), before);
}

TEST(RewriteSeed, ReluWithThreeConsumersIncludingGraphOutput) {
  Graph g;
  NodeId x = g.add_input("x");
  Chain c = add_chain(g, {x, 0}, "");
  NodeId t = g.add_node("t", op("Tanh"), {{c.relu, 0}});
  NodeId a = g.add_node("a", op("Add"), {{t, 0}, {c.relu, 0}});
  g.add_output({c.relu, 0});
  g.add_output({a, 0});
  rewrite_graph(g, seed());
  g.validate();
  EXPECT_EQ(g.node(c.relu).op, op("FusedConv2D_BiasAdd_ReLU"));
  EXPECT_EQ(input_ids(g, "t"), std::vector<std::string>{"relu"});
  EXPECT_EQ(input_ids(g, "a"), (std::vector<std::string>{"t", "relu"}));
  EXPECT_EQ(g.outputs()[0], (ValueRef{c.relu, 0}));
  EXPECT_EQ(g.value_name(g.outputs()[0]), "relu");
}

TEST(RewriteSeed, SwappedBiasAddOperandsDoNotMatch) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId w = g.add_node("w", op("Const"));
  NodeId b = g.add_node("b", op("Const"));
  NodeId conv = g.add_node("conv", op("Conv2D"), {{x, 0}, {w, 0}});
  NodeId bias = g.add_node("bias", op("BiasAdd"), {{b, 0}, {conv, 0}});
  g.add_node("relu", op("ReLU"), {{bias, 0}});
  std::string before = dump(g);
  RewriteReport rep = rewrite_graph(g, seed());
  EXPECT_EQ(dump(g), before);
  EXPECT_EQ(rep.rules[0].candidates, 1u);
  EXPECT_EQ(rep.rules[0].matched, 0u);
}

TEST(RewriteSeed, ConvReluWithoutBiasAddDoesNotMatch) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId w = g.add_node("w", op("Const"));
  NodeId conv = g.add_node("conv", op("Conv2D"), {{x, 0}, {w, 0}});
  g.add_node("relu", op("ReLU"), {{conv, 0}});
  std::string before = dump(g);
  rewrite_graph(g, seed());
  EXPECT_EQ(dump(g), before);
}

TEST(RewriteSeed, IndependentChainsAndChainFeedingChainAllFuse) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId y = g.add_input("y");
  Chain a = add_chain(g, {x, 0}, "a_");
  Chain b = add_chain(g, {y, 0}, "b_");
  Chain c = add_chain(g, {a.relu, 0}, "c_");  // fed by chain a
  Chain d = add_chain(g, {c.relu, 0}, "d_");  // fed by chain c
  g.add_output({b.relu, 0});
  g.add_output({d.relu, 0});
  RewriteReport rep = rewrite_graph(g, seed());
  g.validate();
  EXPECT_EQ(rep.rules[0].applied, 4u);
  EXPECT_EQ(rep.rounds, 1);  // disjoint matches all apply in the first round
  EXPECT_EQ(count_op(g, "FusedConv2D_BiasAdd_ReLU"), 4u);
  EXPECT_EQ(count_op(g, "Conv2D") + count_op(g, "BiasAdd") + count_op(g, "ReLU"), 0u);
  EXPECT_EQ(input_ids(g, "c_relu"), (std::vector<std::string>{"a_relu", "c_w", "c_b"}));
  EXPECT_EQ(input_ids(g, "d_relu"), (std::vector<std::string>{"c_relu", "d_w", "d_b"}));
}

TEST(RewriteSeed, InteriorGraphOutputBlocksFusion) {
  Graph g;
  NodeId x = g.add_input("x");
  Chain c = add_chain(g, {x, 0}, "");
  g.add_output({c.bias, 0});
  std::string before = dump(g);
  RewriteReport rep = rewrite_graph(g, seed());
  EXPECT_EQ(dump(g), before);
  EXPECT_EQ(rep.rules[0].rejected_by(RejectReason::GraphOutput), 1u);
}

TEST(RewriteSeed, SecondApplicationChangesNothing) {
  Graph g;
  NodeId x = g.add_input("x");
  Chain a = add_chain(g, {x, 0}, "a_");
  add_chain(g, {a.relu, 0}, "b_");
  rewrite_graph(g, seed());
  std::string once = dump(g);
  RewriteReport rep = rewrite_graph(g, seed());
  EXPECT_EQ(dump(g), once);
  EXPECT_EQ(rep.rounds, 0);
  EXPECT_TRUE(rep.converged);
  EXPECT_EQ(rep.rules[0].applied, 0u);
}

// ---- the driver: ordering, rounds, threads, templates ---------------------------------

namespace {

RuleSet rules_of(const std::string& yaml) { return load_rules_from_string(yaml, "t.yaml"); }

// A seeded CNN-ish graph whose candidate matches overlap across several rules: full
// chains, chains whose conv or bias has a second consumer, swapped BiasAdds, ReLU
// stacks, residual Adds.
Graph random_graph(unsigned seed_value, int blocks) {
  std::mt19937 rng(seed_value);
  Graph g;
  std::vector<ValueRef> live{{g.add_input("x"), 0}};
  auto pick = [&] { return live[std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng)]; };
  for (int i = 0; i < blocks; ++i) {
    std::string p = std::to_string(i);
    p = "n" + p + "_";
    int kind = std::uniform_int_distribution<int>(0, 5)(rng);
    ValueRef in = pick();
    if (kind <= 1) {
      Chain c = add_chain(g, in, p);
      live.push_back({c.relu, 0});
      if (kind == 1) live.push_back({std::uniform_int_distribution<int>(0, 1)(rng) ? c.conv : c.bias, 0});
    } else if (kind == 2) {
      NodeId b = g.add_node(p + "b", op("Const"));
      NodeId ba = g.add_node(p + "bias", op("BiasAdd"), {{b, 0}, in});
      live.push_back({g.add_node(p + "relu", op("ReLU"), {{ba, 0}}), 0});
    } else if (kind == 3) {
      NodeId r = g.add_node(p + "r1", op("ReLU"), {in});
      r = g.add_node(p + "r2", op("ReLU"), {{r, 0}});
      live.push_back({g.add_node(p + "r3", op("ReLU"), {{r, 0}}), 0});
    } else if (kind == 4) {
      live.push_back({g.add_node(p + "add", op("Add"), {in, pick()}), 0});
    } else {
      NodeId b = g.add_node(p + "b", op("Const"));
      NodeId ba = g.add_node(p + "bias", op("BiasAdd"), {in, {b, 0}});
      live.push_back({g.add_node(p + "relu", op("ReLU"), {{ba, 0}}), 0});
    }
  }
  g.add_output(live.back());
  g.add_output(live[live.size() / 2]);
  return g;
}

const char* kOverlapping =
    "rules:\n"
    "  # ReLU(ReLU(x)) -> ReLU(x)\n"
    "  - name: relu_relu\n"
    "    pattern: |\n      r = ReLU(x)\n      ReLU(r)\n"
    "    rewrite: ReLU(x)\n"
    "  # ReLU(BiasAdd(y, b)) -> BiasRelu(y, b)\n"
    "  - name: bias_relu\n"
    "    pattern: |\n      ba = BiasAdd(y, b)\n      ReLU(ba)\n"
    "    rewrite: BiasRelu(y, b)\n"
    "  # ReLU(BiasAdd(Conv2D(x, w), b)) -> FusedConv2D_BiasAdd_ReLU(x, w, b)\n"
    "  - name: conv2d_biasadd_relu\n"
    "    benefit: 2\n"
    "    pattern: |\n      conv = Conv2D(x, w)\n      bias = BiasAdd(conv, b)\n      ReLU(bias)\n"
    "    rewrite: FusedConv2D_BiasAdd_ReLU(x, w, b) {...conv, activation = \"ReLU\"}\n";

}  // namespace

TEST(RewriteDriver, SameResultForAnyThreadCountAndWithoutWorklist) {
  RuleSet rs = rules_of(kOverlapping);
  Graph base = random_graph(7, 1500);  // > 4096 nodes: the parallel path runs
  ASSERT_GT(base.size(), 4096u);
  std::string expected;
  for (int threads : {1, 2, 8}) {
    for (bool incremental : {true, false}) {
      Graph g = base;
      RewriteOptions opt;
      opt.threads = threads;
      opt.incremental = incremental;
      RewriteReport rep = rewrite_graph(g, rs, opt);
      g.validate();
      EXPECT_TRUE(rep.converged);
      std::string got = dump(g);
      if (expected.empty()) expected = got;
      EXPECT_EQ(got, expected) << "threads " << threads << " incremental " << incremental;
      if (incremental && threads == 1) {
        ASSERT_GE(rep.per_round.size(), 2u);
        EXPECT_LT(rep.per_round.back().candidates * 10, rep.per_round.front().candidates);
      }
    }
  }
  EXPECT_NE(expected, dump(base));
}

TEST(RewriteDriver, BenefitThenRuleOrderThenPosition) {
  Graph g;
  NodeId x = g.add_input("x");
  add_chain(g, {x, 0}, "");
  Graph h = g;
  rewrite_graph(g, rules_of(kOverlapping));  // the conv rule has the higher benefit
  EXPECT_EQ(g.node(*g.find("relu")).op, op("FusedConv2D_BiasAdd_ReLU"));
  std::string same_benefit = kOverlapping;
  same_benefit.erase(same_benefit.find("    benefit: 2\n"), 15);
  rewrite_graph(h, rules_of(same_benefit));  // bias_relu comes first in the file
  EXPECT_EQ(h.node(*h.find("relu")).op, op("BiasRelu"));
  EXPECT_EQ(input_ids(h, "relu"), (std::vector<std::string>{"conv", "b"}));
}

TEST(RewriteDriver, OverlapsWithinARoundAreDeferred) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId r = x;
  for (const char* id : {"r1", "r2", "r3", "r4"}) r = g.add_node(id, op("ReLU"), {{r, 0}});
  g.add_output({r, 0});
  RewriteOptions opt;
  opt.only_rules = {"relu_relu"};
  RewriteReport rep = rewrite_graph(g, rules_of(kOverlapping), opt);
  EXPECT_EQ(dump(g), "x = Input() {}\nr4 = ReLU(x,) {_rule=\"relu_relu\",}\noutput r4\n");
  ASSERT_EQ(rep.rules.size(), 1u);
  EXPECT_EQ(rep.rules[0].applied, 3u);
  EXPECT_EQ(rep.rules[0].rejected_by(RejectReason::Conflict), 1u);  // r3's match lost to r2's
  EXPECT_EQ(rep.rounds, 2);
  opt.only_rules = {"nope"};
  EXPECT_THROW(rewrite_graph(g, rules_of(kOverlapping), opt), Error);
}

// Oscillation detection proper (from round 4 on) is in driver_test.cpp; this is the
// plain round bound, reached first here.
TEST(RewriteDriver, MaxRoundsStopsAndNamesTheRules) {
  RuleSet rs = rules_of(
      "rules:\n"
      "  - {name: a_to_b, pattern: \"A(x)\", rewrite: \"B(x)\"}\n"
      "  - {name: b_to_a, pattern: \"B(x)\", rewrite: \"A(x)\"}\n");
  Graph g;
  NodeId x = g.add_input("x");
  g.add_output({g.add_node("n", op("A"), {{x, 0}}), 0});
  RewriteOptions opt;
  opt.max_rounds = 3;
  try {
    rewrite_graph(g, rs, opt);
    FAIL() << "non-convergence not reported";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "error: no fixed point after 3 rounds; rules still firing: t.yaml:2 a_to_b, t.yaml:3 b_to_a");
  }
  opt.throw_on_nonconvergence = false;
  RewriteReport rep = rewrite_graph(g, rs, opt);
  EXPECT_FALSE(rep.converged);
  EXPECT_EQ(rep.stop, StopKind::MaxRounds);
  EXPECT_EQ(rep.rounds, 3);
  EXPECT_NE(rep.stop_reason.find("no fixed point"), std::string::npos);
}

TEST(RewriteDriver, SeveralNewNodesGetIdsFromTheRoot) {
  RuleSet rs = rules_of(
      "rules:\n"
      "  # Gelu(x) -> Tanh(Mul(x, x)) via a named node\n"
      "  - name: split\n"
      "    pattern: Gelu(x)\n"
      "    rewrite: |\n      t = Mul(x, x) {k = 1}\n      Tanh(Sq(t))\n");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId gelu = g.add_node("g", op("Gelu"), {{x, 0}});
  g.add_node("g/t", op("Other"), {{x, 0}});  // the natural id is taken
  g.add_output({gelu, 0});
  RewriteOptions opt;
  opt.trace = true;
  RewriteReport rep = rewrite_graph(g, rs, opt);
  g.validate();
  EXPECT_EQ(g.node(gelu).op, op("Tanh"));
  EXPECT_EQ(input_ids(g, "g"), std::vector<std::string>{"g/sq"});
  EXPECT_EQ(input_ids(g, "g/sq"), std::vector<std::string>{"g/t_2"});
  EXPECT_EQ(input_ids(g, "g/t_2"), (std::vector<std::string>{"x", "x"}));
  EXPECT_EQ(*g.node(*g.find("g/t_2")).attrs.get_if<std::string>("_rule"), "split");
  ASSERT_EQ(rep.trace.size(), 1u);
  EXPECT_EQ(rep.trace[0], "round 1: t.yaml:3 split at 'g': Tanh replaces Gelu; added g/t_2, g/sq");
}

TEST(RewriteDriver, EraseStyleRewrite) {
  RuleSet rs = rules_of("rules:\n  # Identity(x) -> x\n  - {name: drop_identity, pattern: \"Identity(x)\", rewrite: x}\n");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId i1 = g.add_node("i1", op("Identity"), {{x, 0}});
  NodeId i2 = g.add_node("i2", op("Identity"), {{i1, 0}});
  NodeId i3 = g.add_node("i3", op("Identity"), {{i2, 0}});
  NodeId t = g.add_node("t", op("Tanh"), {{i3, 0}});
  NodeId kept = g.add_node("kept", op("Identity"), {{t, 0}});
  g.add_output({kept, 0});
  RewriteOptions opt;
  opt.trace = true;
  RewriteReport rep = rewrite_graph(g, rs, opt);
  g.validate();
  // The Identity at the graph output goes too: Tanh's value takes over the output's name.
  EXPECT_EQ(dump(g), "x = Input() {}\nt = Tanh(x,) {}\noutput kept\n");
  EXPECT_EQ(g.value_name({t, 0}), "kept");
  EXPECT_EQ(rep.rules[0].applied, 4u);
  EXPECT_EQ(rep.rules[0].rejected_by(RejectReason::ErasedOutput), 0u);
  EXPECT_EQ(rep.trace[0], "round 1: t.yaml:3 drop_identity at 'i1': Identity erased, uses now read 'x'");
  ASSERT_EQ(rep.trace.size(), 4u);
  EXPECT_EQ(rep.trace[2], "round 1: t.yaml:3 drop_identity at 'kept': Identity erased, uses now read 't'; "
                          "'t' takes over output name 'kept'");
}

// Where the surviving value cannot take the output's name, the Identity stays
// (erased_output), each case for its own reason; graphfuse explain names it.
TEST(RewriteDriver, EraseAtOutputBlocked) {
  RuleSet rs = rules_of("rules:\n  # Identity(x) -> x\n  - {name: drop_identity, pattern: \"Identity(x)\", rewrite: x}\n");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId of_input = g.add_node("of_input", op("Identity"), {{x, 0}});
  NodeId t = g.add_node("t", op("Tanh"), {{x, 0}});
  NodeId of_output = g.add_node("of_output", op("Identity"), {{t, 0}});
  Attributes value;
  value.set("value", Tensor::from_floats({}, {2.0f}));
  NodeId k = g.add_node("k", op("Const"), {}, value);
  NodeId of_shared = g.add_node("of_shared", op("Identity"), {{k, 0}});
  NodeId reads_k = g.add_node("reads_k", op("Relu"), {{k, 0}});
  for (NodeId n : {of_input, t, of_output, of_shared, reads_k}) g.add_output({n, 0});
  const std::string before = dump(g);
  RewriteOptions opt;
  RewriteReport rep = rewrite_graph(g, rs, opt);
  EXPECT_EQ(dump(g), before);
  EXPECT_EQ(rep.rules[0].applied, 0u);
  EXPECT_EQ(rep.rules[0].rejected_by(RejectReason::ErasedOutput), 3u);
  const std::string why = explain_candidate(g, rs, "drop_identity", "of_input", opt) +
                          explain_candidate(g, rs, "drop_identity", "of_output", opt) +
                          explain_candidate(g, rs, "drop_identity", "of_shared", opt);
  EXPECT_NE(why.find("graph output 'of_input' would move onto 'x', a graph input, whose name must stay"), std::string::npos) << why;
  EXPECT_NE(why.find("graph output 'of_output' would move onto 't', already a graph output under its own name"), std::string::npos) << why;
  EXPECT_NE(why.find("graph output 'of_shared' would move onto the constant 'k', which nodes outside the match also read"), std::string::npos) << why;
}

// Two outputs over one double negation each: the first match moves its output name onto
// the shared value; the second, found in the same round, must not move a second name onto
// it (it waits for the next round, where legality refuses it).
TEST(RewriteDriver, EraseAtOutputOneNamePerValue) {
  RuleSet rs = rules_of("rules:\n  # Identity(x) -> x\n  - {name: drop_identity, pattern: \"Identity(x)\", rewrite: x}\n");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId t = g.add_node("t", op("Tanh"), {{x, 0}});
  NodeId a = g.add_node("a", op("Identity"), {{t, 0}});
  NodeId b = g.add_node("b", op("Identity"), {{t, 0}});
  g.add_output({a, 0});
  g.add_output({b, 0});
  RewriteReport rep = rewrite_graph(g, rs, RewriteOptions{});
  g.validate();
  EXPECT_EQ(dump(g), "x = Input() {}\nt = Tanh(x,) {}\nb = Identity(a,) {}\noutput a\noutput b\n");
  EXPECT_EQ(rep.rules[0].applied, 1u);
  EXPECT_EQ(rep.rules[0].rejected_by(RejectReason::ErasedOutput), 1u);
}

TEST(RewriteDriver, FewHundredNodeGraphTiming) {
  Graph g;
  ValueRef v{g.add_input("x"), 0};
  for (int i = 0; i < 100; ++i) {
    std::string prefix = std::to_string(i);  // (GCC 12 warns falsely on "c" + to_string(i))
    v = {add_chain(g, v, "c" + prefix + "_").relu, 0};
  }
  g.add_output(v);
  ASSERT_EQ(g.size(), 501u);
  auto t0 = std::chrono::steady_clock::now();
  RewriteReport rep = rewrite_graph(g, seed());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(rep.rules[0].applied, 100u);
  EXPECT_EQ(g.size(), 301u);
  RecordProperty("rewrite_ms", std::to_string(ms));
  std::cout << "[ timing   ] rewrite_graph on 501 nodes, 100 fusions: " << ms << " ms\n";
  EXPECT_LT(ms, 1000.0);
}

// The rewriter's template attribute cache (engine/rewrite/attr_cache.h): a cached set is
// the one building it would give, shared exactly as the Graph's interner shares it, and a
// changed source is never mistaken for the set it was.
namespace {

Attributes conv_attrs(const std::string& padding, bool with_tensor) {
  Attributes a;
  a.set("strides", std::vector<std::int64_t>{1, 1});
  a.set("padding", padding);
  // A set holding tensor data is never interned: every node keeps its own copy.
  if (with_tensor) a.set("hint", Tensor::from_floats({2}, {1.0f, 2.0f}));
  return a;
}

// Chain i: Conv2D (attributes by `kind`) -> BiasAdd -> ReLU, fused by the seed rule.
NodeId add_chain_of_kind(Graph& g, ValueRef x, int i, int kind) {
  std::string p = "c" + std::to_string(i) + "/";
  NodeId w = g.add_node(p + "w", op("Const"));
  NodeId b = g.add_node(p + "b", op("Const"));
  Attributes a = conv_attrs(kind == 1 ? "VALID" : "SAME", kind == 2);
  NodeId conv = g.add_node(p + "conv", op("Conv2D"), {x, {w, 0}}, a);
  NodeId bias = g.add_node(p + "bias", op("BiasAdd"), {{conv, 0}, {b, 0}});
  NodeId relu = g.add_node(p + "relu", op("ReLU"), {{bias, 0}});
  g.add_output({relu, 0});
  return relu;
}

// One chain of `kind` and what the cache sees of the seed rule's fused node over it: the
// embedding maps the register the template's attributes read to the chain's conv.
struct SeedTemplateOnOneChain {
  Graph g;
  NodeId conv;
  const Rule& rule = seed().rules().front();
  const match::RwNode& fused = rule.compiled->rewrite.nodes.front();
  match::Embedding e;

  explicit SeedTemplateOnOneChain(int kind) {
    NodeId x = g.add_input("x");
    add_chain_of_kind(g, {x, 0}, 0, kind);
    conv = *g.find("c0/conv");
    e.nodes.assign(fused.attrs.front().node + 1, conv);
  }
};

}  // namespace

TEST(TemplateAttrCache, FusedNodesGetTheSetsBuildingWouldGiveSharedAsInterned) {
  Graph g;
  NodeId x = g.add_input("x");
  std::vector<NodeId> relus;
  for (int i = 0; i < 30; ++i) relus.push_back(add_chain_of_kind(g, {x, 0}, i, i % 3));
  rewrite_graph(g, seed(), RewriteOptions{});
  for (int i = 0; i < 30; ++i) {
    const Node& n = g.node(relus[static_cast<std::size_t>(i)]);
    ASSERT_EQ(n.op, op("FusedConv2D_BiasAdd_ReLU"));
    Attributes want = conv_attrs(i % 3 == 1 ? "VALID" : "SAME", i % 3 == 2);
    want.set("activation", std::string("ReLU"));
    want.set("_rule", std::string("conv2d_biasadd_relu"));
    ASSERT_EQ(n.attrs, want) << i;
    // Internable sets: one canonical copy per distinct set. Tensor data: a copy each, as
    // without the cache (writers that key on identity see the same sharing).
    const Attributes& first = g.node(relus[static_cast<std::size_t>(i % 3)]).attrs;
    if (i % 3 == 2) {
      EXPECT_FALSE(n.attrs.canonical());
      if (i >= 3) {
        EXPECT_FALSE(n.attrs.shares_with(first)) << i;
      }
    } else {
      EXPECT_TRUE(n.attrs.canonical());
      EXPECT_TRUE(n.attrs.shares_with(first)) << i;
    }
  }
  g.validate();
}

TEST(TemplateAttrCache, AChangedSourceIsNotTheSetItWas) {
  SeedTemplateOnOneChain c(2);  // tensor data: the conv's set is its own
  auto& [g, conv, rule, fused, e] = c;
  // `{...conv, ...}`: the only register the template's attributes read is the conv's.
  ASSERT_EQ(fused.attrs.front().kind, match::RwAttr::Kind::Spread);

  using Cache = rewrite::TemplateAttrCache;
  Cache cache;
  Cache::Key before;
  ASSERT_TRUE(Cache::key_of(g, rule, fused, e, before));
  Cache::Sources sources;
  Cache::sources_of(g, fused, e, sources);
  // A canonical result is kept, with a copy of the conv's set.
  Attributes built;
  built.set("padding", std::string("SAME"));
  Graph holder;
  NodeId h = holder.add_node("h", op("Const"), {}, built);
  ASSERT_TRUE(holder.node(h).attrs.canonical());
  cache.remember(before, std::move(sources), holder.node(h).attrs);
  Attributes taken;
  ASSERT_TRUE(cache.take(before, taken));
  // Every copy handed out is the canonical set itself, however many the reserve made.
  for (int i = 0; i < 300; ++i) {
    Attributes again;
    ASSERT_TRUE(cache.take(before, again));
    ASSERT_TRUE(again.shares_with(holder.node(h).attrs)) << i;
  }
  EXPECT_TRUE(taken.shares_with(holder.node(h).attrs));
  // Changing the conv's attributes in place must give its set a new identity (the cache
  // holds the old one), so the old result is not found for it.
  g.attrs(conv).set("padding", std::string("VALID"));
  Cache::Key after;
  ASSERT_TRUE(Cache::key_of(g, rule, fused, e, after));
  EXPECT_FALSE(after == before);
  EXPECT_FALSE(cache.take(after, taken));
  EXPECT_TRUE(taken.shares_with(holder.node(h).attrs));  // a miss leaves `out` alone
}

TEST(TemplateAttrCache, ResultsThatAreNotCanonicalAreNotKept) {
  SeedTemplateOnOneChain c(0);
  auto& [g, conv, rule, fused, e] = c;
  using Cache = rewrite::TemplateAttrCache;
  Cache cache;
  Cache::Key key;
  ASSERT_TRUE(Cache::key_of(g, rule, fused, e, key));
  Cache::Sources sources;
  Cache::sources_of(g, fused, e, sources);
  cache.remember(key, std::move(sources), conv_attrs("SAME", true));  // a private copy: not canonical
  Attributes taken;
  EXPECT_FALSE(cache.take(key, taken));
}
