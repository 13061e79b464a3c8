// The decide phase: a RewriteGate (a target's kernels and cost model) says which legal
// matches are applied and what each saves.
#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "match/embedding_values.h"
#include "match/program.h"
#include "rewrite/driver_phases.h"

namespace graphfuse::rewrite {

void DecidePhase::run(DriverContext& cx, const match::MatchResults& mr, std::vector<Key>& keys, int round) {
  verdicts_.assign(mr.found.size(), GateVerdict{});
  auto decide = [&](std::size_t begin, std::size_t end) {
    // One set of buffers per chunk, reused by its matches.
    match::Embedding e;
    std::vector<NodeId> root_nodes, matched;
    std::vector<PlannedNode> planned;
    for (std::size_t i = begin; i < end; ++i) {
      const match::Found& f = mr.found[keys[i].idx];
      mr.load(f, e);
      const Rule& rule = cx.rules[f.rule];
      const auto& roots = rule.compiled->match.roots;
      root_nodes.clear();
      for (std::uint32_t r : roots) root_nodes.push_back(e.nodes[r]);
      plan_rewrite(cx.g, rule, e, planned);
      // An each's elements are matched (and removed) nodes too, as apply_match counts them.
      matched.assign(e.nodes.begin(), e.nodes.end());
      if (!rule.compiled->match.eaches.empty()) match::append_each_nodes(cx.g, e, rule.compiled->match, matched);
      verdicts_[keys[i].idx] = cx.opt.gate->decide(cx.g, GateCandidate{rule, matched, root_nodes, planned});
    }
  };
  // Verdicts are pure functions of (graph, match): computing them in parallel changes nothing.
  if (cx.arena && keys.size() > 256)
    cx.arena->execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, keys.size(), 64),
                        [&](const tbb::blocked_range<std::size_t>& r) { decide(r.begin(), r.end()); });
    });
  else
    decide(0, keys.size());
  std::vector<Key> kept;
  kept.reserve(keys.size());
  for (const Key& k : keys) {
    const GateVerdict& v = verdicts_[k.idx];
    if (v.apply) {
      kept.push_back(k);
      continue;
    }
    auto& declined = cx.stats(k.rule).declined;
    auto it = std::lower_bound(declined.begin(), declined.end(), v.summary,
                               [](const auto& p, const std::string& s) { return p.first < s; });
    if (it == declined.end() || it->first != v.summary) it = declined.insert(it, {v.summary, 0});
    ++it->second;
    if (cx.hooks) {
      mr.load(mr.found[k.idx], emb_);
      CandidateEvent ev{round, k.rule, k.root, &emb_};
      ev.outcome = CandidateEvent::Outcome::Declined;
      ev.gate_detail = v.detail;
      cx.hooks->on_candidate(ev);
    }
  }
  // The larger saving first; equal savings keep the order without a gate (an order that is
  // already right, as when no estimate is known, is left as it is without sorting).
  auto larger = [&](const Key& a, const Key& b) { return verdicts_[a.idx].saving > verdicts_[b.idx].saving; };
  if (!std::is_sorted(kept.begin(), kept.end(), larger)) std::stable_sort(kept.begin(), kept.end(), larger);
  keys.swap(kept);
}

}  // namespace graphfuse::rewrite
