// Rewriting interleaved with constant folding, until neither changes the graph.
#include "graphfuse/folding.h"

namespace graphfuse {

RewriteReport rewrite_and_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options, Folder* folder,
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

}  // namespace graphfuse
