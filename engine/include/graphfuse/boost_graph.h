// graphfuse::Graph as a Boost.Graph graph: a boost::graph_traits specialization and the free
// functions of the VertexListGraph, EdgeListGraph, IncidenceGraph, BidirectionalGraph and
// AdjacencyMatrix concepts, so that Boost's algorithms (topological_sort, strong_components,
// vf2_subgraph_mono, breadth_first_search, ...) run on the live graph, without a copy.
//
// The mapping:
// - a vertex is a NodeId; vertices() is every slot 0 .. capacity() - 1, and a removed node
//   stays as an isolated vertex until Graph::compact(), so that NodeIds are Boost's vertex
//   indices (vertex_index is the identity) and arrays indexed by them need no translation;
// - an edge is one used input slot: from the producer of the value to the consumer, with
//   the value's output port and the consumer's input slot on it. A node reading one value
//   twice has two parallel edges, so the graph is a multigraph (allow_parallel_edge_tag);
// - out_edges(n) follow Graph::uses(n), in the order the uses were made; in_edges(n) follow
//   n's input slots in order, absent (optional) inputs skipped;
// - property maps: vertex_index, the op type of a vertex (op_type_map), and the port and
//   slot of an edge (edge_port_map, edge_slot_map).
//
// Iterators and descriptors are invalidated by any mutation of the graph, as UseRange is.
// num_edges() and edges() walk every node's inputs (O(nodes + edges)).
#pragma once

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <boost/property_map/property_map.hpp>
#include <cstddef>
#include <tuple>
#include <utility>

#include "graphfuse/graph.h"

namespace graphfuse {

/// A Boost edge of the live graph: input `slot` of `dst` reads output `port` of `src`.
/// Identified by (dst, slot); ordered by it (VF2 on multigraphs keeps edges in a std::set).
struct GraphEdge {
  NodeId src = kNoNode;
  NodeId dst = kNoNode;
  std::uint32_t port = 0;
  std::uint32_t slot = 0;
  friend bool operator==(const GraphEdge& a, const GraphEdge& b) { return a.dst == b.dst && a.slot == b.slot; }
  friend bool operator!=(const GraphEdge& a, const GraphEdge& b) { return !(a == b); }
  friend bool operator<(const GraphEdge& a, const GraphEdge& b) {
    return std::tie(a.dst, a.slot) < std::tie(b.dst, b.slot);
  }
};

namespace boost_adapter {

/// The vertices: NodeIds 0 .. capacity() - 1. Its own type rather than
/// boost::counting_iterator, whose default-constructed value is uninitialized (GCC warns
/// where Boost's algorithms default-construct one and assign it later).
class VertexIterator : public boost::iterator_facade<VertexIterator, NodeId, std::random_access_iterator_tag, NodeId> {
 public:
  VertexIterator() = default;
  explicit VertexIterator(NodeId n) : n_(n) {}

