// The match phase: every candidate root against the running rules, in parallel.
#include "graph/storage.h"
#include "rewrite/driver_phases.h"
#include "rewrite/legality.h"

namespace graphfuse::rewrite {

match::MatchResults match_round(DriverContext& cx, std::span<const NodeId> candidates) {
  const std::vector<char>& is_output = cx.marks.is_output();
  const match::Acceptor accept = [&cx, &is_output](std::uint32_t r, const match::Embedding& e) {
    return check_legal(cx.g, *cx.rules[r].compiled, e, is_output);
  };
  tbb::task_arena* arena = cx.arena_ptr();
  const std::vector<char>& runnable = cx.presence->runnable();
  if (!cx.opt.rule_times) return match::find_matches(cx.g, cx.rules, runnable, candidates, accept, arena);
  // One pass per rule over that rule's candidates, so each pass can be timed; the
  // (rule, root) pairs tried are the same as in the single pass.
  std::vector<std::vector<NodeId>> buckets(cx.rules.size());
  for (NodeId n : candidates) {
    if (!records::alive(cx.g, n)) continue;
    for (std::uint32_t r : cx.rules.rules_for(records::node(cx.g, n).op))
      if (runnable[r]) buckets[r].push_back(n);
  }
  match::MatchResults out;
  out.counts.resize(cx.rules.size());
  std::vector<char> one(cx.rules.size(), 0);
  for (std::uint32_t r : cx.sel.running) {
    if (buckets[r].empty()) continue;
    one[r] = 1;
    auto t0 = Clock::now();
    match::MatchResults part = match::find_matches(cx.g, cx.rules, one, buckets[r], accept, arena);
    cx.stats(r).match_ms += ms_between(t0, Clock::now());
    one[r] = 0;
    out.counts[r] = part.counts[r];
    out.append(std::move(part));
  }
  return out;
}

}  // namespace graphfuse::rewrite
