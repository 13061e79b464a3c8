// What the fixed-point driver's phases share during one run, each piece owned by one small
// type: the rules that run (RuleSelection), the per-node round marks (RoundMarks), the
// topological positions (Positions) and the report with its round history (RoundRecord).
// The phases themselves (match_phase, order_phase, decide_phase, apply_phase) keep their
// own state and reach the rest through DriverContext. driver.cpp is the loop over them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <tbb/task_arena.h>

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "rewrite/apply_groups.h"
#include "rewrite/driver.h"
#include "rewrite/op_presence.h"
#include "rewrite/state_hash.h"
#include "rewrite/worklist.h"

namespace graphfuse::rewrite {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// Oscillation is looked for from the end of this round on: rule sets that settle do so
/// in a round or three, and hashing what every rewrite touches is not free.
constexpr int kTrackStatesAfter = 3;

/// The rules that run (the enabled ones, or exactly RewriteOptions::only_rules) and what
/// the phases need to know of each, by rule index.
struct RuleSelection {
  std::vector<char> active;             // rule index -> runs
  std::vector<std::uint32_t> running;   // active rule indices, in rule order
  std::vector<int> stat_of;             // rule index -> index in RewriteReport::rules
  std::vector<std::uint32_t> rank;      // rule index -> place in (benefit desc, rule) order
  std::vector<char> native;             // rule index -> its constraints or rewrite call a native
  std::vector<char> group_safe;         // rule index -> group_safe()
  std::vector<char> constant_root;      // rule index -> root_can_be_constant()

  /// Fills the selection and gives every running rule its (empty) row in `rep`.
  void select(const RuleSet& rules, const RewriteOptions& opt, RewriteReport& rep);
};

/// What happened to a node in the current round, packed with the round number into one
/// word per node (4 bytes a node matter at 10^7 nodes): a mark counts only while its
/// round is the current one, so nothing is ever cleared.
enum Mark : std::uint32_t {
  kClaimed = 1,      // a selected match used the node
  kChanged = 2,      // its op or inputs changed, or it went
  kUsesChanged = 4,  // it gained or lost consumers
  kConstChanged = 8, // replaced in place, and it was or became a constant (Change::constant)
};
constexpr int kMarkBits = 4;
constexpr std::uint32_t kMarkMask = (1u << kMarkBits) - 1;
/// Rounds below this leave a mark word's top bit clear, so a word with it set is no
/// round's mark: the grouping may leave its slots in the marks (group_round).
constexpr int kMarkRounds = 1 << (31 - kMarkBits);
static_assert(((static_cast<std::uint32_t>(kMarkRounds - 1) << kMarkBits) | kMarkMask) < rewrite::kLentSlotTag);

/// The per-node round marks, and the per-node graph-output flags legality reads.
class RoundMarks {
 public:
  explicit RoundMarks(const ApplyGroups& groups) : groups_(groups) {}

  // Atomic where two groups of the parallel apply phase may mark a node side by side (a
  // match's leaf that is another group's root: apply_groups.h); relaxed, since no
  // decision reads what another group writes.
  bool marked(NodeId n, int round, Mark m) const {
    std::uint32_t w = std::atomic_ref<std::uint32_t>(const_cast<std::uint32_t&>(marks_[n])).load(std::memory_order_relaxed);
    return static_cast<int>(w >> kMarkBits) == round && (w & m) != 0;
  }
  void mark(NodeId n, int round, Mark m) {
    auto r = static_cast<std::uint32_t>(round) << kMarkBits;
    auto next = [&](std::uint32_t old) { return ((old & ~kMarkMask) == r ? old : r) | m; };
    std::atomic_ref<std::uint32_t> w(marks_[n]);
    std::uint32_t old = w.load(std::memory_order_relaxed);
    if (next(old) == old) return;  // most marks repeat one already made
    if (!concurrent_ || !groups_.shared(n)) {  // only this thread marks n
      w.store(next(old), std::memory_order_relaxed);
      return;
    }
    while (!w.compare_exchange_weak(old, next(old), std::memory_order_relaxed)) {
    }
  }
  /// Room for every node the graph has now.
  void grow(NodeId capacity) {
    if (marks_.size() >= capacity) return;
    marks_.resize(capacity, 0);
    is_output_.resize(capacity, 0);
  }
  /// While the parallel apply phase runs, marks of nodes two groups share are atomic.
  void set_concurrent(bool on) { concurrent_ = on; }
  /// The words lent to the grouping as its matcher slots (apply_groups.h).
  std::span<std::uint32_t> words() { return marks_; }
  std::vector<char>& is_output() { return is_output_; }
  const std::vector<char>& is_output() const { return is_output_; }