 private:
  friend class boost::iterator_core_access;
  NodeId dereference() const { return n_; }
  void increment() { ++n_; }
  void decrement() { --n_; }
  void advance(std::ptrdiff_t d) { n_ = static_cast<NodeId>(static_cast<std::ptrdiff_t>(n_) + d); }
  std::ptrdiff_t distance_to(const VertexIterator& o) const {
    return static_cast<std::ptrdiff_t>(o.n_) - static_cast<std::ptrdiff_t>(n_);
  }
  bool equal(const VertexIterator& o) const { return n_ == o.n_; }
  NodeId n_ = 0;
};

/// The out-edges of a node: its uses, each turned into the edge it is.
class OutEdgeIterator
    : public boost::iterator_facade<OutEdgeIterator, GraphEdge, std::forward_iterator_tag, GraphEdge> {
 public:
  OutEdgeIterator() = default;
  OutEdgeIterator(const Graph* g, NodeId src, UseRange::iterator it) : g_(g), src_(src), it_(it) {}

 private:
  friend class boost::iterator_core_access;
  GraphEdge dereference() const {
    const Use u = *it_;
    return GraphEdge{src_, u.node, g_->node(u.node).inputs[u.slot].port, u.slot};
  }
  void increment() { ++it_; }
  bool equal(const OutEdgeIterator& o) const { return it_ == o.it_; }
  const Graph* g_ = nullptr;
  NodeId src_ = kNoNode;
  UseRange::iterator it_;
};

/// The in-edges of a node: its used input slots in order.
class InEdgeIterator
    : public boost::iterator_facade<InEdgeIterator, GraphEdge, std::forward_iterator_tag, GraphEdge> {
 public:
  InEdgeIterator() = default;
  InEdgeIterator(const Graph* g, NodeId dst, std::uint32_t slot) : g_(g), dst_(dst), slot_(slot) { skip(); }

 private:
  friend class boost::iterator_core_access;
  GraphEdge dereference() const {
    const ValueRef v = g_->node(dst_).inputs[slot_];
    return GraphEdge{v.node, dst_, v.port, slot_};
  }
  void increment() {
    ++slot_;
    skip();
  }
  bool equal(const InEdgeIterator& o) const { return slot_ == o.slot_ && dst_ == o.dst_; }
  void skip() {
    if (!g_ || !g_->alive(dst_)) return;
    const auto& ins = g_->node(dst_).inputs;
    while (slot_ < ins.size() && !ins[slot_].valid()) ++slot_;
  }
  const Graph* g_ = nullptr;
  NodeId dst_ = kNoNode;
  std::uint32_t slot_ = 0;
};

/// Every edge of the graph: the in-edges of each vertex in turn.
class EdgeIterator : public boost::iterator_facade<EdgeIterator, GraphEdge, std::forward_iterator_tag, GraphEdge> {
 public:
  EdgeIterator() = default;
  EdgeIterator(const Graph* g, NodeId n) : g_(g), n_(n) { settle(); }

 private:
  friend class boost::iterator_core_access;
  GraphEdge dereference() const {
    const ValueRef v = g_->node(n_).inputs[slot_];
    return GraphEdge{v.node, n_, v.port, slot_};
  }
  void increment() {
    ++slot_;
    settle();
  }
  bool equal(const EdgeIterator& o) const { return n_ == o.n_ && slot_ == o.slot_; }
  // Moves to the next used input slot at or after (n_, slot_), or to the end (capacity, 0).
  void settle() {
    for (; n_ < g_->capacity(); ++n_, slot_ = 0) {
      if (!g_->alive(n_)) continue;
      const auto& ins = g_->node(n_).inputs;
      while (slot_ < ins.size() && !ins[slot_].valid()) ++slot_;
      if (slot_ < ins.size()) return;
    }
    slot_ = 0;
  }
  const Graph* g_ = nullptr;
  NodeId n_ = 0;
  std::uint32_t slot_ = 0;
};

/// The op type of a vertex (a removed node's is the default OpType).
struct OpTypeMap {
  const Graph* g = nullptr;
};
inline OpType get(const OpTypeMap& m, NodeId n) { return m.g->alive(n) ? m.g->node(n).op : OpType{}; }

/// A field an edge carries: the output port (EdgePortMap) or the input slot (EdgeSlotMap).
template <std::uint32_t GraphEdge::*Field>
struct EdgeFieldMap {};
template <std::uint32_t GraphEdge::*Field>
std::uint32_t get(EdgeFieldMap<Field>, const GraphEdge& e) {
  return e.*Field;
}
using EdgePortMap = EdgeFieldMap<&GraphEdge::port>;
using EdgeSlotMap = EdgeFieldMap<&GraphEdge::slot>;

}  // namespace boost_adapter

inline boost_adapter::OpTypeMap op_type_map(const Graph& g) { return {&g}; }
inline boost_adapter::EdgePortMap edge_port_map(const Graph&) { return {}; }
inline boost_adapter::EdgeSlotMap edge_slot_map(const Graph&) { return {}; }

// ---- the concepts' free functions (found by argument-dependent lookup) -----------------

inline std::pair<boost_adapter::VertexIterator, boost_adapter::VertexIterator> vertices(const Graph& g) {
  return {boost_adapter::VertexIterator(0), boost_adapter::VertexIterator(g.capacity())};
}
inline std::size_t num_vertices(const Graph& g) { return g.capacity(); }

inline NodeId source(const GraphEdge& e, const Graph&) { return e.src; }
inline NodeId target(const GraphEdge& e, const Graph&) { return e.dst; }

inline std::pair<boost_adapter::OutEdgeIterator, boost_adapter::OutEdgeIterator> out_edges(NodeId n, const Graph& g) {
  if (!g.alive(n)) return {};
  UseRange r = g.uses(n);
  return {boost_adapter::OutEdgeIterator(&g, n, r.begin()), boost_adapter::OutEdgeIterator(&g, n, r.end())};
}
inline std::size_t out_degree(NodeId n, const Graph& g) { return g.alive(n) ? g.uses(n).size() : 0; }

inline std::pair<boost_adapter::InEdgeIterator, boost_adapter::InEdgeIterator> in_edges(NodeId n, const Graph& g) {
  const std::uint32_t end = g.alive(n) ? static_cast<std::uint32_t>(g.node(n).inputs.size()) : 0;
  return {boost_adapter::InEdgeIterator(&g, n, 0), boost_adapter::InEdgeIterator(&g, n, end)};
}
inline std::size_t in_degree(NodeId n, const Graph& g) {
  if (!g.alive(n)) return 0;
  std::size_t d = 0;
  for (ValueRef v : g.node(n).inputs) d += v.valid();
  return d;
}
inline std::size_t degree(NodeId n, const Graph& g) { return in_degree(n, g) + out_degree(n, g); }

inline std::pair<boost_adapter::EdgeIterator, boost_adapter::EdgeIterator> edges(const Graph& g) {
  return {boost_adapter::EdgeIterator(&g, 0), boost_adapter::EdgeIterator(&g, g.capacity())};
}
inline std::size_t num_edges(const Graph& g) {
  std::size_t e = 0;
  for (NodeId n = 0; n < g.capacity(); ++n) e += in_degree(n, g);
  return e;
}

/// AdjacencyMatrix: the first edge from u to v (by v's input slot), if any.
inline std::pair<GraphEdge, bool> edge(NodeId u, NodeId v, const Graph& g) {
  if (!g.alive(u) || !g.alive(v)) return {GraphEdge{}, false};
  const auto& ins = g.node(v).inputs;
  for (std::uint32_t s = 0; s < ins.size(); ++s)
    if (ins[s].node == u) return {GraphEdge{u, v, ins[s].port, s}, true};
  return {GraphEdge{}, false};
}

// vertex_index: NodeIds are the indices.
inline boost::typed_identity_property_map<NodeId> get(boost::vertex_index_t, const Graph&) { return {}; }
inline NodeId get(boost::vertex_index_t, const Graph&, NodeId n) { return n; }

}  // namespace graphfuse

