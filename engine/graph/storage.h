// Boost.Graph storage behind Graph. Internal: only engine code that wants Boost's
// algorithms directly (the VF2 oracle, topological sort) includes this.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <string>
#include <unordered_map>

#include "graphfuse/graph.h"

namespace graphfuse {

/// Edge label: the producer's output port and the consumer's input slot, so that
/// algorithms over the Boost graph stay port-aware.
struct EdgeLabel {
  std::uint32_t src_port = 0;
  std::uint32_t dst_slot = 0;
};

struct VertexSlot {
  Node node;
  bool alive = false;
};

/// vecS vertices: NodeId is the vertex index. Removed vertices stay as dead slots so
/// NodeIds remain stable while a rewrite runs; Graph::compact() drops them.
using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                         VertexSlot, EdgeLabel>;

struct GraphStorage {
  BoostGraph g;
  std::unordered_map<std::string, NodeId> by_id;
};

}  // namespace graphfuse
