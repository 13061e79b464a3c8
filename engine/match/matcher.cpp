// Parallel candidate matching: per-thread chunks of registers, merged; ordering is the caller's job.
#include "match/matcher.h"

#include <algorithm>
#include <atomic>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "graph/storage.h"

namespace graphfuse::match {

namespace {

// A thread's embeddings go into chunks that never move: a full chunk is kept and a new one
// started, the first small (incremental rounds find a handful of matches) and each next
// one twice the last, up to kChunkMax registers. One growing vector copied everything it
// held at each doubling and touched twice the memory it kept, all of it fresh pages (on
// the wide 10^6-node graph: 28 MB of page faults and 8 MB of the rewrite's peak).
constexpr std::size_t kChunkFirst = std::size_t{1} << 10, kChunkMax = std::size_t{1} << 16;

struct Local {
  std::atomic<std::uint32_t>* next_index = nullptr;  // numbers the chunks of every thread
  VmState st;
  std::vector<std::vector<Found>> found;  // in chunks too, copied once into MatchResults::found
  std::size_t found_count = 0;
  std::vector<std::pair<std::uint32_t, MatchBuffer>> chunks;  // (MatchResults::buffers index, chunk)
  std::vector<RuleCounts> counts;
};

// Starts a chunk that holds at least `nodes` and `values` more registers.
MatchBuffer& start_chunk(Local& l, std::size_t nodes, std::size_t values) {
  const std::size_t grown = std::min(kChunkMax, kChunkFirst << std::min<std::size_t>(l.chunks.size(), 16));
  auto& [index, chunk] = l.chunks.emplace_back(l.next_index->fetch_add(1, std::memory_order_relaxed), MatchBuffer{});
  chunk.nodes.reserve(std::max(grown, nodes));
  chunk.values.reserve(std::max(grown, values));
  return chunk;
}

// Appends the accepted embedding to the thread's current chunk: no allocation per match.
void keep(std::uint32_t rule, NodeId root, const Embedding& e, Local& l) {
  MatchBuffer* b = l.chunks.empty() ? nullptr : &l.chunks.back().second;
  if (b == nullptr || b->nodes.size() + e.nodes.size() > b->nodes.capacity() ||
      b->values.size() + e.values.size() > b->values.capacity())
    b = &start_chunk(l, e.nodes.size(), e.values.size());
  Found f{rule, root, l.chunks.back().first, static_cast<std::uint32_t>(b->nodes.size()),
          static_cast<std::uint32_t>(b->values.size()), static_cast<std::uint16_t>(e.nodes.size()),
          static_cast<std::uint16_t>(e.values.size())};
  b->nodes.insert(b->nodes.end(), e.nodes.begin(), e.nodes.end());
  b->values.insert(b->values.end(), e.values.begin(), e.values.end());
  if (l.found.empty() || l.found.back().size() == l.found.back().capacity())
    l.found.emplace_back().reserve(std::min(kChunkMax, kChunkFirst << std::min<std::size_t>(l.found.size(), 16)));
  l.found.back().push_back(f);
  ++l.found_count;
}

// Appends a thread's matches to out.found and moves its chunks to their places in
// out.buffers (sized for every chunk).
void hand_over(Local& l, MatchResults& out) {
  for (const std::vector<Found>& part : l.found) out.found.insert(out.found.end(), part.begin(), part.end());
  l.found.clear();
  for (auto& [index, chunk] : l.chunks) out.buffers[index] = std::move(chunk);
  l.chunks.clear();
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
  std::atomic<std::uint32_t> next_index{0};
  if (arena == nullptr || arena->max_concurrency() <= 1 || candidates.size() < kParallelFrom) {
    Local l;
    l.next_index = &next_index;
    l.counts.resize(rules.size());
    for (NodeId n : candidates) match_one(g, rules, active, n, accept, l);
    out.counts = std::move(l.counts);
    out.found.reserve(l.found_count);
    out.buffers.resize(next_index.load());
    hand_over(l, out);
    return out;
  }
  tbb::enumerable_thread_specific<Local> locals([&] {
    Local l;
    l.next_index = &next_index;
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
  for (const Local& l : locals) total += l.found_count;
  out.found.reserve(total);
  for (Local& l : locals) {
    hand_over(l, out);
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
