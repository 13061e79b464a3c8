// The phases of one driver round, in the order driver.cpp runs them: match the
// candidates (match_phase.cpp), put the matches in application order (order_phase.cpp),
// let a gate decide (decide_phase.cpp), and apply them, one after another or in groups
// side by side (apply_phase.cpp, group_phase.cpp). Each phase keeps its own state; what
// they share is in DriverContext.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "match/matcher.h"
#include "match/vm.h"
#include "rewrite/apply_listener.h"
#include "rewrite/driver_context.h"
#include "rewrite/rewriter.h"

namespace graphfuse::rewrite {

// ---- match -------------------------------------------------------------------------

/// The legal matches of the running rules rooted at `candidates` (in parallel, read-only);
/// with RewriteOptions::rule_times one timed pass per rule.
match::MatchResults match_round(DriverContext& cx, std::span<const NodeId> candidates);

// ---- order -------------------------------------------------------------------------

/// The round's matches as Keys in application order.
std::vector<Key> order_round(const DriverContext& cx, const std::vector<match::Found>& found);

// ---- decide ------------------------------------------------------------------------

/// Puts each legal match to RewriteOptions::gate: drops the declined ones from the keys
/// (counted in the rule's statistics) and orders the rest by saving first.
class DecidePhase {
 public:
  void run(DriverContext& cx, const match::MatchResults& mr, std::vector<Key>& keys, int round);
  /// The verdict for found[idx] of this round.
  const GateVerdict& verdict(std::uint32_t idx) const { return verdicts_[idx]; }

 private:
  std::vector<GateVerdict> verdicts_;  // per MatchResults::found index
  match::Embedding emb_;               // a declined match, for the hooks
};

// ---- apply -------------------------------------------------------------------------

/// What applying matches writes besides the graph, kept apart per thread: the sequential
/// apply phase has one lane, the parallel one a lane per worker. Folded into the report,
/// the worklist and the op presence when the round's applying ends.
// A cache line of its own, and the vectors it writes per match allocated by the thread
// that uses it (glibc gives each thread its own arena): two lanes' counters or scratch
// sharing a line made every match of the parallel apply phase cost twice as much.
struct alignas(64) ApplyLane {
  explicit ApplyLane(Graph& g) : rw(g, &listener) {}
  struct Tally {
    std::size_t applied = 0, conflict = 0, stale = 0;
  };
  ApplyListener listener;           // follows rw's mutations (declared first: rw holds it)
  Rewriter rw;
  match::Embedding emb;             // the match being applied, copied out of the match buffers
  std::vector<NodeId> each_nodes;   // emb.nodes plus the elements of its eaches (reused)
  std::vector<Tally> tally;         // per rule index, this round
  std::size_t applied = 0;
  GraphTuning::Removals removals;  // what this lane removed while applying in parallel
};

/// Applies a round's selected matches: claims their nodes, skips conflicts and stale
/// matches, and runs the rewrite through the lane's Rewriter, whose listener hands each
/// change to the marks, the worklist and the op presence; then gives what the rewrite
/// created and changed to the positions and the state hash.
class ApplyPhase {
 public:
  explicit ApplyPhase(Graph& g) { lanes_.push_back(std::make_unique<ApplyLane>(g)); }

  /// Starts a round (the hooks' record of who claimed what is per round).
  void begin_round() { claimer_.clear(); }
  /// Applies the matches in `keys` order, one after another; false when the graph
  /// outgrew max_nodes (the round's statistics are then already in the report).
  bool in_order(DriverContext& cx, const match::MatchResults& mr, const std::vector<Key>& keys,
                const DecidePhase& decide, int round, RoundStats& rs, std::size_t max_nodes);
  /// Whether this round's matches may be applied group by group on the arena's threads
  /// (every one a group_safe fusion, and nothing that needs the order of all of them).
  bool parallel_round(const DriverContext& cx, const match::MatchResults& mr) const;
  /// Puts the round's matches into groups, each group in application order; false when
  /// they cannot be grouped (apply_groups.h) or form one group.
  bool group_round(DriverContext& cx, const match::MatchResults& mr);
  /// Applies the groups side by side; the same decisions and graph as in_order.
  void apply_groups(DriverContext& cx, const match::MatchResults& mr, int round);
  const ApplyGroups& groups() const { return groups_; }
  /// Folds the lanes' counts, ops and touched nodes into the report, op presence and
  /// worklist; adds the applied rewrites to rs.
  void end(DriverContext& cx, RoundStats& rs);

 private:
  /// Applies one match unless it conflicts or is stale; true when applied.
  bool apply_match(DriverContext& cx, ApplyLane& lane, const match::MatchResults& mr, const match::Found& f,
                   int round);
  /// True when the match reads, as a leaf, a value whose producer changed in a way its
  /// constraints or rewrite could see (see apply_match).
  bool leaf_changed(const DriverContext& cx, const match::Embedding& e, const match::Found& f, int round) const;
  /// A superset of the nodes a rewrite can change or remove.
  std::vector<NodeId> footprint(const Graph& g, const std::vector<NodeId>& matched) const;

  std::vector<std::unique_ptr<ApplyLane>> lanes_;  // [0]: the sequential apply phase's
  ApplyGroups groups_;
  std::unordered_map<NodeId, std::pair<std::uint32_t, NodeId>> claimer_;  // for hooks
  std::string_view gate_detail_;  // the verdict of the match being applied
};

}  // namespace graphfuse::rewrite
