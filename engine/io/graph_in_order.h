// Internal to io: builds a Graph straight from nodes that arrive producers first, each
// reference resolved as it is read, for files that are in that order (every file graphfuse
// writes is). It gives up (a false, an empty result) wherever GraphBuilder could order, name
// or check anything differently, and the reader starts over with GraphBuilder, so the graph
// and every error message stay exactly GraphBuilder's.
//
// Why: GraphBuilder keeps every node as written (strings, references, positions) until the
// file ends, then indexes, orders and copies them: at 10^6 nodes that was four fifths of a
// JSON load and most of its peak memory.
//
// Named outputs (ONNX imports name every value) are taken as GraphBuilder takes them: a
// reference is a node id, else an output name, else `id:k`. Whether an output name clashes
// with an id or a default name depends on nodes further on, so that is checked at the end
// (finish), where GraphBuilder would have refused the file.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph_tuning.h"
#include "graph/quick_hash.h"
#include "graphfuse/graph.h"
#include "memory/page_warmer.h"

namespace graphfuse::textio {

class InOrderBuilder {
 public:
  explicit InOrderBuilder(const std::string& file);

  /// Room for `n` nodes.
  void reserve(std::size_t n);
  /// The value a reference names among the nodes added so far, in GraphBuilder's order: a
  /// node id (port 0), an output name, or `id:k`, into `out`. False when it names nothing
  /// yet (a later node, an error).
  bool resolve(std::string_view name, ValueRef& out) { return resolve(name, GraphTuning::id_hash(name), out); }
  /// resolve() of a name whose GraphTuning::id_hash() is `hash` (computed where the name was read).
  bool resolve(std::string_view name, std::uint32_t hash, ValueRef& out);
  /// Output `port` of node `id` (.graph's `id:k` written apart: no output names looked at).
  bool resolve_port(std::string_view id, std::uint32_t port, ValueRef& out);
  /// Adds the next node. `output_names` has one entry per output ("" for the default name;
  /// empty: one output); `types`, when not empty, one per output (a default ValueType
  /// says nothing). Returns the node's attributes as the graph keeps them (interned), or
  /// null where it gives up.
  const Attributes* add_node(std::string id, OpType op, InputList inputs, Attributes attrs, SourceLoc loc,
                             std::span<std::string> output_names, std::span<const ValueType> types) {
    std::uint32_t hash = GraphTuning::id_hash(id);
    return add_node(hash, std::move(id), op, std::move(inputs), std::move(attrs), std::move(loc), output_names, types);
  }
  /// add_node() of an id whose GraphTuning::id_hash() is `hash`.
  const Attributes* add_node(std::uint32_t hash, std::string id, OpType op, InputList inputs,
                             Attributes attrs, SourceLoc loc, std::span<std::string> output_names,
                             std::span<const ValueType> types);
  /// After the nodes, as GraphBuilder's reading: `inputs` names the graph inputs (a name
  /// that is no node becomes an Input node); without `inputs`, the Input nodes in file order.
  bool add_graph_input(std::string_view name, const SourceLoc& loc);
  bool inputs_from_input_nodes();
  void add_graph_output(ValueRef v) { g_.add_output(v); }
  /// The graph, checked as GraphBuilder::build checks it (the readers give up on an empty
  /// id or attribute name, which its Graph::validate_value_names would refuse); nothing
  /// where GraphBuilder would report something.
  std::optional<Graph> finish();

 private:
  /// `hash`: GraphTuning::id_hash(id). kNoNode when no node has that id; false when the
  /// ids added so far hold a duplicate.
  bool find(std::string_view id, std::uint32_t hash, NodeId& out);
  /// The ids added in bulk filed in the graph's index; false on a duplicate.
  bool file_ids();
  bool name_outputs(NodeId n, std::span<std::string> names);

  Graph g_;
  // Faults in g_'s records ahead of add_node; declared after g_ so that it stops first.
  std::optional<PageWarmer> warm_;
  NodeId warm_base_ = 0;  // the first node warm_ covers
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
  // Output names other than the default, each the name of outputs[port] of its node:
  // open addressing over (32-bit hash, index + 1) slots into named_. A node-based map of
  // 10^6 names cost more than the rest of the load.
  const ValueRef* named(std::string_view name, std::uint32_t hash) const;
  /// Files output v's name; false when that name is taken.
  bool add_named(ValueRef v);
  std::string_view name_of(ValueRef v) const { return g_.node(v.node).outputs[v.port].name; }
  std::vector<ValueRef> named_;
  std::vector<std::uint64_t> named_slots_;
  struct RecentName {
    std::uint32_t hash = 0;
    ValueRef v{kNoNode, 0};
  };
  std::vector<RecentName> recent_named_;  // as recent_, for output names
  std::size_t reserved_ = 0;
};

}  // namespace graphfuse::textio
