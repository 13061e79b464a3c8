// The fixed-point driver: match (parallel), order, select without overlap, apply, repeat.
#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include <tbb/info.h>
#include <tbb/task_arena.h>

#include "graphfuse/rewrite.h"
#include "match/matcher.h"
#include "match/program.h"
#include "rewrite/legality.h"
#include "rewrite/rewriter.h"

namespace graphfuse {

std::string_view reject_reason_name(RejectReason r) {
  switch (r) {
    case RejectReason::ExternalUse: return "external_use";
    case RejectReason::GraphOutput: return "graph_output";
    case RejectReason::LeafOverlap: return "leaf_overlap";
    case RejectReason::MissingAttribute: return "missing_attribute";
    case RejectReason::ErasedOutput: return "erased_output";
    case RejectReason::Conflict: return "conflict";
    case RejectReason::Stale: return "stale";
  }
  return "?";
}

namespace {

using rewrite::ChangeKind;
using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// Per-node bookkeeping the driver keeps across rounds, grown as nodes are created.
struct NodeState {
  std::vector<double> pos;          // a topological position (see assign_positions)
  std::vector<char> is_output;      // node has a graph output
  std::vector<int> claimed;         // round in which a selected match used the node
  std::vector<int> changed;         // round in which its op/inputs changed or it went
  std::vector<int> uses_changed;    // round in which it gained or lost consumers
  std::vector<int> queued;          // round whose worklist already holds the node

