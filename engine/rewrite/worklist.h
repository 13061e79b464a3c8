// The incremental worklist: which candidate roots the next round must match again.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include <tbb/task_arena.h>

#include "graphfuse/graph.h"
#include "graphfuse/rules.h"
#include "memory/zeroed_array.h"

namespace graphfuse::rewrite {

/// Collects what a round changed and turns it into the next round's candidates: the
/// changed nodes and everything up to RuleSet::max_depth() steps downstream of them
/// (a pattern's root is at most that far below any of its nodes), keeping only nodes
/// whose op roots an active rule. A node outside that set would match exactly as it
/// did before, so skipping it keeps the result identical to matching everything.
///
/// Multi-root rules: a changed node that can play a later root (`c2` in `c1, c2`), or
/// whose consumer can, is not upstream of the first root it pairs with, but that later
/// root reads values of the first root's part; so the later root's inputs are walked
/// too, which reaches every such first root (a rule's depth covers the way from its
/// leaves down to its first root). With no active multi-root rule nothing extra is done.
class Worklist {
 public:
  Worklist(const Graph& g, const RuleSet& rules, const std::vector<char>& active);

  /// What one applying thread touched (the parallel apply phase has one per thread);
  /// absorb() hands it to the worklist. A node is listed by the first thread to stamp it.
  struct Touched {
    std::vector<NodeId> seeds, fresh;
    bool full = false;  // the round touched more than finish() walks: stop listing
    std::size_t reported = 0;  // how many of seeds and fresh the round's count holds
  };

  /// Starts collecting for `round` (round numbers stamp nodes, so no clearing is needed).
  void begin(int round);
  /// A node the round matched, changed, removed or gave new uses to. Safe to call from
  /// several threads with different `t`, for nodes the graph had when the round began.
  void touch(NodeId n, Touched& t);
  /// A node the round created. Matched again itself; what lies downstream of it lies
  /// downstream of the root it feeds, which is touched.
  void created(NodeId n, Touched& t);
  /// Takes what `t` collected (and clears it).
  void absorb(Touched& t);
  /// Puts the candidates for the next round in `out`, in no particular order (matches
  /// are ordered before they are applied); with `arena`, wide frontiers are expanded in
  /// parallel. Returns false instead, leaving `out` alone, when the round touched more
  /// than an eighth of the graph (and over 16384 nodes): the next round should match
  /// every node, which then costs less than walking the neighbourhoods.
  bool finish(tbb::task_arena* arena, std::vector<NodeId>& out);

 private:
  bool root_op(NodeId n) const;
  /// n's op can be a root after the first of an active multi-root rule.
  bool later_root_op(NodeId n) const;
  /// Adds to `level` the unstamped inputs of the nodes among `nodes` and their consumers
  /// that can be later roots.
  void add_later_root_inputs(const std::vector<NodeId>& nodes, std::vector<NodeId>& level);
  /// The round touched more than finish() walks (an eighth of the graph, over 16384).
  bool too_wide() const;
  bool claim(NodeId n) {
    if (stamp_[n] == round_) return false;
    stamp_[n] = round_;
    return true;
  }
  /// claim() for threads that stamp side by side.
  bool claim_shared(NodeId n) {
    std::atomic_ref<int> s(stamp_[n]);
    return s.load(std::memory_order_relaxed) != round_ && s.exchange(round_, std::memory_order_relaxed) != round_;
  }
  void note(std::vector<NodeId>& list, NodeId n, Touched& t);
  std::vector<NodeId> expand(const std::vector<NodeId>& level, tbb::task_arena* arena);

  const Graph& g_;
  int depth_ = 0;
  std::vector<char> root_ops_;  // indexed by OpType::index(): an active rule is rooted there
  bool any_op_ = false;         // an active rule has a wildcard root
  std::vector<char> later_ops_; // like root_ops_, for the later roots of multi-root rules
  bool any_later_ = false;      // an active multi-root rule has a wildcard later root
  bool multi_root_ = false;     // an active rule has several roots
  ZeroedArray<int> stamp_;      // round whose worklist holds the node (0: none yet)
  int round_ = 0;
  std::vector<NodeId> seeds_, fresh_;
  bool full_ = false;  // too_wide() became true this round: the next one matches all
  std::size_t wide_ = 0;  // once the Toucheds list more than this together, they are full (set by begin())
  // What the round's Toucheds listed, reported every kReportEvery nodes by each: so they
  // stop when the round as a whole has listed wide_, as one thread's does, not each at
  // wide_ (two applying threads stamped and listed twice the nodes one thread does, on
  // pages fresh to them).
  std::atomic<std::size_t> listed_{0};
  static constexpr std::size_t kReportEvery = 1024;
};

}  // namespace graphfuse::rewrite
