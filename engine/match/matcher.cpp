// Parallel candidate matching: per-thread flat buffers, merged; ordering is the caller's job.
#include "match/matcher.h"

#include <atomic>
#include <limits>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "graph/storage.h"

namespace graphfuse::match {

namespace {

struct Local {
  std::uint32_t index = 0;  // which MatchResults::buffers entry `buf` becomes
  VmState st;
  std::vector<Found> found;
  MatchBuffer buf;
  std::vector<RuleCounts> counts;
};

// Appends the accepted embedding to the thread's buffer: no allocation per match, only
// the buffers' geometric growth.
void keep(std::uint32_t rule, NodeId root, const Embedding& e, Local& l) {
  constexpr std::size_t kMax = std::numeric_limits<std::uint32_t>::max();
  if (l.buf.nodes.size() + e.nodes.size() > kMax || l.buf.values.size() + e.values.size() > kMax)
    throw Error("matching: more than 2^32 registers of matches on one thread");
  Found f{rule, root, l.index, static_cast<std::uint32_t>(l.buf.nodes.size()),
          static_cast<std::uint32_t>(l.buf.values.size()), static_cast<std::uint16_t>(e.nodes.size()),
          static_cast<std::uint16_t>(e.values.size())};
  l.buf.nodes.insert(l.buf.nodes.end(), e.nodes.begin(), e.nodes.end());
  l.buf.values.insert(l.buf.values.end(), e.values.begin(), e.values.end());
  l.found.push_back(f);
}

void match_one(const Graph& g, const RuleSet& rules, const std::vector<char>& active, NodeId n,
               const Acceptor& accept, Local& l) {
  // Liveness and op from the compact hot record: a candidate no rule is rooted at (a
  // third of a CNN graph is constants) is dismissed without loading its 128-byte node.
  const HotRecord& h = g.storage().hot[n];
  if (!h.alive) return;
  for (std::uint32_t r : rules.rules_for(h.op)) {
    if (!active[r]) continue;
    RuleCounts& c = l.counts[r];
    ++c.candidates;
    const MatchProgram& prog = rules[r].compiled->match;
    int first_reason = -1;
    bool legal = false;
    std::size_t seen = run_program(prog, g, n, l.st, [&](const Embedding& e) {
      int verdict = accept(r, e);
      if (verdict < 0) {
        keep(r, n, e, l);
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

void MatchResults::append(MatchResults&& other) {
  const auto shift = static_cast<std::uint32_t>(buffers.size());
  found.reserve(found.size() + other.found.size());
  for (Found f : other.found) {
    f.buffer += shift;
    found.push_back(f);
  }
  for (MatchBuffer& b : other.buffers) buffers.push_back(std::move(b));
  other.found.clear();
  other.buffers.clear();
}

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
    out.buffers.push_back(std::move(l.buf));
    return out;
  }
  std::atomic<std::uint32_t> next_index{0};
  tbb::enumerable_thread_specific<Local> locals([&] {
    Local l;
    l.index = next_index++;
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
  // Merge the small records; the embeddings stay where their thread wrote them. The
  // found list's order depends on scheduling, so the driver sorts it.
  out.buffers.resize(next_index.load());
  std::size_t total = 0;
  for (const Local& l : locals) total += l.found.size();
  out.found.reserve(total);
  for (Local& l : locals) {
    out.found.insert(out.found.end(), l.found.begin(), l.found.end());
    out.buffers[l.index] = std::move(l.buf);
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
