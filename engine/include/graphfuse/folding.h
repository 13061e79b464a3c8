// Rewriting interleaved with constant folding: the engine's loop and the interface a
// folder implements. The engine evaluates nothing itself; the kernels library provides
// the folder that does (graphfuse/kernels/fold.h: kernels::make_folder), and a program
// may bring its own.
#pragma once

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse {

/// Turns nodes whose inputs are constants into constants, in place (same NodeId, id and
/// output names), and removes constants left without users; says what it did.
class Folder {
 public:
  virtual ~Folder() = default;
  virtual FoldReport fold(Graph& g) = 0;
};

/// Rewrites `g` to a fixed point, folds with `folder`, and repeats while folding changed
/// something (so rules that need constant operands, like a Clip fused into a convolution
/// whose weights a batch-norm fold rebuilt, fire), at most `max_passes` times. A null
/// `folder` is rewrite_graph. The report sums every driver run (RewriteReport::merge: the
/// cost model's declines and savings included) and holds every fold pass's work in
/// RewriteReport::fold; with RewriteOptions::trace each folded node adds a "fold:" line.
/// After a fixed point it merges repeated rule-created nodes (merge_rule_copies,
/// graphfuse/merge_copies.h; RewriteReport::merged) and removes the nodes the rewrite left without readers
/// (DeadNodeSweep, graphfuse/dead_nodes.h; RewriteReport::dead, "dead:" trace lines), with
/// or without a folder.
RewriteReport rewrite_and_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options, Folder* folder,
                               int max_passes = 8);

}  // namespace graphfuse
