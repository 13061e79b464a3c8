// Multi-root rules under the incremental worklist: a constraint on a value only a later
// root reads (`const(v)` below, v read by q only) may start to hold in a later round
// through a change that reaches the later root but not the first root, its anchor. The
// worklist must then look at the first root again, or incremental matching would stop
// short of what matching every node reaches.
#include <gtest/gtest.h>

#include <string>

#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

using namespace graphfuse;

namespace {

// `pair` is anchored at the k=1 Conv only (the k=2 one can only be q), and needs q's own
// filter to be a constant. `drop_id` rewires its consumer to its input; `fold` is
// replaced in place (its node is taken over, so its consumer is not rewired).
const char* kRules =
    "rules:\n"
    "  # Conv(x, w) {k=1}, Conv(x, v) {k=2} -> Split(Fused(x, w, v)) when v is constant\n"
    "  - name: pair\n"
    "    pattern: |\n"
    "      p = Conv(x, w) {k = 1}\n"
    "      q = Conv(x, v) {k = 2}\n"
    "      p, q\n"
    "    where: const(v)\n"
    "    rewrite: |\n"
    "      f = Fused(x, w, v)\n"
    "      a, b = Split(f)\n"
    "      a, b\n"
    "  # Id(y) -> y\n"
    "  - {name: drop_id, pattern: \"Id(y)\", rewrite: y}\n"
    "  # Fold(y) -> Const\n"
    "  - name: fold\n"
    "    pattern: Fold(y)\n"
    "    rewrite: \"Const() {value = tensor(float32, [1], [2.0])}\"\n";

// q's filter becomes a constant only after round 1, by `op` (Id or Fold) over a constant.
std::string graph_text(const std::string& op) {
  return "input x\n"
         "w1 = Const() {value = tensor(float32, [1], [1.0])}\n"
         "k = Const() {value = tensor(float32, [1], [3.0])}\n"
         "w2 = " + op + "(k)\n"
         "c1 = Conv(x, w1) {k = 1}\n"
         "c2 = Conv(x, w2) {k = 2}\n"
         "r1 = Relu(c1)\n"
         "r2 = Tanh(c2)\n"
         "output r1, r2\n";
}

std::string rewritten(const std::string& text, bool incremental, int threads) {
  RuleSet rs = load_rules_from_string(kRules, "multiroot.yaml");
  Graph g = parse_graph_text(text);
  RewriteOptions opt;
  opt.incremental = incremental;
  opt.threads = threads;
  RewriteReport rep = rewrite_graph(g, rs, opt);
  EXPECT_TRUE(rep.converged);
  return write_graph_text(g);
}

}  // namespace

// Id: round 1 rewires c2 to k (c2 is touched, c1 is not: nothing upstream of c1 changed).
// Fold: round 1 replaces w2's node in place (w2 is touched; c2 and c1 are not). Either
// way `pair` holds from round 2 on, anchored at c1, which only the sibling rule of the
// worklist puts back among the candidates.
TEST(MultiRootIncremental, LaterRootsOwnLeafChangingFiresThePairAsAFullPassDoes) {
  for (const std::string op : {"Id", "Fold"}) {
    SCOPED_TRACE(op);
    std::string text = graph_text(op);
    std::string full = rewritten(text, false, 1);
    ASSERT_NE(full.find("Fused("), std::string::npos) << full;  // the case tests something
    EXPECT_EQ(full.find("Conv("), std::string::npos) << full;
    for (int threads : {1, 2}) {
      EXPECT_EQ(rewritten(text, true, threads), full) << threads;
      EXPECT_EQ(rewritten(text, false, threads), full) << threads;
    }
  }
}

// The constraint still decides: a filter that never becomes constant leaves both alone,
// incremental or not.
TEST(MultiRootIncremental, PairStaysApartWhileTheLaterRootsLeafIsNotConstant) {
  std::string text = graph_text("Tanh");
  std::string full = rewritten(text, false, 1);
  EXPECT_EQ(full.find("Fused("), std::string::npos) << full;
  EXPECT_EQ(rewritten(text, true, 1), full);
  EXPECT_EQ(rewritten(text, true, 2), full);
}

// Many independent pairs, only some of which become legal in round 2, with the graph
// large enough for the round-2 frontier to be expanded by several threads: the same
// graph for 1, 2 and 8 threads, incremental or not.
TEST(MultiRootIncremental, ManyPairsSameResultForAnyThreadCount) {
  std::string text = "input x\n";
  std::string outs;
  for (int i = 0; i < 3000; ++i) {
    std::string s = std::to_string(i);
    const char* op = i % 3 == 0 ? "Id" : i % 3 == 1 ? "Fold" : "Tanh";
    text += "x" + s + " = Relu(x)\n";
    text += "w1_" + s + " = Const() {value = tensor(float32, [1], [1.0])}\n";
    text += "k" + s + " = Const() {value = tensor(float32, [1], [3.0])}\n";
    text += "w2_" + s + " = " + op + "(k" + s + ")\n";
    text += "c1_" + s + " = Conv(x" + s + ", w1_" + s + ") {k = 1}\n";
    text += "c2_" + s + " = Conv(x" + s + ", w2_" + s + ") {k = 2}\n";
    text += "r1_" + s + " = Relu(c1_" + s + ")\nr2_" + s + " = Tanh(c2_" + s + ")\n";
    outs += (outs.empty() ? "" : ", ") + ("r1_" + s) + ", r2_" + s;
  }
  text += "output " + outs + "\n";
  auto fused = [](const std::string& g) {
    std::size_t n = 0;
    for (std::size_t at = g.find("Fused("); at != std::string::npos; at = g.find("Fused(", at + 1)) ++n;
    return n;
  };
  std::string full = rewritten(text, false, 1);
  EXPECT_EQ(fused(full), 2000u);
  for (int threads : {1, 2, 8}) {
    std::string got = rewritten(text, true, threads);
    EXPECT_EQ(fused(got), 2000u) << threads;
    EXPECT_TRUE(got == full) << threads;  // (not EXPECT_EQ: the graphs are 27000 lines)
  }
}