namespace boost {

template <>
struct graph_traits<graphfuse::Graph> {
  using vertex_descriptor = graphfuse::NodeId;
  using edge_descriptor = graphfuse::GraphEdge;
  using directed_category = bidirectional_tag;
  using edge_parallel_category = allow_parallel_edge_tag;
  struct traversal_category : bidirectional_graph_tag,
                              vertex_list_graph_tag,
                              edge_list_graph_tag,
                              adjacency_matrix_tag {};
  using vertex_iterator = graphfuse::boost_adapter::VertexIterator;
  using out_edge_iterator = graphfuse::boost_adapter::OutEdgeIterator;
  using in_edge_iterator = graphfuse::boost_adapter::InEdgeIterator;
  using edge_iterator = graphfuse::boost_adapter::EdgeIterator;
  using adjacency_iterator = void;
  using vertices_size_type = std::size_t;
  using edges_size_type = std::size_t;
  using degree_size_type = std::size_t;
  static vertex_descriptor null_vertex() { return graphfuse::kNoNode; }
};

template <>
struct property_map<graphfuse::Graph, vertex_index_t> {
  using type = typed_identity_property_map<graphfuse::NodeId>;
  using const_type = type;
};

template <>
struct property_traits<graphfuse::boost_adapter::OpTypeMap> {
  using value_type = graphfuse::OpType;
  using reference = graphfuse::OpType;
  using key_type = graphfuse::NodeId;
  using category = readable_property_map_tag;
};
template <std::uint32_t graphfuse::GraphEdge::*Field>
struct property_traits<graphfuse::boost_adapter::EdgeFieldMap<Field>> {
  using value_type = std::uint32_t;
  using reference = std::uint32_t;
  using key_type = graphfuse::GraphEdge;
  using category = readable_property_map_tag;
};

}  // namespace boost
