// The engine's rewrite-and-fold loop (graphfuse/folding.h): a Folder runs between rewrite
// passes, and the one report sums every pass, the cost model's statistics included.
#include "graphfuse/folding.h"

#include <gtest/gtest.h>

#include "graphfuse/io.h"

namespace graphfuse {
namespace {

const char* kRules = R"(
rules:
  - name: r_ab
    pattern: A(x)
    rewrite: B(x)
  - name: r_cd
    pattern: C(x)
    rewrite: D(x)
)";

// A cost model stand-in: r_ab pays 1.0 a rewrite, r_cd never pays.
class TestGate : public RewriteGate {
 public:
  GateVerdict decide(const Graph&, const GateCandidate& c) const override {
    if (c.rule.name == "r_cd") return GateVerdict{false, 0.0, "no_gain", "never pays"};
    return GateVerdict{true, 1.0, "", "saves 1"};
  }
};

// Its first call "folds" by adding a fresh A and C reading x, both graph outputs (what a
// fold that exposes new candidates does; unread, the sweep after the fold would remove
// them); later calls change nothing.
class OneShotFolder : public Folder {
 public:
  int calls = 0;
  FoldReport fold(Graph& g) override {
    FoldReport r;
    if (calls++ == 0) {
      const NodeId x = g.inputs().at(0);
      g.add_output({g.add_node("a2", OpType::intern("A"), {{x, 0}}), 0});
      g.add_output({g.add_node("c2", OpType::intern("C"), {{x, 0}}), 0});
      r.folded.push_back({"a2", "A"});
    }
    return r;
  }
};

Graph start() {
  return parse_graph_text("input x\na = A(x)\nc = C(x)\noutput a, c\n");
}

TEST(RewriteAndFold, CostStatisticsSurviveEveryPass) {
  const RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  RewriteOptions opt;
  opt.gate = std::make_shared<TestGate>();
  opt.threads = 1;

  Graph once = start();
  const RewriteReport first = rewrite_graph(once, rules, opt);
  ASSERT_EQ(first.rules.size(), 2u);
  ASSERT_EQ(first.rules[1].declined.size(), 1u);
  const std::size_t declined_once = first.rules[1].declined[0].second;

  Graph g = start();
  OneShotFolder folder;
  const RewriteReport r = rewrite_and_fold(g, rules, opt, &folder);
  EXPECT_EQ(folder.calls, 2);  // after pass 1 (changed), after pass 2 (nothing)
  EXPECT_TRUE(r.converged);
  EXPECT_TRUE(r.gated);
  EXPECT_EQ(r.rules[0].applied, 2u);          // a, then a2 in the second pass
  EXPECT_DOUBLE_EQ(r.rules[0].saving, 2.0);    // both passes' savings
  ASSERT_EQ(r.rules[1].declined.size(), 1u);
  EXPECT_EQ(r.rules[1].declined[0].first, "no_gain");
  EXPECT_GT(r.rules[1].declined[0].second, declined_once);  // c2's decline, from pass 2
  ASSERT_EQ(r.fold.folded.size(), 1u);
  EXPECT_EQ(r.fold.folded[0].node, "a2");
  EXPECT_EQ(r.nodes_after, g.size());
}

TEST(RewriteAndFold, WithoutAFolderItIsOneRewrite) {
  const RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  Graph a = start(), b = start();
  const RewriteReport x = rewrite_and_fold(a, rules, {}, nullptr);
  const RewriteReport y = rewrite_graph(b, rules, {});
  EXPECT_EQ(write_graph_text(a), write_graph_text(b));
  EXPECT_EQ(x.rules[0].applied, y.rules[0].applied);
  EXPECT_TRUE(x.fold.folded.empty());
}

}  // namespace
}  // namespace graphfuse
