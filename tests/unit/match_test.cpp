// The match VM: embeddings of compiled patterns, DAG sharing, constraints, backtracking.
#include <gtest/gtest.h>

#include "graphfuse/rules.h"
#include "match/program.h"
#include "match/vm.h"

using namespace graphfuse;
using match::Embedding;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

// A one-rule set around `pattern` (one line per statement); the rewrite is irrelevant here.
RuleSet compile(const std::string& pattern) {
  std::string body;
  std::size_t start = 0;
  while (start < pattern.size()) {
    std::size_t end = pattern.find('\n', start);
    if (end == std::string::npos) end = pattern.size();
    body += "      " + pattern.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return load_rules_from_string("rules:\n  - name: r\n    pattern: |\n" + body + "    rewrite: Matched()\n");
}

// Every embedding of the rule's pattern rooted at `root`, as node-id lists.
std::vector<std::vector<std::string>> embeddings(const match::MatchProgram& p, const Graph& g, NodeId root) {
  match::VmState st;
  std::vector<std::vector<std::string>> out;
  match::run_program(p, g, root, st, [&](const Embedding& e) {
    std::vector<std::string> ids;
    for (NodeId n : e.nodes) ids.push_back(g.node(n).id);
    out.push_back(ids);
    return true;
  });
  return out;
}

std::size_t count(const std::string& pattern, const Graph& g, const char* root) {
  RuleSet rs = compile(pattern);
  return embeddings(rs[0].compiled->match, g, *g.find(root)).size();
}

}  // namespace

TEST(MatchVm, ChainAndOperandOrder) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId w = g.add_node("w", op("Const"));
  NodeId b = g.add_node("b", op("Const"));
  NodeId conv = g.add_node("conv", op("Conv2D"), {{x, 0}, {w, 0}});
  NodeId bias = g.add_node("bias", op("BiasAdd"), {{conv, 0}, {b, 0}});
  g.add_node("relu", op("ReLU"), {{bias, 0}});
  NodeId swapped = g.add_node("swapped", op("BiasAdd"), {{b, 0}, {conv, 0}});
  g.add_node("relu2", op("ReLU"), {{swapped, 0}});
  RuleSet rs = compile("ReLU(BiasAdd(Conv2D(x, w), b))");
  const auto& p = rs[0].compiled->match;
  EXPECT_EQ(embeddings(p, g, *g.find("relu")), (std::vector<std::vector<std::string>>{{"relu", "bias", "conv"}}));
  EXPECT_TRUE(embeddings(p, g, *g.find("relu2")).empty());
  EXPECT_TRUE(embeddings(p, g, conv).empty());  // wrong root op
}

TEST(MatchVm, SharedNamesAreTheSameValue) {
  Graph g;
  NodeId a = g.add_input("a");
  NodeId c = g.add_input("c");
  NodeId m1 = g.add_node("m1", op("Mul"), {{a, 0}, {c, 0}});
  g.add_node("add1", op("Add"), {{a, 0}, {m1, 0}});
  NodeId m2 = g.add_node("m2", op("Mul"), {{c, 0}, {c, 0}});
  g.add_node("add2", op("Add"), {{a, 0}, {m2, 0}});
  EXPECT_EQ(count("Add(x, Mul(x, y))", g, "add1"), 1u);
  EXPECT_EQ(count("Add(x, Mul(x, y))", g, "add2"), 0u);
  EXPECT_EQ(count("Add(x, Mul(y, y))", g, "add2"), 1u);
  EXPECT_EQ(count("Add(x, Mul(y, y))", g, "add1"), 0u);
  EXPECT_EQ(count("Add(_, Mul(_, _))", g, "add1"), 1u);
}

TEST(MatchVm, DistinctPatternNodesNeedDistinctGraphNodes) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId r = g.add_node("r", op("Relu"), {{x, 0}});
  NodeId s = g.add_node("s", op("Relu"), {{x, 0}});
  g.add_node("same", op("Add"), {{r, 0}, {r, 0}});
  g.add_node("diff", op("Add"), {{r, 0}, {s, 0}});
  RuleSet rs = compile("a = Relu(x)\nb = Relu(x)\nAdd(a, b)");
  const auto& p = rs[0].compiled->match;
  EXPECT_TRUE(embeddings(p, g, *g.find("same")).empty());
  EXPECT_EQ(embeddings(p, g, *g.find("diff")).size(), 1u);
  // One pattern node used twice does match Add(r, r).
  EXPECT_EQ(count("Add(Relu(x), y)", g, "same"), 1u);
}

