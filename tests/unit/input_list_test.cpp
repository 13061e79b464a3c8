// InputList, the node's input list: vector behaviour, inline up to three inputs, and the
// graph's loaders and rewrites keeping short lists inline (no heap block per node).
#include <gtest/gtest.h>

#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/io.h"
#include "graphfuse/rules.h"
#include "graphfuse/rewrite.h"

using namespace graphfuse;

namespace {
ValueRef v(NodeId n, std::uint32_t p = 0) { return ValueRef{n, p}; }
std::vector<ValueRef> refs(std::initializer_list<NodeId> ns) {
  std::vector<ValueRef> out;
  for (NodeId n : ns) out.push_back(v(n));
  return out;
}
}  // namespace

TEST(InputList, BehavesLikeAVector) {
  InputList l;
  std::vector<ValueRef> ref;
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(sizeof(InputList), 32u);
  for (NodeId n = 0; n < 9; ++n) {
    l.push_back(v(n, n % 2));
    ref.push_back(v(n, n % 2));
    EXPECT_EQ(l, ref) << n;
    EXPECT_EQ(l.is_inline(), n < InputList::kInline) << n;
  }
  EXPECT_EQ(std::vector<ValueRef>(l), ref);
  l.insert(l.begin() + 1, v(100));
  ref.insert(ref.begin() + 1, v(100));
  EXPECT_EQ(l, ref);
  l.erase(l.begin() + 2, l.begin() + 5);
  ref.erase(ref.begin() + 2, ref.begin() + 5);
  EXPECT_EQ(l, ref);
  l.resize(2);
  ref.resize(2);
  EXPECT_EQ(l, ref);
  l.resize(4, v(7, 1));
  ref.resize(4, v(7, 1));
  EXPECT_EQ(l, ref);
  EXPECT_EQ(l.at(3), v(7, 1));
  EXPECT_THROW(l.at(4), std::out_of_range);
  l.shrink_to_fit();
  EXPECT_FALSE(l.is_inline());  // four do not fit
  l.pop_back();
  l.shrink_to_fit();
  EXPECT_TRUE(l.is_inline());
  EXPECT_EQ(l, InputList(ref.begin(), ref.begin() + 3));
  EXPECT_EQ(InputList(3), InputList({ValueRef{}, ValueRef{}, ValueRef{}}));
  EXPECT_LT(InputList({v(1), v(2)}), InputList({v(1), v(3)}));
}

TEST(InputList, CopiesAndMovesKeepTheElements) {
  for (std::size_t n : {0u, 1u, 3u, 4u, 11u}) {
    std::vector<ValueRef> ref;
    for (std::size_t k = 0; k < n; ++k) ref.push_back(v(static_cast<NodeId>(k * 7), 1));
    InputList a(ref);
    InputList b(a);
    EXPECT_EQ(b, ref);
    InputList c(std::move(a));
    EXPECT_EQ(c, ref);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is part of the contract
    InputList d = {v(1), v(2), v(3), v(4), v(5)};
    d = c;
    EXPECT_EQ(d, ref);
    InputList e = {v(9)};
    e = std::move(d);
    EXPECT_EQ(e, ref);
    e.swap(b);
    EXPECT_EQ(e, ref);
    EXPECT_EQ(b, ref);
    a.push_back(v(42));  // a moved-from list is usable
    EXPECT_EQ(a, refs({42}));
  }
}

// The memory figures rest on this: a node with up to three inputs owns no heap block,
// whether it was read from a file (JSON, .gfb) or made by a rewrite.
TEST(InputList, GraphsKeepShortListsInTheRecord) {
  Graph built;
  NodeId x = built.add_input("x");
  NodeId w = built.add_node("w", OpType::intern("Const"));
  NodeId b = built.add_node("b", OpType::intern("Const"));
  NodeId c = built.add_node("c", OpType::intern("Conv2D"), {v(x), v(w)});
  NodeId a = built.add_node("a", OpType::intern("BiasAdd"), {v(c), v(b)});
  NodeId r = built.add_node("r", OpType::intern("ReLU"), {v(a)});
  NodeId s = built.add_node("s", OpType::intern("Concat"), {v(r), v(x), v(w), v(b)});
  built.add_output(v(s));
  for (Graph g : {parse_graph_yaml(write_graph_json(built), "g.json"),
                  parse_graph_binary(write_graph_binary(built), "g.gfb")}) {
    g.for_each_node([&](NodeId n) {
      const Node& nd = g.node(n);
      EXPECT_EQ(nd.inputs.is_inline(), nd.inputs.size() <= InputList::kInline) << nd.id;
    });
    RuleSet rules = load_rules_from_string(R"yaml(rules:
  - name: cbr
    pattern: |
      conv = Conv2D(x, w)
      bias = BiasAdd(conv, b)
      ReLU(bias)
    rewrite: FusedConv2D_BiasAdd_ReLU(x, w, b)
)yaml");
    RewriteReport report = rewrite_graph(g, rules);
    ASSERT_EQ(report.rules.at(0).applied, 1u);
    const Node& fused = g.node(*g.find("r"));
    EXPECT_EQ(fused.op.name(), "FusedConv2D_BiasAdd_ReLU");
    EXPECT_EQ(fused.inputs, refs({x, w, b}));
    EXPECT_TRUE(fused.inputs.is_inline());
  }
}
