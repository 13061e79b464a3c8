// The seed fusion end to end through rewrite_graph: legality, rewiring, rounds, threads.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <sstream>

#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

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
