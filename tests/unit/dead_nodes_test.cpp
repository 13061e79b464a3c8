// After the fixed point, rewrite_and_fold merges the copies of one computation the rules made
// (graphfuse/merge_copies.h) and removes the nodes the rewrite left without a reader
// (graphfuse/dead_nodes.h); what the input itself held unread stays.
#include <gtest/gtest.h>

#include "graphfuse/folding.h"
#include "graphfuse/io.h"

namespace graphfuse {
namespace {

RewriteReport apply(Graph& g, const char* rules_yaml) {
  const RuleSet rules = load_rules_from_string(rules_yaml, "t.yaml");
  RewriteOptions opt;
  opt.threads = 1;
  return rewrite_and_fold(g, rules, opt, nullptr);
}

// A1(x) -> F(K(x)) and A2(x) -> G(K(x)): each rule adds its own helper K, with these
// attributes.
std::string helper_rules(const std::string& k1_attrs, const std::string& k2_attrs) {
  return "rules:\n"
         "  - name: a1\n    pattern: A1(x)\n    rewrite: F(K(x)" + k1_attrs + ")\n"
         "  - name: a2\n    pattern: A2(x)\n    rewrite: G(K(x)" + k2_attrs + ")\n";
}

// M's second input was a P -> Q chain on y; the rule drops it, so Q and then P lose their
// only reader and go. U(x) was unread in the input and stays; so does the input y.
TEST(DeadNodes, AChainARewriteLeftUnreadGoesTheInputsOwnStays) {
  Graph g = parse_graph_text("input x, y\np = P(y)\nq = Q(p)\nu = U(x)\nm = M(x, q)\noutput m\n");
  const RewriteReport r = apply(g, R"(
rules:
  - name: drop_q
    pattern: M(x, z)
    rewrite: N(x)
)");
  EXPECT_EQ(write_graph_text(g), "input x, y\nu = U(x)\nm = N(x) {_rule = \"drop_q\"}\noutput m\n");
  EXPECT_EQ(r.dead, (std::vector<std::string>{"q", "p"}));  // readers before what they read
  EXPECT_EQ(r.merged, 0u);
  EXPECT_EQ(r.nodes_after, g.size());
}

// Each rule writes its own K(x); the second copy is merged into the first and removed. The
// model's own two K(x) (graph outputs, not made by a rule) are left as they are.
TEST(DeadNodes, RuleMadeCopiesMergeTheModelsOwnDoNot) {
  Graph g = parse_graph_text("input x\na1 = A1(x)\na2 = A2(x)\nk1 = K(x)\nk2 = K(x)\noutput a1, a2, k1, k2\n");
  const RewriteReport r = apply(g, helper_rules("", "").c_str());
  EXPECT_EQ(r.merged, 1u);
  EXPECT_EQ(r.dead.size(), 1u);
  std::size_t k = 0;
  for (NodeId n : g.nodes()) k += g.op(n).local_name() == "K";
  EXPECT_EQ(k, 3u);  // k1, k2 and one rule-made K
  const std::string text = write_graph_text(g);
  EXPECT_NE(text.find("a1 = F(`a1/k`)"), std::string::npos) << text;
  EXPECT_NE(text.find("a2 = G(`a1/k`)"), std::string::npos) << text;
}

// Each rule writes its own literal: K(x, [3]) twice reads two Const nodes of one value,
// which are one constant, so the two K merge too; a literal of another value keeps its K.
TEST(DeadNodes, RuleMadeLiteralsOfOneValueMergeAndSoDoTheirReaders) {
  Graph g = parse_graph_text("input x\na1 = A1(x)\na2 = A2(x)\na3 = A3(x)\noutput a1, a2, a3\n");
  const RewriteReport r = apply(g, R"(
rules:
  - name: a1
    pattern: A1(x)
    rewrite: F(K(x, [3]))
  - name: a2
    pattern: A2(x)
    rewrite: G(K(x, [3]))
  - name: a3
    pattern: A3(x)
    rewrite: H(K(x, [4]))
)");
  EXPECT_EQ(r.merged, 2u);  // the second [3], then the second K(x, [3])
  std::size_t k = 0, consts = 0;
  for (NodeId n : g.nodes()) {
    k += g.op(n).local_name() == "K";
    consts += g.op(n).local_name() == "Const";
  }
  EXPECT_EQ(k, 2u);
  EXPECT_EQ(consts, 2u);
  const std::string text = write_graph_text(g);
  EXPECT_NE(text.find("a2 = G(`a1/k`)"), std::string::npos) << text;
}

// Copies that differ in an attribute compute different values and stay apart.
TEST(DeadNodes, CopiesWithDifferentAttributesStayApart) {
  Graph g = parse_graph_text("input x\na1 = A1(x)\na2 = A2(x)\noutput a1, a2\n");
  const RewriteReport r = apply(g, helper_rules(" {to = 1}", " {to = 2}").c_str());
  EXPECT_EQ(r.merged, 0u);
  EXPECT_TRUE(r.dead.empty());
}

// A rewrite that stops before the fixed point (max_rounds) leaves its graph alone: nothing is
// merged or removed from a partial result.
TEST(DeadNodes, NothingHappensWithoutAFixedPoint) {
  Graph g = parse_graph_text("input x, y\np = P(y)\nm = M(x, p)\noutput m\n");
  const RuleSet rules = load_rules_from_string(R"(
rules:
  - name: drop
    pattern: M(x, z)
    rewrite: M2(x)
  - name: again
    pattern: M2(x)
    rewrite: M3(x)
)",
                                               "t.yaml");
  RewriteOptions opt;
  opt.threads = 1;
  opt.max_rounds = 1;
  opt.throw_on_nonconvergence = false;
  const RewriteReport r = rewrite_and_fold(g, rules, opt, nullptr);
  ASSERT_FALSE(r.converged);
  EXPECT_TRUE(r.dead.empty());
  EXPECT_NE(write_graph_text(g).find("p = P(y)"), std::string::npos);
}

// A Loop/If body reads outer values by name, without an edge: P's value is named in the body
// of the (rule-kept) L node, so P stays though the rewrite took its only edge reader.
TEST(DeadNodes, AValueASubgraphBodyNamesStays) {
  Graph g = parse_graph_text("input x, y\np = P(y)\nm = M(x, p)\nl = L(x)\noutput m, l\n");
  Attributes body;
  body.set("body", Opaque{"onnx.GraphProto", std::string("\x0a\x01p", 3)});
  g.set_attrs(*g.find("l"), body);
  apply(g, R"(
rules:
  - name: drop
    pattern: M(x, z)
    rewrite: N(x)
)");
  EXPECT_TRUE(g.find("p").has_value());
}

}  // namespace
}  // namespace graphfuse
