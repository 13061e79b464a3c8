// Internal to io: builds a Graph straight from nodes that arrive producers first, each
// reference resolved as it is read, for files that are in that order (every file graphfuse
// writes is). It gives up (throws GiveUp) wherever GraphBuilder could order, name or check
// anything differently, and the reader starts over with GraphBuilder, so the graph and
// every error message stay exactly GraphBuilder's.
//
// Why: GraphBuilder keeps every node as written (strings, references, positions) until the
// file ends, then indexes, orders and copies them: at 10^6 nodes that was four fifths of a
// JSON load and most of its peak memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::textio {

/// The in-order build cannot promise GraphBuilder's result: read the file with GraphBuilder.
struct GiveUp {};

/// A quick hash of a short string (ids, attribute texts): word at a time, for the
/// readers' caches; std::hash's byte loop was a few percent of a 10^6-node load.
std::uint64_t quick_hash(std::string_view s);
struct QuickHash {
  std::size_t operator()(std::string_view s) const { return quick_hash(s); }
};

class InOrderBuilder {
 public:
  explicit InOrderBuilder(const std::string& file);

  /// Room for `n` nodes.
  void reserve(std::size_t n) { g_.reserve(n); }
  /// The value a reference names among the nodes added so far: a node id (port 0), or
  /// `id:k`. GiveUp when it names nothing yet (a later node, an output name or an error).
  ValueRef resolve(std::string_view name);
  /// Adds the next node (one output; `type`, when not null, is its type).
  void add_node(std::string id, OpType op, std::vector<ValueRef> inputs, Attributes attrs, SourceLoc loc,
                const ValueType* type);
  /// After the nodes, as GraphDocReader::finish: `inputs` names the graph inputs (a name
  /// that is no node becomes an Input node); without `inputs`, the Input nodes in file order.
  void add_graph_input(std::string_view name, const SourceLoc& loc);
  void inputs_from_input_nodes();
  void add_graph_output(std::string_view name);
  /// The graph, checked as GraphBuilder::build checks it. (Graph::validate_value_names is
  /// not needed: the in-order build takes no output names, the readers give up on an
  /// empty id or attribute name.)
  Graph finish();

 private:
  NodeId find(std::string_view id);

  Graph g_;
  // The last node added under each hash slot: a reference is nearly always to a node a
  // little earlier in the file, and this table stays in the cache where the graph's id
  // index (10^6 ids: 11 MB) would cost a miss per reference.
  struct Recent {
    std::uint32_t hash = 0;
    NodeId node = kNoNode;
  };
  static constexpr std::size_t kRecentBits = 14;
  std::vector<Recent> recent_;
  std::vector<NodeId> input_nodes_;   // Input nodes in file order
  std::vector<NodeId> graph_inputs_;
  std::vector<std::string> by_port_;  // names read as `id:k`: no node may be called that
};

}  // namespace graphfuse::textio
