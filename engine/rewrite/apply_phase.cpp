// The apply phase, one match after another: claim, check for conflicts and staleness,
// rewrite (the lane's listener follows each mutation), then place the created nodes.
#include <algorithm>
#include <string>
#include <tuple>

#include "graph/storage.h"
#include "match/embedding_values.h"
#include "match/program.h"
#include "rewrite/driver_phases.h"

namespace graphfuse::rewrite {

bool ApplyPhase::leaf_changed(const DriverContext& cx, const match::Embedding& e, const match::Found& f,
                              int round) const {
  const match::MatchProgram& prog = cx.rules[f.rule].compiled->match;
  const Mark m = cx.sel.native[f.rule] ? kChanged : kConstChanged;
  for (std::uint32_t v : prog.leaf_regs)
    if (e.values[v].valid() && cx.marks.marked(e.values[v].node, round, m)) return true;
  if (cx.sel.native[f.rule])  // natives also see the values of variadic lists
    for (std::uint32_t k = 0; k < prog.variadics.size(); ++k)
      for (ValueRef v : match::variadic_values(cx.g, e, prog, k))
        if (v.valid() && cx.marks.marked(v.node, round, m)) return true;
  return false;
}

// A superset of the nodes a rewrite of `e` can change or remove: the matched nodes,
// their producers (constants the match read are swept) and their consumers (uses of
// roots that are not taken over are rewired).
std::vector<NodeId> ApplyPhase::footprint(const Graph& g, const std::vector<NodeId>& matched) const {
  std::vector<NodeId> out;
  for (NodeId n : matched) {
    if (n == kNoNode) continue;
    out.push_back(n);
    for (ValueRef v : records::node(g, n).inputs)
      if (v.valid()) out.push_back(v.node);
    for (const Use& u : g.uses(n)) out.push_back(u.node);
  }
  return out;
}

bool ApplyPhase::apply_match(DriverContext& cx, ApplyLane& lane, const match::MatchResults& mr, const match::Found& f,
                             int round) {
  Graph& g = cx.g;
  RoundMarks& marks = cx.marks;
  Worklist& work = *cx.work;
  Worklist::Touched& touched = lane.listener.touched;
  const DriverHooks* hooks = cx.hooks;
  match::Embedding& emb = lane.emb;
  mr.load(f, emb);  // a few registers into reused vectors: no allocation
  const match::MatchProgram& prog = cx.rules[f.rule].compiled->match;
  if (lane.tally.empty()) lane.tally.resize(cx.rules.size());  // on the applying thread (see ApplyLane)
  ApplyLane::Tally& tally = lane.tally[f.rule];
  // An each's elements (`Transpose(xs)...`) are matched nodes too: claimed, checked for
  // changes, removed. They are the root's inputs now, which are those matched unless the
  // root itself changed this round (then the match is stale whatever they are).
  const std::vector<NodeId>* matched = &emb.nodes;
  if (!prog.eaches.empty()) {
    lane.each_nodes.assign(emb.nodes.begin(), emb.nodes.end());
    match::append_each_nodes(g, emb, prog, lane.each_nodes);
    matched = &lane.each_nodes;
  }
  const auto& nodes = *matched;
  CandidateEvent ev{round, f.rule, f.root, &emb};
  ev.gate_detail = gate_detail_;
  auto shared = std::find_if(nodes.begin(), nodes.end(), [&](NodeId n) { return marks.marked(n, round, kClaimed); });
  if (shared != nodes.end()) {
    ++tally.conflict;
    if (hooks) {
      ev.outcome = CandidateEvent::Outcome::Conflict;
      ev.shared = *shared;
      std::tie(ev.winner_rule, ev.winner_root) = claimer_[*shared];
      hooks->on_candidate(ev);
    }
    return false;
  }
  // Legality was decided on the graph as it was when the round began; a match that
  // reads a node changed since then waits for the next round. Roots may have any
  // consumers, so new or lost uses of a root do not matter.
  bool stale = false;
  for (std::size_t r = 0; r < nodes.size() && !stale; ++r)
    stale = marks.marked(nodes[r], round, kChanged) ||
            (marks.marked(nodes[r], round, kUsesChanged) &&
             std::find(prog.roots.begin(), prog.roots.end(), r) == prog.roots.end());
  for (std::uint32_t v : prog.leaf_regs)
    stale = stale || !records::alive(g, emb.values[v].node);
  // A leaf binds a value, not its producer, and a producer replaced in place keeps its
  // NodeId, outputs and output types, so most leaf facts survive it. What does not: the
  // facts of a constant (const(x), value(x), values(x), a shape read off its tensor,
  // literals in the pattern) when the producer was or became a constant, and whatever a
  // native reads. Such a match was decided on facts that are gone (its rewrite would
  // compute `value(x)` on a node that is no longer a constant, and silently drop the
  // attribute): it waits for the next round like any stale match. Its root is touched so
  // the worklist matches it again (the producer is one step above the rule's depth).
  // tests/unit/stale_leaf_test.cpp.
  if (!stale && leaf_changed(cx, emb, f, round)) {
    stale = true;
    work.touch(f.root, touched);
  }
  if (stale) {
    ++tally.stale;
    if (hooks) {
      ev.outcome = CandidateEvent::Outcome::Stale;
      hooks->on_candidate(ev);
    }
    return false;
  }
  if (hooks) hooks->on_candidate(ev);
  for (NodeId n : nodes) {
    marks.mark(n, round, kClaimed);
    work.touch(n, touched);  // so matches that lost to this one are retried next round
    if (hooks) claimer_[n] = {f.rule, f.root};
  }
  RoundRecord& record = cx.record;
  if (record.tracking) record.state.before(g, footprint(g, nodes));
  std::string line;
  lane.listener.begin(cx, round);
  auto t0 = cx.opt.rule_times ? Clock::now() : Clock::time_point{};
  apply_rewrite(lane.rw, cx.rules[f.rule], emb, cx.opt.trace ? &line : nullptr);
  if (cx.opt.rule_times) cx.stats(f.rule).apply_ms += ms_between(t0, Clock::now());
  // Graph outputs move only onto the survivor of an erase-style rewrite at an output
  // (ApplyListener::output_moved); legality keeps them off interior nodes.
  std::vector<NodeId>& created = lane.listener.created;
  std::vector<NodeId>& changed = lane.listener.changed;
  if (record.tracking) {
    std::erase_if(changed, [&](NodeId n) { return std::find(created.begin(), created.end(), n) != created.end(); });
    // A rewrite that changed something outside its footprint makes the state hash
    // unreliable; oscillation is then left to max_rounds.
    record.tracking = record.state.after(g, created, changed);
  }
  cx.positions.assign(g, created, nodes[0]);
  ++tally.applied;
  ++lane.applied;
  if (cx.opt.trace) record.rep.trace.push_back("round " + std::to_string(round) + ": " + line);
  return true;
}

bool ApplyPhase::in_order(DriverContext& cx, const match::MatchResults& mr, const std::vector<Key>& keys,
                          const DecidePhase& decide, int round, RoundStats& rs, std::size_t max_nodes) {
  ApplyLane& lane = *lanes_[0];
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (cx.opt.progress && (i & 4095) == 4095) cx.notify(round, RewriteProgress::Phase::Apply, i, keys.size(), rs.candidates);
    // No software prefetch of the matches ahead: the records of the next matches are
    // already overlapped by the processor, and loading them early to find their input
    // lists costs more than it saves.
    if (cx.opt.gate) gate_detail_ = decide.verdict(keys[i].idx).detail;
    if (!apply_match(cx, lane, mr, mr.found[keys[i].idx], round)) continue;
    if (cx.opt.gate) cx.stats(mr.found[keys[i].idx].rule).saving += decide.verdict(keys[i].idx).saving;
    if (cx.g.size() > max_nodes) {
      end(cx, rs);
      rs.nodes = cx.g.size();
      cx.record.rep.per_round.push_back(rs);
      cx.record.rep.rounds = round;
      return false;
    }
  }
  end(cx, rs);
  return true;
}

void ApplyPhase::end(DriverContext& cx, RoundStats& rs) {
  for (auto& lp : lanes_) {
    ApplyLane& lane = *lp;
    if (lane.tally.empty()) continue;  // never applied anything
    for (std::uint32_t r : cx.sel.running) {
      ApplyLane::Tally& t = lane.tally[r];
      RuleStats& st = cx.stats(r);
      st.applied += t.applied;
      st.rejected[static_cast<int>(RejectReason::Conflict)] += t.conflict;
      st.rejected[static_cast<int>(RejectReason::Stale)] += t.stale;
      if (t.applied) cx.record.fired.back().insert(r);
      t = {};
    }
    for (OpType op : lane.listener.ops) cx.presence->saw(op);
    lane.listener.ops.clear();
    cx.work->absorb(lane.listener.touched);
    rs.applied += lane.applied;
    lane.applied = 0;
  }
}

}  // namespace graphfuse::rewrite
