// Removing the nodes a rewrite left without readers (ONNX Runtime and most compilers call
// it dead-code elimination). The rewriter removes the nodes of each match that the
// replacement no longer reads, but not what those nodes read from outside the match: a
// Shape/Gather/Unsqueeze chain whose only reader was rewritten away stays behind.
#pragma once

#include <string>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse {

/// Remembers which nodes of a graph are read before a rewrite, so that `run` afterwards
/// removes only what the rewrite left dead, never what the input already held unread
/// (a model's unread nodes are the user's: TensorFlow control-dependency targets, debug
/// taps, initializers kept for another program).
class DeadNodeSweep {
 public:
  /// Records the nodes of `before` that nothing reads (no use, not a graph output).
  explicit DeadNodeSweep(const Graph& before);

  /// Removes every node of `g` that
  ///   - has no use and is not a graph output (a graph output is never removed),
  ///   - is not a graph input,
  ///   - was read in the graph given to the constructor, or was created since,
  ///   - is not named by a subgraph body (If/Loop/Scan bodies read outer values by name,
  ///     without an edge; the check is conservative, by name in the body's bytes) nor by
  ///     another node's TensorFlow control inputs;
  /// and then, the same way, the producers that lost their last reader with it. Returns the
  /// removed nodes' ids in removal order (the first dead ones by id, then their producers
  /// as they die). Same graph in, same removals out. Costs one scan of the nodes when
  /// nothing is dead.
  std::vector<std::string> run(Graph& g) const;

  /// Node ids from here on were created after the snapshot (NodeIds are never reused):
  /// the nodes a rewrite added beside those it replaced in place.
  NodeId first_new() const { return first_new_; }

 private:
  bool removable(const Graph& g, NodeId n) const;

  NodeId first_new_ = 0;          // ids from here on were created after the snapshot
  std::vector<char> was_unread_;  // indexed by NodeId < first_new_
};

}  // namespace graphfuse
