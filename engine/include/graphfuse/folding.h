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

/// Rewrites `g` to a fixed point, folds with `folder` (none when null), removes the nodes
/// the pass left without readers (DeadNodeSweep, graphfuse/dead_nodes.h; RewriteReport::dead,
/// "dead:" trace lines), and repeats while folding or the sweep changed something (so rules
/// that need constant operands, like a Clip fused into a convolution whose weights a
/// batch-norm fold rebuilt, fire, and so do rules a dead reader of their values had
/// blocked), at most `max_passes` times. The report sums every driver run
/// (RewriteReport::merge: the cost model's declines and savings included) and holds every
/// fold pass's work in RewriteReport::fold; with RewriteOptions::trace each folded node adds
/// a "fold:" line. After the last pass it merges repeated rule-created nodes
/// (merge_rule_copies, graphfuse/merge_copies.h; RewriteReport::merged) and sweeps again.
RewriteReport rewrite_and_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options, Folder* folder,
                               int max_passes = 8);

}  // namespace graphfuse
