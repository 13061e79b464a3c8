// Rewriting interleaved with constant folding, until neither changes the graph; then the
// copies of one computation the rules made merge (graphfuse/merge_copies.h) and the nodes
// the rewrite left without readers go (graphfuse/dead_nodes.h).
#include "graphfuse/dead_nodes.h"
#include "graphfuse/folding.h"
#include "graphfuse/merge_copies.h"

namespace graphfuse {

namespace {
RewriteReport rewrite_fold_passes(Graph& g, const RuleSet& rules, const RewriteOptions& options, Folder* folder,
                                  int max_passes) {
  if (!folder) return rewrite_graph(g, rules, options);
  RewriteReport total;
  for (int pass = 0; pass < max_passes; ++pass) {
    RewriteReport r = rewrite_graph(g, rules, options);
    const bool applied = r.rounds > 0;
    total.merge(r);
    if (!total.converged) break;
    // A pass after the first that rewrote nothing has nothing new to fold either.
    if (pass > 0 && !applied) break;
    FoldReport f = folder->fold(g);
    if (options.trace)
      for (const auto& n : f.folded) total.trace.push_back("fold: '" + n.node + "' (" + n.op + ") is now a constant");
    const bool changed = f.changed();
    total.fold.merge(f);
    total.nodes_after = g.size();
    if (!changed) break;
  }
  return total;
}
}  // namespace

RewriteReport rewrite_and_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options, Folder* folder,
                               int max_passes) {
  const DeadNodeSweep sweep(g);
  RewriteReport total = rewrite_fold_passes(g, rules, options, folder, max_passes);
  // Only after a fixed point: a stopped rewrite's graph is partial and left as it is.
  if (!total.converged) return total;
  total.merged = merge_rule_copies(g, sweep.first_new());
  total.dead = sweep.run(g);
  if (options.trace)
    for (const std::string& id : total.dead) total.trace.push_back("dead: '" + id + "' had no reader left, removed");
  total.nodes_after = g.size();
  return total;
}

}  // namespace graphfuse
