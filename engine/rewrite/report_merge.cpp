// Summing the reports of successive driver runs (rewrite_and_fold's passes).
#include <algorithm>

#include "graphfuse/rewrite.h"

namespace graphfuse {

void FoldReport::merge(const FoldReport& next) {
  folded.insert(folded.end(), next.folded.begin(), next.folded.end());
  removed.insert(removed.end(), next.removed.begin(), next.removed.end());
  skipped.insert(skipped.end(), next.skipped.begin(), next.skipped.end());
}

namespace {
// A gate's declines, keyed by summary and kept sorted (RuleStats::declined).
void add_declined(std::vector<std::pair<std::string, std::size_t>>& into,
                  const std::vector<std::pair<std::string, std::size_t>>& more) {
  for (const auto& [why, n] : more) {
    auto it = std::lower_bound(into.begin(), into.end(), why,
                               [](const auto& e, const std::string& w) { return e.first < w; });
    if (it != into.end() && it->first == why) it->second += n;
    else into.insert(it, {why, n});
  }
}
}  // namespace

void RewriteReport::merge(const RewriteReport& next) {
  if (rules.empty()) {
    // The first run: taken whole, but for what was recorded before it (folding, notes).
    const FoldReport kept = std::move(fold);
    std::vector<std::string> kept_notes = std::move(notes);
    *this = next;
    fold = kept;
    fold.merge(next.fold);
    notes.insert(notes.begin(), kept_notes.begin(), kept_notes.end());
    return;
  }
  for (std::size_t i = 0; i < rules.size() && i < next.rules.size(); ++i) {
    RuleStats& t = rules[i];
    const RuleStats& s = next.rules[i];
    t.candidates += s.candidates;
    t.matched += s.matched;
    t.applied += s.applied;
    for (std::size_t k = 0; k < t.rejected.size(); ++k) t.rejected[k] += s.rejected[k];
    t.match_ms += s.match_ms;
    t.apply_ms += s.apply_ms;
    add_declined(t.declined, s.declined);
    t.saving += s.saving;
  }
  rounds += next.rounds;
  converged = next.converged;
  nodes_after = next.nodes_after;
  threads = next.threads;
  per_round.insert(per_round.end(), next.per_round.begin(), next.per_round.end());
  trace.insert(trace.end(), next.trace.begin(), next.trace.end());
  notes.insert(notes.end(), next.notes.begin(), next.notes.end());
  stop = next.stop;
  stop_reason = next.stop_reason;
  firing = next.firing;
  gated = gated || next.gated;
  fold.merge(next.fold);
}

}  // namespace graphfuse
