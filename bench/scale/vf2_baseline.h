// The VF2 baseline: a rule's pattern as a small Boost graph, embedded with vf2_subgraph_mono.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graphfuse/graph.h"
#include "match/program.h"

namespace graphfuse::bench {

/// One pattern node: the ops it accepts and its exact arity (-1 = any).
struct PatternNode {
  std::vector<OpType> ops;
  int arity = -1;
};

/// A pattern's nodes and port-aware edges (producer register, port, consumer register,
/// slot). Leaves are not nodes: like the matcher, VF2 lets them bind anything.
struct PatternShape {
  std::vector<PatternNode> nodes;  ///< index = node register; 0 is the root
  struct Edge {
    std::uint32_t from, port, to, slot;
  };
  std::vector<Edge> edges;
};

/// Reads the shape off a compiled match program. Nullopt (with `why`) for programs VF2
/// cannot express the same way: alternatives (forks), attribute checks, shared leaves.
std::optional<PatternShape> pattern_shape(const match::MatchProgram& p, std::string* why);

/// The graph nodes that some embedding maps the pattern's root to, found by
/// boost::vf2_subgraph_mono over the live graph (graphfuse/boost_graph.h) with a port-aware edge predicate and an op-type and arity
/// vertex predicate. Sorted, without duplicates.
std::vector<NodeId> vf2_roots(const Graph& big, const PatternShape& shape);

}  // namespace graphfuse::bench