TEST(MatchVm, AttributeConstraints) {
  Graph g;
  NodeId x = g.add_input("x");
  Attributes a1;
  a1.set("padding", std::string("SAME"));
  a1.set("k", std::int64_t{3});
  a1.set("strides", std::vector<std::int64_t>{1, 1});
  NodeId c1 = g.add_node("c1", op("Conv"), {{x, 0}}, a1);
  Attributes a2;
  a2.set("padding", std::string("VALID"));
  a2.set("k", std::int64_t{1});
  a2.set("group", std::int64_t{2});
  a2.set("strides", std::vector<std::int64_t>{1, 1});
  NodeId c2 = g.add_node("c2", op("Conv"), {{c1, 0}}, a2);
  g.add_node("r", op("Relu"), {{c2, 0}});
  (void)c2;
  EXPECT_EQ(count("Conv(x) {padding = \"SAME\"}", g, "c1"), 1u);
  EXPECT_EQ(count("Conv(x) {padding = \"SAME\"}", g, "c2"), 0u);
  EXPECT_EQ(count("Conv(x) {k > 2}", g, "c1"), 1u);
  EXPECT_EQ(count("Conv(x) {k > 2}", g, "c2"), 0u);
  EXPECT_EQ(count("Conv(x) {k in [1, 2]}", g, "c2"), 1u);
  EXPECT_EQ(count("Conv(x) {k != 3}", g, "c1"), 0u);
  EXPECT_EQ(count("Conv(x) {!group}", g, "c1"), 1u);
  EXPECT_EQ(count("Conv(x) {!group}", g, "c2"), 0u);
  EXPECT_EQ(count("Conv(x) {strides = [1.0, 1.0]}", g, "c1"), 1u);  // numeric, not by kind
  EXPECT_EQ(count("Conv(x) {missing = 1}", g, "c1"), 0u);
  RuleSet cross = compile("a = Conv(x)\nb = Conv(a) {strides = a.strides}\nRelu(b)");
  EXPECT_EQ(embeddings(cross[0].compiled->match, g, *g.find("r")).size(), 1u);
}

TEST(MatchVm, OpAlternativesAndAnyOp) {
  Graph g;
  NodeId x = g.add_input("x");
  g.add_node("s", op("Sigmoid"), {{x, 0}});
  g.add_node("t", op("Tanh"), {{x, 0}});
  EXPECT_EQ(count("Relu|Sigmoid(x)", g, "s"), 1u);
  EXPECT_EQ(count("Relu|Sigmoid(x)", g, "t"), 0u);
  EXPECT_EQ(count("*(x)", g, "t"), 1u);
  EXPECT_EQ(count("*(x, y)", g, "t"), 0u);  // arity is exact
}

TEST(MatchVm, ForkEnumeratesAlternatives) {
  // A hand-built program (the compiler's own forks come from commutative ops, tested in
  // lang_match_test.cpp): Add(x, Relu(y)) with both operand orders.
  Graph g;
  NodeId a = g.add_input("a");
  NodeId r1 = g.add_node("r1", op("Relu"), {{a, 0}});
  NodeId r2 = g.add_node("r2", op("Relu"), {{a, 0}});
  NodeId add = g.add_node("add", op("Add"), {{r1, 0}, {r2, 0}});
  using match::Instr;
  using match::Opcode;
  match::MatchProgram p;
  p.op_sets = {{op("Add")}, {op("Relu")}};
  p.forks = {{2, 5}};
  p.num_node_regs = 2;
  p.num_value_regs = 2;
  p.code = {
      Instr{Opcode::CheckOp, 0, 0, 0, 0, {}},     // 0
      Instr{Opcode::Fork, 0, 0, 0, 0, {}},        // 1
      Instr{Opcode::LoadInput, 0, 0, 0, 0, {}},   // 2: x = in0, v1 = in1
      Instr{Opcode::LoadInput, 0, 1, 1, 0, {}},   // 3
      Instr{Opcode::Jump, 0, 0, 0, 8, {}},        // 4
      Instr{Opcode::LoadInput, 0, 1, 0, 0, {}},   // 5: x = in1, v1 = in0
      Instr{Opcode::LoadInput, 0, 0, 1, 0, {}},   // 6
      Instr{Opcode::Jump, 0, 0, 0, 8, {}},        // 7
      Instr{Opcode::Producer, 1, 0, 1, 0, {}},    // 8: v1 from a Relu -> node reg 1
      Instr{Opcode::CheckOp, 1, 0, 0, 1, {}},     // 9
      Instr{Opcode::Accept, 0, 0, 0, 0, {}},      // 10
  };
  EXPECT_EQ(embeddings(p, g, add), (std::vector<std::vector<std::string>>{{"add", "r2"}, {"add", "r1"}}));
  // Stopping at the first embedding.
  match::VmState st;
  std::size_t n = match::run_program(p, g, add, st, [](const Embedding&) { return false; });
  EXPECT_EQ(n, 1u);
  (void)r1;
  (void)r2;
}

TEST(MatchVm, FurthestFailureIsRecorded) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId c = g.add_node("c", op("Conv2D"), {{x, 0}, {x, 0}});
  NodeId b = g.add_node("b", op("Add"), {{c, 0}, {x, 0}});  // Add, not BiasAdd
  NodeId r = g.add_node("r", op("ReLU"), {{b, 0}});
  RuleSet rs = compile("ReLU(BiasAdd(Conv2D(x, w), b))");
  const auto& p = rs[0].compiled->match;
  match::VmState st;
  EXPECT_EQ(match::run_program(p, g, r, st, [](const Embedding&) { return true; }), 0u);
  const match::Instr& failed = p.code[st.furthest_fail];
  EXPECT_EQ(failed.op, match::Opcode::CheckOp);
  EXPECT_EQ(failed.pos.column, 6);  // the BiasAdd call
}
