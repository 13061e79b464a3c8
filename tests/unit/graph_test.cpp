// Graph storage and mutation API.
#include <gtest/gtest.h>

#include "graphfuse/graph.h"

using namespace graphfuse;

namespace {
OpType op(const char* n) { return OpType::intern(n); }
}  // namespace

TEST(Graph, AddConsumersReplaceRemove) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId a = g.add_node("a", op("Relu"), {{x, 0}});
  NodeId b = g.add_node("b", op("Add"), {{a, 0}, {x, 0}});
  g.add_output({b, 0});
  EXPECT_EQ(g.consumers({x, 0}), (std::vector<Use>{{a, 0}, {b, 1}}));
  NodeId c = g.add_node("c", op("Tanh"), {{x, 0}});
  g.replace_all_uses({a, 0}, {c, 0});
  EXPECT_EQ(g.node(b).inputs[0], (ValueRef{c, 0}));
  EXPECT_EQ(g.use_count(a), 0u);
  g.remove_node(a);
  EXPECT_FALSE(g.alive(a));
  EXPECT_EQ(g.size(), 3u);
  EXPECT_FALSE(g.find("a"));
  g.validate();
  auto order = g.topological_order();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order.back(), b);
}

TEST(Graph, RejectsDuplicateIdAndCycle) {
  Graph g;
  NodeId x = g.add_input("x");
  EXPECT_THROW(g.add_node("x", op("Relu")), Error);
  NodeId a = g.add_node("a", op("Relu"), {{x, 0}});
  NodeId b = g.add_node("b", op("Relu"), {{a, 0}});
  g.set_input(a, 0, {b, 0});
  try {
    g.validate();
    FAIL() << "cycle not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos);
  }
}

TEST(Graph, CompactKeepsStructure) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId a = g.add_node("a", op("Relu"), {{x, 0}});
  NodeId b = g.add_node("b", op("Relu"), {{a, 0}});
  g.add_output({b, 0});
  NodeId c = g.add_node("c", op("Relu"), {{b, 0}});
  g.remove_node(c);
  g.compact();
  EXPECT_EQ(g.capacity(), 3u);
  EXPECT_EQ(g.node(*g.find("b")).inputs[0].node, *g.find("a"));
  g.validate();
}