  void grow(NodeId cap) {
    if (pos.size() >= cap) return;
    pos.resize(cap, 0.0);
    is_output.resize(cap, 0);
    claimed.resize(cap, 0);
    changed.resize(cap, 0);
    uses_changed.resize(cap, 0);
    queued.resize(cap, 0);
  }
};

void mark_outputs(const Graph& g, NodeState& s) {
  std::fill(s.is_output.begin(), s.is_output.end(), 0);
  for (ValueRef v : g.outputs()) s.is_output[v.node] = 1;
}

// Created nodes sit between their inputs and the root they feed, so positions stay a
// topological order without re-sorting the graph: new node i of k gets a position
// strictly inside (max position of its outside inputs, root's position).
void assign_positions(const Graph& g, NodeState& s, const std::vector<NodeId>& created, NodeId root) {
  if (created.empty()) return;
  std::set<NodeId> fresh(created.begin(), created.end());
  double lo = -1.0;
  for (NodeId n : created)
    for (ValueRef v : g.node(n).inputs)
      if (v.valid() && !fresh.count(v.node)) lo = std::max(lo, s.pos[v.node]);
  double hi = s.pos[root];
  double k = static_cast<double>(created.size()) + 1.0;
  for (std::size_t i = 0; i < created.size(); ++i)
    s.pos[created[i]] = lo + (hi - lo) * (static_cast<double>(i) + 1.0) / k;
}

// Every node whose match could have changed: the changed nodes and everything up to
// `depth` steps downstream of them (a pattern's root is at most depth steps below any
// of its nodes). `seen` stamps (this round's number) deduplicate without a set.
std::vector<NodeId> worklist(const Graph& g, const std::vector<NodeId>& seeds, int depth,
                             std::vector<int>& seen, int round) {
  std::vector<NodeId> out;
  for (NodeId n : seeds)
    if (g.alive(n) && seen[n] != round) {
      seen[n] = round;
      out.push_back(n);
    }
  std::size_t begin = 0;
  for (int d = 0; d < depth; ++d) {
    std::size_t end = out.size();
    for (std::size_t i = begin; i < end; ++i)
      for (std::uint32_t p = 0; p < g.node(out[i]).outputs.size(); ++p)
        for (const Use& u : g.consumers(ValueRef{out[i], p}))
          if (seen[u.node] != round) {
            seen[u.node] = round;
            out.push_back(u.node);
          }
    begin = end;
  }
  return out;  // in discovery order: results do not depend on the visiting order
}

std::string rule_list(const RuleSet& rules, const std::set<std::uint32_t>& idx) {
  std::string s;
  for (std::uint32_t r : idx) s += (s.empty() ? "" : ", ") + rules[r].label();
  return s;
}

}  // namespace

RewriteReport rewrite_graph(Graph& g, const RuleSet& rules, const RewriteOptions& opt) {
  RewriteReport rep;
  rep.nodes_before = g.size();
  // The rules that run: the enabled ones, or exactly those named in only_rules.
  std::vector<char> active(rules.size(), 0);
  if (opt.only_rules.empty()) {
    for (std::uint32_t r : rules.enabled()) active[r] = 1;
  } else {
    for (const std::string& name : opt.only_rules) {
      const Rule* r = rules.find(name);
      if (!r) throw Error("unknown rule '" + name + "'");
      active[static_cast<std::size_t>(r - rules.rules().data())] = 1;
    }
  }
  std::vector<std::uint32_t> running;
  std::vector<int> stat_of(rules.size(), -1);  // rule index -> index in rep.rules
  for (std::uint32_t r = 0; r < rules.size(); ++r) {
    if (!active[r]) continue;
    running.push_back(r);
    stat_of[r] = static_cast<int>(rep.rules.size());
    rep.rules.push_back(RuleStats{rules[r].name, rules[r].loc});
  }

  int threads = opt.threads > 0 ? opt.threads : tbb::info::default_concurrency();
  std::optional<tbb::task_arena> arena;
  if (threads > 1) arena.emplace(threads);

  NodeState s;
  s.grow(g.capacity());
  mark_outputs(g, s);
  {
    std::vector<NodeId> order = g.topological_order();  // also rejects cyclic input
    for (std::size_t i = 0; i < order.size(); ++i) s.pos[order[i]] = static_cast<double>(i);
  }

  match::Acceptor accept = [&](std::uint32_t r, const match::Embedding& e) {
    return rewrite::check_legal(g, *rules[r].compiled, e, s.is_output);
  };
  auto bump = [&](std::uint32_t r, RejectReason why) {
    ++rep.rules[static_cast<std::size_t>(stat_of[r])].rejected[static_cast<int>(why)];
  };

  rewrite::Rewriter rw(g);
  std::vector<NodeId> candidates = running.empty() ? std::vector<NodeId>{} : g.nodes();
  std::set<std::uint32_t> fired_last;
  for (int round = 1;; ++round) {
    // One round past max_rounds may only confirm the fixed point.
    const bool confirm_only = round > opt.max_rounds;
    auto t0 = Clock::now();
    match::MatchResults mr = match::find_matches(g, rules, active, candidates, accept, arena ? &*arena : nullptr);
    auto t1 = Clock::now();
    RoundStats rs;
    rs.match_ms = ms_between(t0, t1);
    for (std::uint32_t r : running) {
      const match::RuleCounts& c = mr.counts[r];
      RuleStats& st = rep.rules[static_cast<std::size_t>(stat_of[r])];
      st.candidates += c.candidates;
      st.matched += c.matched;
      for (std::size_t k = 0; k < kRejectReasons; ++k) st.rejected[k] += c.rejected[k];
      rs.candidates += c.candidates;
      rs.matched += c.matched;
    }
    // The order of application: benefit first, then rule order, then upstream roots
    // first. (rule, root) is unique, so the order is total and thread-independent.
    std::sort(mr.found.begin(), mr.found.end(), [&](const match::Found& a, const match::Found& b) {
      int ba = rules[a.rule].benefit, bb = rules[b.rule].benefit;
      if (ba != bb) return ba > bb;
      if (a.rule != b.rule) return a.rule < b.rule;
      if (s.pos[a.root] != s.pos[b.root]) return s.pos[a.root] < s.pos[b.root];
      return a.root < b.root;
    });
    if (confirm_only) {
      rs.apply_ms = ms_between(t1, Clock::now());
      rep.per_round.push_back(rs);
      if (mr.found.empty()) break;
      // Name both sides of an oscillation: what fired last and what would fire next.
      std::set<std::uint32_t> firing = fired_last;
      for (const match::Found& f : mr.found) firing.insert(f.rule);
      rep.stop_reason = "no fixed point after " + std::to_string(opt.max_rounds) +
                        " rounds; rules still firing: " + rule_list(rules, firing);
      rep.nodes_after = g.size();
      if (opt.throw_on_nonconvergence) throw Error(rep.stop_reason);
      return rep;
    }

    std::vector<NodeId> touched;
    std::set<std::uint32_t> fired;
    for (const match::Found& f : mr.found) {
      const auto& nodes = f.emb.nodes;
      if (std::any_of(nodes.begin(), nodes.end(), [&](NodeId n) { return s.claimed[n] == round; })) {
        bump(f.rule, RejectReason::Conflict);
        continue;
      }
      // Legality was decided on the graph as it was when the round began; a match that
      // reads a node changed since then waits for the next round.
      bool stale = false;
      for (std::size_t r = 0; r < nodes.size() && !stale; ++r)
        stale = s.changed[nodes[r]] == round || (r > 0 && s.uses_changed[nodes[r]] == round);
      for (std::uint32_t v : rules[f.rule].compiled->match.leaf_regs)
        stale = stale || !g.alive(f.emb.values[v].node);
      if (stale) {
        bump(f.rule, RejectReason::Stale);
        continue;
      }
      for (NodeId n : nodes) {
        s.claimed[n] = round;
        touched.push_back(n);  // so matches that lost to this one are retried next round
      }
      std::string line;
      rw.clear_changes();
      rewrite::apply_rewrite(rw, rules[f.rule], f.emb, opt.trace ? &line : nullptr);
      s.grow(g.capacity());
      // Graph outputs never move: legality keeps them off interior nodes and off the
      // roots of erase-style rewrites, so is_output stays correct without a rescan.
      std::vector<NodeId> created;
      for (const rewrite::Change& c : rw.changes()) {
        touched.push_back(c.node);
        if (c.kind == ChangeKind::UsesChanged) {
          s.uses_changed[c.node] = round;
        } else {
          s.changed[c.node] = round;
          if (c.kind == ChangeKind::Created) created.push_back(c.node);
        }
      }
      assign_positions(g, s, created, f.emb.nodes[0]);
      ++rep.rules[static_cast<std::size_t>(stat_of[f.rule])].applied;
      ++rs.applied;
      fired.insert(f.rule);
      if (opt.trace) rep.trace.push_back("round " + std::to_string(round) + ": " + line);
    }
    rs.apply_ms = ms_between(t1, Clock::now());
    rep.per_round.push_back(rs);
    if (rs.applied == 0) break;
    rep.rounds = round;
    fired_last = std::move(fired);
    candidates = opt.incremental ? worklist(g, touched, rules.max_depth(), s.queued, round) : g.nodes();
  }
  rep.converged = true;
  rep.stop_reason = "fixed point";
  rep.nodes_after = g.size();
  return rep;
}

}  // namespace graphfuse
