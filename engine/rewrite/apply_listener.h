// How the apply phase follows the graph its rewrites mutate: one listener per applying
// thread, subscribed to that thread's Rewriter.
#pragma once

#include <vector>

#include "rewrite/driver_context.h"
#include "rewrite/rewrite_listener.h"
#include "rewrite/worklist.h"

namespace graphfuse::rewrite {

/// Passes each mutation, as it happens, to those who follow the round: the round marks
/// (conflicts and staleness of the round's later matches), the worklist (the next round's
/// candidates) and the op presence (rules that wait for an op; fed from `ops` when the
/// round's applying ends). Keeps the nodes the current rewrite created and changed, which
/// the positions and the state hash take once the rewrite is done.
class ApplyListener final : public RewriteListener {
 public:
  /// Follows the rewrite about to be applied in `round`.
  void begin(DriverContext& cx, int round) {
    cx_ = &cx;
    round_ = round;
    created.clear();
    changed.clear();
  }

  void node_created(NodeId n) override;
  void node_replaced(NodeId n, bool constant) override;
  void inputs_changed(NodeId n) override { changed_node(n, kChanged); }
  void uses_changed(NodeId n) override;
  void node_erased(NodeId n) override { changed_node(n, kChanged); }
  void output_moved(NodeId n) override;

  std::vector<NodeId> created;  // by the current rewrite
  std::vector<NodeId> changed;  // by the current rewrite: replaced, rewired or removed
  std::vector<OpType> ops;      // ops this round's rewrites gave nodes (OpPresence::saw)
  Worklist::Touched touched;    // this round's, for the worklist

 private:
  void changed_node(NodeId n, Mark m);
  // A round's rewrites give a few ops over and over: listed once in a row.
  void saw(OpType op) {
    if (ops.empty() || ops.back() != op) ops.push_back(op);
  }

  DriverContext* cx_ = nullptr;
  int round_ = 0;
};

}  // namespace graphfuse::rewrite
