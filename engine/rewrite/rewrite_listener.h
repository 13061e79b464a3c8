// What a Rewriter tells those who follow the graph it mutates, as each mutation happens
// (in the spirit of MLIR's RewriterBase::Listener): the driver's marks, worklist, op
// presence and round record subscribe through one listener per applying thread.
#pragma once

#include "graphfuse/graph.h"

namespace graphfuse::rewrite {

/// Called by the Rewriter right after each mutation, on the thread that made it. Every
/// method has an empty default, so a listener names only what it follows.
class RewriteListener {
 public:
  virtual ~RewriteListener() = default;

  /// Node n was added (it has its op, inputs, attributes and output types).
  virtual void node_created(NodeId n) { (void)n; }
  /// Node n got a new op, inputs and attributes in place, keeping its NodeId and outputs.
  /// `constant`: n was a constant (Const / Constant) before or is one now, so facts read
  /// off it as a constant (const(x), value(x), a tensor's shape) may have changed.
  virtual void node_replaced(NodeId n, bool constant) {
    (void)n;
    (void)constant;
  }
  /// Some of n's input slots are about to be rewired to another value.
  virtual void inputs_changed(NodeId n) { (void)n; }
  /// Node n gained or lost consumers.
  virtual void uses_changed(NodeId n) { (void)n; }
  /// Node n was removed (its record is dead; only its NodeId is meaningful).
  virtual void node_erased(NodeId n) { (void)n; }
  /// A graph output was moved onto one of n's outputs.
  virtual void output_moved(NodeId n) { (void)n; }
};

}  // namespace graphfuse::rewrite
