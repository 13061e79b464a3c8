// The driver's shared pieces: which rules run, positions, the round record.
#include "rewrite/driver_context.h"

#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "graph/storage.h"
#include "match/program.h"

namespace graphfuse::rewrite {

namespace {

bool calls_native(const match::Term& t) {
  if (t.kind == match::Term::Kind::Func && t.fn == match::Fn::Native) return true;
  return std::any_of(t.args.begin(), t.args.end(), [](const match::Term& a) { return calls_native(a); });
}

/// A rule whose constraints or computed rewrite attributes call a native: a native may
/// read anything of a leaf's producer, so any change to that producer can matter.
bool calls_native(const match::CompiledRule& c) {
  for (const match::ExprCheck& e : c.match.exprs)
    if (calls_native(e.lhs) || calls_native(e.rhs)) return true;
  for (const match::RwNode& n : c.rewrite.nodes)
    for (const match::RwAttr& a : n.attrs)
      if (a.kind == match::RwAttr::Kind::Computed && calls_native(a.term)) return true;
  return false;
}

// True when every input of every node comes from a node with a smaller id: the ids are
// then a topological order and no sort is needed (the common case for files we wrote).
// Read off the use lists (every input is a use of its producer): they sit in the
// compact hot records, so the pass streams 24 bytes a node instead of the 128-byte node
// record and the input array it points to.
bool ids_are_topological(const Graph& g, tbb::task_arena* arena) {
  const NodeId cap = g.capacity();
  const auto& hot = g.storage().hot;
  auto check = [&hot](NodeId begin, NodeId end) {
    for (NodeId n = begin; n < end; ++n) {
      const HotRecord& h = hot[n];
      if (!h.alive) continue;
      for (const Use& u : h.uses.view())
        if (u.node <= n) return false;
    }
    return true;
  };
  if (arena == nullptr || cap < 65536) return check(0, cap);
  std::atomic<bool> ok{true};
  arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<NodeId>(0, cap, 16384), [&](const tbb::blocked_range<NodeId>& r) {
      if (ok.load(std::memory_order_relaxed) && !check(r.begin(), r.end())) ok = false;
    });
  });
  return ok;
}

std::string rule_list(const RuleSet& rules, const std::set<std::uint32_t>& idx) {
  std::string s;
  for (std::uint32_t r : idx) s += (s.empty() ? "" : ", ") + rules[r].label();
  return s;
}

}  // namespace

void RuleSelection::select(const RuleSet& rules, const RewriteOptions& opt, RewriteReport& rep) {
  // The rules that run: the enabled ones, or exactly those named in only_rules.
  active.assign(rules.size(), 0);
  if (opt.only_rules.empty()) {
    for (std::uint32_t r : rules.enabled()) active[r] = 1;
  } else {
    for (const std::string& name : opt.only_rules) {
      const Rule* r = rules.find(name);
      if (!r) throw Error("unknown rule '" + name + "'");
      active[static_cast<std::size_t>(r - rules.rules().data())] = 1;
    }
  }
  stat_of.assign(rules.size(), -1);
  for (std::uint32_t r = 0; r < rules.size(); ++r) {
    if (!active[r]) continue;
    running.push_back(r);
    stat_of[r] = static_cast<int>(rep.rules.size());
    rep.rules.push_back(RuleStats{rules[r].name, rules[r].loc});
  }
  native.assign(rules.size(), 0);
  for (std::uint32_t r : running) native[r] = calls_native(*rules[r].compiled);
  group_safe.assign(rules.size(), 0);
  constant_root.assign(rules.size(), 0);
  for (std::uint32_t r : running) {
    group_safe[r] = rewrite::group_safe(rules[r], native[r] != 0);
    constant_root[r] = root_can_be_constant(rules[r]);
  }
  std::vector<std::uint32_t> by_rank = running;
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return rules[a].benefit > rules[b].benefit; });
  rank.assign(rules.size(), 0);
  for (std::size_t i = 0; i < by_rank.size(); ++i) rank[by_rank[i]] = static_cast<std::uint32_t>(i);
}