 private:
  const ApplyGroups& groups_;
  std::vector<std::uint32_t> marks_;  // per node: round << kMarkBits | Marks
  std::vector<char> is_output_;       // node has a graph output (legality reads it)
  bool concurrent_ = false;
};

/// Every node's place in a topological order, which orders matches by their root. When
/// the input's ids are already topological, ids below base() are their own positions
/// and only created nodes are stored.
class Positions {
 public:
  void init(const Graph& g, tbb::task_arena* arena);
  double pos(NodeId n) const { return !id_order_ ? pos_[n] : n < base_ ? static_cast<double>(n) : pos_[n - base_]; }
  void set(NodeId n, double p) { pos_[id_order_ ? n - base_ : n] = p; }
  void grow(NodeId capacity) {
    const std::size_t want = id_order_ ? capacity - base_ : capacity;
    if (pos_.size() < want) pos_.resize(want, 0.0);
  }
  /// Created nodes sit between their inputs and the root they feed.
  void assign(const Graph& g, const std::vector<NodeId>& created, NodeId root);
  bool id_order() const { return id_order_; }
  NodeId base() const { return base_; }

 private:
  bool id_order_ = false;
  NodeId base_ = 0;
  std::vector<double> pos_;  // of every node, or (id_order_) of nodes >= base_
};

/// The report under construction, the rules each round applied, and the graph states
/// seen (oscillation); decides how a run that does not converge stops.
class RoundRecord {
 public:
  RewriteReport rep;
  std::vector<std::set<std::uint32_t>> fired;  // per round (index 0 unused): rules applied
  StateDelta state;
  bool tracking = false;  // state follows the graph (see kTrackStatesAfter)

  RuleStats& stats(const RuleSelection& sel, std::uint32_t r) {
    return rep.rules[static_cast<std::size_t>(sel.stat_of[r])];
  }
  std::set<std::uint32_t> fired_since(int round) const;
  RewriteReport stop(const Graph& g, const RuleSet& rules, const RewriteOptions& opt, StopKind kind,
                     const std::string& why, const std::set<std::uint32_t>& firing);
  RewriteReport stop_at_max_rounds(const Graph& g, const RuleSet& rules, const RewriteOptions& opt,
                                   const std::vector<match::Found>& next);
  /// After a round that applied rewrites: the oscillation stop when the graph is back in
  /// a state it had after an earlier round, else nothing (and tracking starts after
  /// kTrackStatesAfter rounds).
  std::optional<RewriteReport> check_state(const Graph& g, const RuleSet& rules, const RewriteOptions& opt, int round);

 private:
  std::unordered_map<std::uint64_t, int> seen_states_;  // state delta -> round it ended
};

/// A legal match's place in the application order: benefit (higher first), rule
/// order, root's position, root. (rule, root) is unique, so the order is total and
/// does not depend on threads or on the order matches were found in.
struct Key {
  int benefit;
  std::uint32_t rule;
  double pos;
  NodeId root;
  std::uint32_t idx;  // into MatchResults::found
};
inline bool operator<(const Key& a, const Key& b) {
  if (a.benefit != b.benefit) return a.benefit > b.benefit;
  if (a.rule != b.rule) return a.rule < b.rule;
  if (a.pos != b.pos) return a.pos < b.pos;
  return a.root < b.root;
}

/// The pieces of one driver run, by reference, for the phases.
struct DriverContext {
  Graph& g;
  const RuleSet& rules;
  const RewriteOptions& opt;
  const DriverHooks* hooks;  // null unless a hook listens
  RuleSelection& sel;
  RoundMarks& marks;
  Positions& positions;
  RoundRecord& record;
  std::optional<tbb::task_arena>& arena;
  std::optional<Worklist>& work;
  std::optional<OpPresence>& presence;

  tbb::task_arena* arena_ptr() const { return arena ? &*arena : nullptr; }
  RuleStats& stats(std::uint32_t r) { return record.stats(sel, r); }
  Key key_of(const match::Found& f, std::uint32_t idx) const {
    return Key{rules[f.rule].benefit, f.rule, positions.pos(f.root), f.root, idx};
  }
  void grow() {
    marks.grow(g.capacity());
    positions.grow(g.capacity());
  }
  void notify(int round, RewriteProgress::Phase phase, std::size_t done, std::size_t total,
              std::size_t candidates = 0) const {
    if (opt.progress) opt.progress(RewriteProgress{round, phase, done, total, g.size(), candidates});
  }
};

}  // namespace graphfuse::rewrite
