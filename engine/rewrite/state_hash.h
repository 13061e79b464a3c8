// Hashes of graph states, so the driver can tell when rewriting brings a graph back to
// a state it had before (an oscillating rule set).
#pragma once

#include <cstdint>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::rewrite {

/// A hash of everything a node contributes to the graph's meaning: id, op, attributes,
/// inputs (by producer id and port) and output count. NodeIds are left out so that a
/// node removed and made again with the same id hashes the same.
std::uint64_t node_state_hash(const Graph& g, NodeId n);

/// Tracks the sum of node_state_hash over all live nodes, as a difference from when
/// tracking began, updated around each rewrite. Summing makes the value independent of
/// the order nodes were changed in; only touched nodes are hashed.
class StateDelta {
 public:
  /// Before a rewrite: remembers `nodes` (a superset of what it will change or remove)
  /// and subtracts their hashes.
  void before(const Graph& g, std::vector<NodeId> nodes);
  /// After it: adds back the hashes of the remembered nodes still alive and of
  /// `created`. Returns false when `changed` (what the rewrite reports it changed or
  /// removed) holds a node that was not remembered: the delta is then unreliable.
  bool after(const Graph& g, const std::vector<NodeId>& created, const std::vector<NodeId>& changed);
  std::uint64_t value() const { return value_; }

 private:
  std::vector<NodeId> pending_;
  std::uint64_t value_ = 0;
};

}  // namespace graphfuse::rewrite