void Positions::init(const Graph& g, tbb::task_arena* arena) {
  base_ = g.capacity();
  if (ids_are_topological(g, arena)) {
    id_order_ = true;  // no array for the input's nodes
    return;
  }
  pos_.assign(base_, 0.0);
  std::vector<NodeId> order = g.topological_order();  // also rejects cyclic input
  for (std::size_t i = 0; i < order.size(); ++i) pos_[order[i]] = static_cast<double>(i);
}

// Created nodes sit between their inputs and the root they feed, so positions stay a
// topological order without re-sorting the graph: new node i of k gets a position
// strictly inside (max position of its outside inputs, root's position).
void Positions::assign(const Graph& g, const std::vector<NodeId>& created, NodeId root) {
  if (created.empty()) return;
  auto fresh = [&](NodeId n) { return std::find(created.begin(), created.end(), n) != created.end(); };
  double lo = -1.0;
  for (NodeId n : created)
    for (ValueRef v : records::node(g, n).inputs)
      if (v.valid() && !fresh(v.node)) lo = std::max(lo, pos(v.node));
  double hi = pos(root);
  double k = static_cast<double>(created.size()) + 1.0;
  for (std::size_t i = 0; i < created.size(); ++i)
    set(created[i], lo + (hi - lo) * (static_cast<double>(i) + 1.0) / k);
}

std::set<std::uint32_t> RoundRecord::fired_since(int round) const {
  std::set<std::uint32_t> s;
  for (std::size_t r = static_cast<std::size_t>(std::max(round, 1)); r < fired.size(); ++r)
    s.insert(fired[r].begin(), fired[r].end());
  return s;
}

RewriteReport RoundRecord::stop(const Graph& g, const RuleSet& rules, const RewriteOptions& opt, StopKind kind,
                                const std::string& why, const std::set<std::uint32_t>& firing) {
  rep.converged = false;
  rep.stop = kind;
  rep.stop_reason = why + "; rules still firing: " + rule_list(rules, firing);
  for (std::uint32_t r : firing) rep.firing.push_back(rules[r].label());
  rep.nodes_after = g.size();
  if (opt.throw_on_nonconvergence) throw Error(rep.stop_reason);
  return std::move(rep);
}

RewriteReport RoundRecord::stop_at_max_rounds(const Graph& g, const RuleSet& rules, const RewriteOptions& opt,
                                              const std::vector<match::Found>& next) {
  // Name both sides of an oscillation: what fired last and what would fire next.
  std::set<std::uint32_t> firing = fired.back();
  for (const match::Found& f : next) firing.insert(f.rule);
  std::string why = "no fixed point after " + std::to_string(opt.max_rounds) + " rounds";
  // Say so when the graph grew round after round: the rules build without end.
  std::size_t grew = 0;
  for (std::size_t i = rep.per_round.size() - 1; i-- > 0; ++grew) {
    std::size_t before = i > 0 ? rep.per_round[i - 1].nodes : rep.nodes_before;
    if (rep.per_round[i].nodes <= before) break;
  }
  if (grew >= 3)
    why += " (the graph grew in each of the last " + std::to_string(grew) + " rounds, to " +
           std::to_string(g.size()) + " nodes)";
  return stop(g, rules, opt, StopKind::MaxRounds, why, firing);
}

std::optional<RewriteReport> RoundRecord::check_state(const Graph& g, const RuleSet& rules, const RewriteOptions& opt,
                                                      int round) {
  if (tracking) {
    auto [it, fresh] = seen_states_.emplace(state.value(), round);
    if (!fresh)
      return stop(g, rules, opt, StopKind::Oscillation,
                  "oscillation: the graph after round " + std::to_string(round) + " is the same as after round " +
                      std::to_string(it->second),
                  fired_since(it->second + 1));
  } else if (round == kTrackStatesAfter) {
    tracking = true;
    seen_states_.emplace(state.value(), round);
  }
  return std::nullopt;
}

}  // namespace graphfuse::rewrite
