// Rewriting interleaved with constant folding, until neither changes the graph; then the
// copies of one computation the rules made merge (graphfuse/merge_copies.h) and the nodes
// the rewrite left without readers go (graphfuse/dead_nodes.h).
#include "graphfuse/dead_nodes.h"
#include "graphfuse/folding.h"
#include "graphfuse/merge_copies.h"
#include "rewrite/driver.h"

namespace graphfuse {

namespace {
void trace_dead(RewriteReport& total, const std::vector<std::string>& dead, const RewriteOptions& options) {
  if (options.trace)
    for (const std::string& id : dead) total.trace.push_back("dead: '" + id + "' had no reader left, removed");
  total.dead.insert(total.dead.end(), dead.begin(), dead.end());
}

// Passes of rewriting to a fixed point, folding (with a folder) and sweeping the nodes the
// pass left dead, until a pass changes nothing more. The sweep is inside the loop because a
// dead reader blocks rules: a fusion whose first match kept a Shape chain for another reader
// (on_external_use: duplicate) leaves it reading the value the next rule must own alone.
RewriteReport rewrite_fold_passes(Graph& g, const RuleSet& rules, const RewriteOptions& options, Folder* folder,
                                  const DeadNodeSweep& sweep, int max_passes) {
  RewriteReport total;
  // The target prepares the graph once: folding and sweeping leave what it adjusts (the
  // opset) as it was, so the passes run the driver directly rather than rewrite_graph.
  if (options.gate)
    if (std::string note = options.gate->prepare(g); !note.empty()) total.notes.push_back(std::move(note));
  for (int pass = 0; pass < max_passes; ++pass) {
    RewriteReport r = rewrite::run_driver(g, rules, options, nullptr);
    const bool applied = r.rounds > 0;
    total.merge(r);
    if (!total.converged) break;
    // A pass after the first that rewrote nothing has nothing new to fold or sweep either.
    if (pass > 0 && !applied) break;
    bool changed = false;
    if (folder) {
      FoldReport f = folder->fold(g);
      if (options.trace)
        for (const auto& n : f.folded) total.trace.push_back("fold: '" + n.node + "' (" + n.op + ") is now a constant");
      changed = f.changed();
      total.fold.merge(f);
    }
    const std::vector<std::string> dead = sweep.run(g);
    trace_dead(total, dead, options);
    total.nodes_after = g.size();
    if (!changed && dead.empty()) break;
  }
  return total;
}
}  // namespace

RewriteReport rewrite_and_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options, Folder* folder,
                               int max_passes) {
  const DeadNodeSweep sweep(g);
  RewriteReport total = rewrite_fold_passes(g, rules, options, folder, sweep, max_passes);
  // Only after a fixed point: a stopped rewrite's graph is partial and left as it is.
  if (!total.converged) return total;
  total.merged = merge_rule_copies(g, sweep.first_new());
  trace_dead(total, sweep.run(g), options);
  total.nodes_after = g.size();
  return total;
}

}  // namespace graphfuse
