// The incremental worklist: changed nodes, their downstream within pattern depth,
// filtered to possible roots; wide frontiers are expanded in parallel.
#include "rewrite/worklist.h"

#include <atomic>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "match/program.h"

namespace graphfuse::rewrite {

Worklist::Worklist(const Graph& g, const RuleSet& rules, const std::vector<char>& active)
    : g_(g), depth_(rules.max_depth()) {
  for (std::uint32_t r = 0; r < rules.size(); ++r) {
    if (!active[r]) continue;
    if (rules[r].root_ops.empty()) any_op_ = true;
    for (OpType op : rules[r].root_ops) {
      if (op.index() >= root_ops_.size()) root_ops_.resize(op.index() + 1, 0);
      root_ops_[op.index()] = 1;
    }
    const match::MatchProgram& p = rules[r].compiled->match;
    for (std::size_t i = 1; i < p.roots.size(); ++i) {
      multi_root_ = true;
      // The compiled program is where a later root's ops are kept: the CheckOps on its
      // register (none: it is a wildcard).
      bool checked = false;
      for (const match::Instr& in : p.code) {
        if (in.op != match::Opcode::CheckOp || in.a != p.roots[i]) continue;
        checked = true;
        for (OpType op : p.op_sets[in.aux]) {
          if (op.index() >= later_ops_.size()) later_ops_.resize(op.index() + 1, 0);
          later_ops_[op.index()] = 1;
        }
      }
      any_later_ |= !checked;
    }
  }
}

void Worklist::begin(int round) {
  round_ = round;
  seeds_.clear();
  fresh_.clear();
  full_ = false;
  wide_ = std::max<std::size_t>(g_.size() / 8, 16384);
  listed_.store(0, std::memory_order_relaxed);
  // Only what the round stamps is touched (zeroed_array.h): a big first round stops
  // listing early (wide_), and zeroing all of a 10^6-node graph's stamps cost one thread
  // about 10 ms of page faults on a VM.
  stamp_.grow_to(g_.capacity());
}

bool Worklist::too_wide() const {
  return seeds_.size() + fresh_.size() > std::max<std::size_t>(g_.size() / 8, 16384);
}

// Once the round has touched too much for a walk to pay (see finish), the next round
// matches everything whatever else is touched: stop collecting. At 10^7 nodes the first
// round would otherwise stamp and list millions of nodes only to throw the list away.
// Whether a Touched stops early changes nothing but that: finish() matches everything
// when any did, and a walk gives the same candidates as matching everything.
void Worklist::note(std::vector<NodeId>& list, NodeId n, Touched& t) {
  if (t.full) return;
  // Nodes created this round lie past the stamps; only the sequential apply creates.
  if (n >= stamp_.size()) stamp_.grow_to(std::max<std::size_t>(g_.capacity(), n + 1));
  if (claim_shared(n)) {
    list.push_back(n);
    const std::size_t mine = t.seeds.size() + t.fresh.size();
    if (mine - t.reported >= kReportEvery) {
      listed_.fetch_add(mine - t.reported, std::memory_order_relaxed);
      t.reported = mine;
    }
    t.full = listed_.load(std::memory_order_relaxed) + (mine - t.reported) > wide_;
  }
}

void Worklist::touch(NodeId n, Touched& t) { note(t.seeds, n, t); }

void Worklist::created(NodeId n, Touched& t) { note(t.fresh, n, t); }

void Worklist::absorb(Touched& t) {
  full_ = full_ || t.full;
  if (!full_) {
    seeds_.insert(seeds_.end(), t.seeds.begin(), t.seeds.end());
    fresh_.insert(fresh_.end(), t.fresh.begin(), t.fresh.end());
  }
  t.seeds.clear();
  t.fresh.clear();
  t.full = false;
  t.reported = 0;
}

bool Worklist::root_op(NodeId n) const {
  if (any_op_) return true;
  std::uint32_t op = g_.op(n).index();  // the hot record: no load of the node itself
  return op < root_ops_.size() && root_ops_[op];
}

bool Worklist::later_root_op(NodeId n) const {
  if (any_later_) return true;
  std::uint32_t op = g_.op(n).index();
  return op < later_ops_.size() && later_ops_[op];
}

// A later root reads values of its first root's part and leaves of its own (its direct
// inputs), so the first roots it pairs with lie within the rule's depth below its
// inputs, not below it. Such a pair can start (or stop) matching with nothing changed
// upstream of the first root: the later root changed, was created, was rewired because
// its own leaf's producer was replaced, or that producer changed in place. So for a
// changed node that can be a later root, and for each such consumer of a changed node,
// the inputs are walked as well. An input stamped already is a seed (walked anyway), a
// node created this round (its consumers are touched or created, so what lies below it
// is walked) or added here before.
void Worklist::add_later_root_inputs(const std::vector<NodeId>& nodes, std::vector<NodeId>& level) {
  auto add_inputs = [&](NodeId r) {
    if (!later_root_op(r)) return;
    for (const ValueRef& in : g_.node(r).inputs)
      if (claim(in.node)) level.push_back(in.node);
  };
  for (NodeId n : nodes) {
    if (!g_.alive(n)) continue;
    add_inputs(n);
    for (const Use& u : g_.uses(n)) add_inputs(u.node);
  }
}

std::vector<NodeId> Worklist::expand(const std::vector<NodeId>& level, tbb::task_arena* arena) {
  // Wide frontiers (the first rounds of a big graph) are worth the threads; a node is
  // claimed by whichever thread stamps it first, so each appears once.
  constexpr std::size_t kParallelFrom = 4096;
  std::vector<NodeId> next;
  if (arena == nullptr || arena->max_concurrency() <= 1 || level.size() < kParallelFrom) {
    for (NodeId n : level)
      for (const Use& u : g_.uses(n))
        if (claim(u.node)) next.push_back(u.node);
    return next;
  }
  tbb::enumerable_thread_specific<std::vector<NodeId>> parts;
  arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, level.size(), 2048), [&](const tbb::blocked_range<std::size_t>& r) {
      std::vector<NodeId>& out = parts.local();
      for (std::size_t i = r.begin(); i != r.end(); ++i) {
        for (const Use& u : g_.uses(level[i]))
          if (std::atomic_ref<int>(stamp_[u.node]).exchange(round_, std::memory_order_relaxed) != round_)
            out.push_back(u.node);
      }
    });
  });
  for (const auto& part : parts) next.insert(next.end(), part.begin(), part.end());
  return next;
}

bool Worklist::finish(tbb::task_arena* arena, std::vector<NodeId>& out) {
  // After a round that changed a large part of a big graph (the first round of a big
  // model), walking every neighbourhood costs more than one linear pass over all nodes,
  // and matching everything gives the same result.
  if (full_ || too_wide()) {
    // Give the memory back too: the lists are only ever short from here on.
    std::vector<NodeId>().swap(seeds_);
    std::vector<NodeId>().swap(fresh_);
    return false;
  }
  stamp_.grow_to(g_.capacity());
  out.clear();
  std::vector<NodeId> level;
  for (NodeId n : seeds_) {
    if (!g_.alive(n)) continue;
    level.push_back(n);
    if (root_op(n)) out.push_back(n);
  }
  for (NodeId n : fresh_)
    if (g_.alive(n) && root_op(n)) out.push_back(n);
  if (multi_root_) {
    add_later_root_inputs(seeds_, level);
    add_later_root_inputs(fresh_, level);
  }
  for (int d = 0; d < depth_ && !level.empty(); ++d) {
    level = expand(level, arena);
    for (NodeId n : level)
      if (root_op(n)) out.push_back(n);
  }
  seeds_.clear();
  fresh_.clear();
  return true;
}

}  // namespace graphfuse::rewrite
