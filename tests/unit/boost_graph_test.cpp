// graphfuse::Graph as a Boost.Graph graph (graphfuse/boost_graph.h): the concepts hold, the
// edges are the graph's used input slots, and Boost's algorithms run on the live graph.
#include "graphfuse/boost_graph.h"

#include <gtest/gtest.h>

#include <boost/graph/graph_concepts.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <map>
#include <vector>

#include "graphfuse/generate.h"

namespace graphfuse {
namespace {

BOOST_CONCEPT_ASSERT((boost::VertexListGraphConcept<Graph>));
BOOST_CONCEPT_ASSERT((boost::EdgeListGraphConcept<Graph>));
BOOST_CONCEPT_ASSERT((boost::IncidenceGraphConcept<Graph>));
BOOST_CONCEPT_ASSERT((boost::BidirectionalGraphConcept<Graph>));
BOOST_CONCEPT_ASSERT((boost::AdjacencyMatrixConcept<Graph>));
BOOST_CONCEPT_ASSERT((boost::ReadablePropertyMapConcept<boost_adapter::OpTypeMap, NodeId>));

OpType op(const char* name) { return OpType::intern(name); }

TEST(BoostGraph, EdgesAreTheUsedInputSlots) {
  Graph g = generate_cnn_graph(GenerateOptions{2000, 5, true});
  NodeId extra = g.add_node("extra", op("Relu"), {{g.inputs()[0], 0}});
  g.remove_node(extra);  // a dead slot: an isolated vertex
  EXPECT_EQ(num_vertices(g), g.capacity());
  EXPECT_EQ(in_degree(extra, g), 0u);
  EXPECT_EQ(out_degree(extra, g), 0u);
  std::size_t used = 0;
  for (NodeId n : g.nodes()) {
    for (ValueRef v : g.node(n).inputs) used += v.valid();
    EXPECT_EQ(get(op_type_map(g), n), g.node(n).op);
    EXPECT_EQ(out_degree(n, g), g.uses(n).size());
    for (auto [it, end] = in_edges(n, g); it != end; ++it) {
      const GraphEdge e = *it;
      EXPECT_EQ(target(e, g), n);
      const ValueRef v = g.node(n).inputs[get(edge_slot_map(g), e)];
      EXPECT_EQ(source(e, g), v.node);
      EXPECT_EQ(get(edge_port_map(g), e), v.port);
    }
    // Out-edges follow the use list, in its order.
    auto [o, oend] = out_edges(n, g);
    for (Use u : g.uses(n)) {
      ASSERT_NE(o, oend);
      EXPECT_EQ(target(*o, g), u.node);
      EXPECT_EQ((*o).slot, u.slot);
      ++o;
    }
    EXPECT_EQ(o, oend);
  }
  EXPECT_EQ(num_edges(g), used);
  std::size_t listed = 0;
  for (auto [it, end] = edges(g); it != end; ++it) ++listed;
  EXPECT_EQ(listed, used);
}

TEST(BoostGraph, ParallelEdgesForAValueReadTwice) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId sq = g.add_node("sq", op("Mul"), {{x, 0}, {x, 0}});
  EXPECT_EQ(in_degree(sq, g), 2u);
  EXPECT_EQ(out_degree(x, g), 2u);
  auto [e, found] = edge(x, sq, g);
  ASSERT_TRUE(found);
  EXPECT_EQ(e.slot, 0u);
  EXPECT_FALSE(edge(sq, x, g).second);
}

// topological_sort on the live graph agrees with Graph's own order: every producer comes
// before its consumers; strong_components finds no cycle (every component one vertex).
TEST(BoostGraph, TopologicalSortAndStrongComponentsRunOnTheLiveGraph) {
  Graph g = generate_cnn_graph(GenerateOptions{5000, 3, true});
  g.remove_node(g.add_node("gone", op("Relu"), {{g.inputs()[0], 0}}));
  std::vector<NodeId> order;
  boost::topological_sort(g, std::back_inserter(order),
                          boost::vertex_index_map(get(boost::vertex_index, g)));
  ASSERT_EQ(order.size(), g.capacity());
  std::vector<std::size_t> at(g.capacity());
  // topological_sort emits in reverse topological order.
  for (std::size_t i = 0; i < order.size(); ++i) at[order[i]] = order.size() - i;
  for (NodeId n : g.nodes())
    for (ValueRef v : g.node(n).inputs)
      if (v.valid()) {
        EXPECT_LT(at[v.node], at[n]);
      }
  std::vector<std::size_t> comp(g.capacity());
  const std::size_t count = boost::strong_components(
      g, boost::make_iterator_property_map(comp.begin(), get(boost::vertex_index, g)));
  EXPECT_EQ(count, g.capacity());
}

// A cycle (which Graph::validate rejects) is what strong_components reports as one
// component: the adapter shows the graph as it is.
TEST(BoostGraph, StrongComponentsSeeACycle) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId a = g.add_node("a", op("Add"), {{x, 0}, {x, 0}});
  NodeId b = g.add_node("b", op("Relu"), {{a, 0}});
  g.set_input(a, 1, {b, 0});
  std::vector<std::size_t> comp(g.capacity());
  const std::size_t count = boost::strong_components(
      g, boost::make_iterator_property_map(comp.begin(), get(boost::vertex_index, g)));
  EXPECT_EQ(count, 2u);  // {x} and {a, b}
  EXPECT_EQ(comp[a], comp[b]);
  EXPECT_NE(comp[a], comp[x]);
}

}  // namespace
}  // namespace graphfuse
