// The Rewriter tells its listener of every mutation as it happens: what the driver's
// marks, worklist and op presence rely on to see a rewrite's effects (ApplyListener).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/storage.h"
#include "graphfuse/io.h"
#include "graphfuse/rules.h"
#include "match/matcher.h"
#include "rewrite/rewriter.h"

namespace graphfuse {
namespace {

// Every event, as "kind id" lines, in the order heard.
class Recorder final : public rewrite::RewriteListener {
 public:
  explicit Recorder(const Graph& g) : g_(g) {}
  void node_created(NodeId n) override { add("created", n); }
  void node_replaced(NodeId n, bool constant) override { add(constant ? "replaced-const" : "replaced", n); }
  void inputs_changed(NodeId n) override { add("inputs", n); }
  void uses_changed(NodeId n) override { add("uses", n); }
  void node_erased(NodeId n) override { events.push_back("erased " + std::to_string(n)); }
  void output_moved(NodeId n) override { add("output", n); }
  std::vector<std::string> events;

 private:
  void add(const char* kind, NodeId n) { events.push_back(std::string(kind) + " " + g_.node(n).id); }
  const Graph& g_;
};

// Applies the first match of `rules`' first rule to `graph`, heard by a Recorder.
std::vector<std::string> events_of(const char* rules, const char* graph) {
  RuleSet rs = load_rules_from_string(rules, "listener.yaml");
  Graph g = parse_graph_text(graph, "listener.graph");
  std::vector<NodeId> all;
  for (NodeId n = 0; n < g.capacity(); ++n)
    if (records::alive(g, n)) all.push_back(n);
  match::MatchResults mr = match::find_matches(g, rs, std::vector<char>(rs.size(), 1), all,
                                               [](std::uint32_t, const match::Embedding&) { return -1; }, nullptr);
  EXPECT_EQ(mr.found.size(), 1u);
  match::Embedding e;
  mr.load(mr.found.at(0), e);
  Recorder rec(g);
  rewrite::Rewriter rw(g, &rec);
  rewrite::apply_rewrite(rw, rs.rules()[mr.found[0].rule], e, nullptr);
  g.validate();
  return rec.events;
}

TEST(RewriteListener, HearsATakeoverFusionAsItHappens) {
  // The Relu root is taken over in place by the fused node; its inputs move from the
  // BiasAdd to x, w, b; then the BiasAdd and the Conv2D are removed.
  auto ev = events_of(R"(
rules:
  - name: fuse
    pattern: |
      conv = Conv2D(x, w)
      bias = BiasAdd(conv, b)
      Relu(bias)
    rewrite: |
      Fused(x, w, b)
)",
                      R"(
input x
w = Const()
b = Const()
conv = Conv2D(x, w)
bias = BiasAdd(conv, b)
relu = Relu(bias)
out = Softmax(relu)
output out
)");
  const std::vector<std::string> want = {
      "uses bias",      // the root's old input loses a consumer
      "uses x", "uses w", "uses b",  // its new inputs gain one
      "replaced relu",  // the takeover
      "uses conv",      // erasing the BiasAdd: its input conv loses its consumer
  };
  ASSERT_GE(ev.size(), want.size() + 2);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ev[i], want[i]) << "event " << i;
  // Then the two erasures, conv's inputs losing their consumer in between.
  std::size_t erased = 0;
  for (const std::string& e : ev) erased += e.rfind("erased ", 0) == 0;
  EXPECT_EQ(erased, 2u);
}

TEST(RewriteListener, HearsRewiredConsumersAndTheErasure) {
  // An erase-style rewrite: the root is replaced by a value it read, so its consumers are
  // rewired (heard before the rewiring) and it is removed.
  auto ev = events_of(R"(
rules:
  - name: drop
    pattern: |
      Identity(x)
    rewrite: |
      x
)",
                      R"(
input x
id = Identity(x)
a = Tanh(id)
b = Exp(id)
output a, b
)");
  const std::vector<std::string> want = {"inputs a", "inputs b", "uses id", "uses x", "uses x", "erased 1"};
  EXPECT_EQ(ev, want);
}

TEST(RewriteListener, NobodyListeningChangesNothing) {
  // A Rewriter without a listener mutates the same way.
  RuleSet rs = load_rules_from_string("rules:\n  - name: r\n    pattern: Relu(Relu(x))\n    rewrite: Relu(x)\n", "r.yaml");
  Graph g = parse_graph_text("input x\na = Relu(x)\nb = Relu(a)\noutput b\n", "r.graph");
  std::vector<NodeId> all;
  for (NodeId n = 0; n < g.capacity(); ++n)
    if (records::alive(g, n)) all.push_back(n);
  auto mr = match::find_matches(g, rs, std::vector<char>(rs.size(), 1), all,
                                [](std::uint32_t, const match::Embedding&) { return -1; }, nullptr);
  ASSERT_EQ(mr.found.size(), 1u);
  match::Embedding e;
  mr.load(mr.found[0], e);
  rewrite::Rewriter rw(g);
  rewrite::apply_rewrite(rw, rs.rules()[0], e, nullptr);
  g.validate();
  EXPECT_EQ(g.size(), 2u);  // the input x and one Relu
}

}  // namespace
}  // namespace graphfuse
