// Rewriting interleaved with constant folding, until neither changes the graph.
#include "graphfuse/kernels/fold.h"

namespace graphfuse::kernels {

namespace {
// Adds one driver run's report to the running total (same rules, same order).
void merge(RewriteReport& total, RewriteReport r, bool first) {
  if (first) {
    total = std::move(r);
    return;
  }
  for (std::size_t i = 0; i < total.rules.size() && i < r.rules.size(); ++i) {
    RuleStats& t = total.rules[i];
    const RuleStats& s = r.rules[i];
    t.candidates += s.candidates;
    t.matched += s.matched;
    t.applied += s.applied;
    for (std::size_t k = 0; k < t.rejected.size(); ++k) t.rejected[k] += s.rejected[k];
    t.match_ms += s.match_ms;
    t.apply_ms += s.apply_ms;
  }
  total.rounds += r.rounds;
  total.converged = r.converged;
  total.nodes_after = r.nodes_after;
  total.threads = r.threads;
  total.per_round.insert(total.per_round.end(), r.per_round.begin(), r.per_round.end());
  total.trace.insert(total.trace.end(), r.trace.begin(), r.trace.end());
  total.stop = r.stop;
  total.stop_reason = std::move(r.stop_reason);
  total.firing = std::move(r.firing);
}
}  // namespace

RewriteReport rewrite_and_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options,
                               const FoldOptions& fold, FoldReport* fold_out, int max_passes) {
  RewriteReport total;
  for (int pass = 0; pass < max_passes; ++pass) {
    RewriteReport r = rewrite_graph(g, rules, options);
    const bool applied = r.rounds > 0;
    merge(total, std::move(r), pass == 0);
    if (!total.converged) break;
    // A pass after the first that rewrote nothing has nothing new to fold either.
    if (pass > 0 && !applied) break;
    FoldReport f = fold_constants(g, fold);
    if (options.trace)
      for (const auto& n : f.folded) total.trace.push_back("fold: '" + n.node + "' (" + n.op + ") is now a constant");
    const bool changed = f.changed();
    if (fold_out) {
      fold_out->folded.insert(fold_out->folded.end(), f.folded.begin(), f.folded.end());
      fold_out->removed.insert(fold_out->removed.end(), f.removed.begin(), f.removed.end());
      fold_out->skipped.insert(fold_out->skipped.end(), f.skipped.begin(), f.skipped.end());
    }
    total.nodes_after = g.size();
    if (!changed) break;
  }
  return total;
}

}  // namespace graphfuse::kernels
