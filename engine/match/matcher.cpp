// Parallel candidate matching: per-thread results, merged; ordering is the caller's job.
#include "match/matcher.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace graphfuse::match {

namespace {

struct Local {
  VmState st;
  std::vector<Found> found;
  std::vector<RuleCounts> counts;
};

void match_one(const Graph& g, const RuleSet& rules, const std::vector<char>& active, NodeId n,
               const Acceptor& accept, Local& l) {
  if (!g.alive(n)) return;
  for (std::uint32_t r : rules.rules_for(g.node(n).op)) {
    if (!active[r]) continue;
    RuleCounts& c = l.counts[r];
    ++c.candidates;
    const MatchProgram& prog = rules[r].compiled->match;
    int first_reason = -1;
    bool legal = false;
    std::size_t seen = run_program(prog, g, n, l.st, [&](const Embedding& e) {
      int verdict = accept(r, e);
      if (verdict < 0) {
        l.found.push_back(Found{r, n, e});
        legal = true;
        return false;
      }
      if (first_reason < 0) first_reason = verdict;
      return true;
    });
    if (seen == 0) continue;
    ++c.matched;
    if (!legal) ++c.rejected[static_cast<std::size_t>(first_reason)];
  }
}

}  // namespace

MatchResults find_matches(const Graph& g, const RuleSet& rules, const std::vector<char>& active,
                          std::span<const NodeId> candidates, const Acceptor& accept,
                          tbb::task_arena* arena) {
  MatchResults out;
  out.counts.resize(rules.size());
  // Small passes (the incremental rounds) are not worth waking the thread pool.
  constexpr std::size_t kParallelFrom = 4096;
  if (arena == nullptr || arena->max_concurrency() <= 1 || candidates.size() < kParallelFrom) {
    Local l;
    l.counts.resize(rules.size());
    for (NodeId n : candidates) match_one(g, rules, active, n, accept, l);
    out.found = std::move(l.found);
    out.counts = std::move(l.counts);
    return out;
  }
  tbb::enumerable_thread_specific<Local> locals([&] {
    Local l;
    l.counts.resize(rules.size());
    return l;
  });
  arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, candidates.size(), 1024),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        Local& l = locals.local();
                        for (std::size_t i = range.begin(); i != range.end(); ++i)
                          match_one(g, rules, active, candidates[i], accept, l);
                      });
  });
  // Merge; the found list's order depends on scheduling, so the driver sorts it.
  for (Local& l : locals) {
    out.found.insert(out.found.end(), std::make_move_iterator(l.found.begin()),
                     std::make_move_iterator(l.found.end()));
    for (std::size_t r = 0; r < rules.size(); ++r) {
      out.counts[r].candidates += l.counts[r].candidates;
      out.counts[r].matched += l.counts[r].matched;
      for (std::size_t k = 0; k < out.counts[r].rejected.size(); ++k)
        out.counts[r].rejected[k] += l.counts[r].rejected[k];
    }
  }
  return out;
}

}  // namespace graphfuse::match
