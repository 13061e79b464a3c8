// The fixed-point driver: match (parallel), order, select without overlap, apply, repeat;
// stop at a fixed point or, reporting the rules still firing, at a bound.
#include "rewrite/driver.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <tuple>
#include <unordered_map>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>

#include "graph/storage.h"
#include "match/eval.h"
#include "match/matcher.h"
#include "match/program.h"
#include "rewrite/apply_groups.h"
#include "rewrite/legality.h"
#include "rewrite/op_presence.h"
#include "rewrite/rewriter.h"
#include "rewrite/state_hash.h"
#include "rewrite/worklist.h"

namespace graphfuse {

RewriteReport rewrite_graph(Graph& g, const RuleSet& rules, const RewriteOptions& opt) {
  return rewrite::run_driver(g, rules, opt, nullptr);
}

namespace rewrite {

namespace {

using Clock = std::chrono::steady_clock;
using Event = CandidateEvent;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Oscillation is looked for from the end of this round on: rule sets that settle do so
// in a round or three, and hashing what every rewrite touches is not free.
constexpr int kTrackStatesAfter = 3;

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
bool operator<(const Key& a, const Key& b) {
  if (a.benefit != b.benefit) return a.benefit > b.benefit;
  if (a.rule != b.rule) return a.rule < b.rule;
  if (a.pos != b.pos) return a.pos < b.pos;
  return a.root < b.root;
}

// True when every input of every node comes from a node with a smaller id: the ids are
// then a topological order and no sort is needed (the common case for files we wrote).
// Read off the use lists (every input is a use of its producer): they sit in the
// compact hot records, so the pass streams 24 bytes a node instead of the 128-byte node
// record and the input array it points to (at 10^7 nodes, 0.24 GB instead of 1.6).
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

std::string rule_list(const RuleSet& rules, const std::set<std::uint32_t>& idx) {
  std::string s;
  for (std::uint32_t r : idx) s += (s.empty() ? "" : ", ") + rules[r].label();
  return s;
}

/// What applying matches writes besides the graph, kept apart per thread: the sequential
/// apply phase has one lane, the parallel one a lane per worker. Folded into the report,
/// the worklist and the op presence when the round's applying ends.
// A cache line of its own, and the vectors it writes per match allocated by the thread
// that uses it (glibc gives each thread its own arena): two lanes' counters or scratch
// sharing a line made every match of the parallel apply phase cost twice as much.
struct alignas(64) ApplyLane {
  explicit ApplyLane(Graph& g) : rw(g) {}
  struct Tally {
    std::size_t applied = 0, conflict = 0, stale = 0;
  };
  Rewriter rw;
  match::Embedding emb;             // the match being applied, copied out of the match buffers
  std::vector<NodeId> each_nodes;   // emb.nodes plus the elements of its eaches (reused)
  std::vector<NodeId> created, changed;  // scratch
  std::vector<Tally> tally;         // per rule index, this round
  std::vector<OpType> ops;          // ops rewrites gave nodes this round (OpPresence::saw)
  // A round's rewrites give a few ops over and over: listed once in a row.
  void saw(OpType op) {
    if (ops.empty() || ops.back() != op) ops.push_back(op);
  }
  Worklist::Touched touched;
  std::size_t applied = 0;
  Graph::Removals removals;  // what this lane removed while applying in parallel (Graph::settle_removals)
};

class Driver {
 public:
  Driver(Graph& g, const RuleSet& rules, const RewriteOptions& opt, const DriverHooks* hooks)
      : g_(g), rules_(rules), opt_(opt), hooks_(hooks && hooks->on_candidate ? hooks : nullptr) {
    lanes_.push_back(std::make_unique<ApplyLane>(g));
  }

  RewriteReport run();

 private:
  void select_rules();
  /// True when the match reads, as a leaf, a value whose producer changed in a way its
  /// constraints or rewrite could see (see apply_match).
  bool leaf_changed(const match::Embedding& e, const match::Found& f, int round) const;
  void positions();
  double pos(NodeId n) const { return !id_order_ ? pos_[n] : n < base_ ? static_cast<double>(n) : pos_[n - base_]; }
  void set_pos(NodeId n, double p) { pos_[id_order_ ? n - base_ : n] = p; }
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
  match::MatchResults match_round(std::span<const NodeId> candidates);
  /// The application order's key of `found[idx]` (order() sorts a whole round by it,
  /// group_round() each group).
  Key key_of(const match::Found& f, std::uint32_t idx) const {
    return Key{rules_[f.rule].benefit, f.rule, pos(f.root), f.root, idx};
  }
  std::vector<Key> order(const std::vector<match::Found>& found);
  void radix_order(std::vector<Key>& keys, NodeId max_root);
  void assign_positions(const std::vector<NodeId>& created, NodeId root);
  std::vector<NodeId> footprint(const std::vector<NodeId>& matched) const;
  void notify(int round, RewriteProgress::Phase phase, std::size_t done, std::size_t total,
              std::size_t candidates = 0) const {
    if (opt_.progress) opt_.progress(RewriteProgress{round, phase, done, total, g_.size(), candidates});
  }
  void grow() {
    const NodeId cap = g_.capacity();
    if (marks_.size() >= cap) return;
    marks_.resize(cap, 0);
    is_output_.resize(cap, 0);
    pos_.resize(id_order_ ? cap - base_ : cap, 0.0);
  }
  RuleStats& stats(std::uint32_t r) { return rep_.rules[static_cast<std::size_t>(stat_of_[r])]; }
  RewriteReport stop(StopKind kind, const std::string& why, const std::set<std::uint32_t>& firing);
  RewriteReport stop_at_max_rounds(const std::vector<match::Found>& next);
  /// Puts each legal match to RewriteOptions::gate: drops the declined ones from `keys`
  /// and orders the rest by saving first.
  void gate_round(const match::MatchResults& mr, std::vector<Key>& keys, int round);
  std::set<std::uint32_t> fired_since(int round) const;
  /// Applies one match unless it conflicts or is stale; true when applied.
  bool apply_match(ApplyLane& lane, const match::MatchResults& mr, const match::Found& f, int round);
  /// Applies the round's matches in `keys` order, one after another; false when the
  /// graph outgrew max_nodes (the report is then in rep_).
  bool apply_in_order(const match::MatchResults& mr, const std::vector<Key>& keys, int round, RoundStats& rs);
  /// Whether this round's matches may be applied group by group on the arena's threads
  /// (every one a group_safe fusion, and nothing that needs the order of all of them).
  bool parallel_round(const match::MatchResults& mr) const;
  /// Puts the round's matches into groups_, each group in application order; false when
  /// they cannot be grouped (apply_groups.h) or form one group.
  bool group_round(const match::MatchResults& mr);
  /// Applies groups_ side by side; the same decisions and graph as apply_in_order.
  void apply_groups(const match::MatchResults& mr, int round);
  /// Folds the lanes' counts, ops and touched nodes into the report, op presence and
  /// worklist; adds the applied rewrites to rs.
  void end_apply(RoundStats& rs);

  Graph& g_;
  const RuleSet& rules_;
  const RewriteOptions& opt_;
  const DriverHooks* hooks_;
  std::vector<std::unique_ptr<ApplyLane>> lanes_;  // [0]: the sequential apply phase's
  ApplyGroups groups_;
  std::size_t max_nodes_ = 0;  // live nodes past which the driver stops (RewriteOptions::max_nodes)
  bool concurrent_ = false;    // apply_groups() is applying: marks of shared nodes are made atomically
  std::vector<char> group_safe_;  // rule index -> group_safe()
  std::vector<char> constant_root_;  // rule index -> root_can_be_constant()
  RewriteReport rep_;
  std::vector<char> active_;             // rule index -> runs
  std::vector<std::uint32_t> running_;   // active rule indices, in rule order
  std::vector<int> stat_of_;             // rule index -> index in rep_.rules
  std::vector<std::uint32_t> rank_;      // rule index -> place in (benefit desc, rule) order
  std::vector<char> native_;             // rule index -> its constraints or rewrite call a native
  std::optional<tbb::task_arena> arena_;
  std::vector<std::uint32_t> marks_;   // per node: round << kMarkBits | Marks
  bool id_order_ = false;              // NodeIds below base_ are their own positions
  NodeId base_ = 0;
  std::vector<double> pos_;            // positions: of every node, or (id_order_) of nodes >= base_
  std::vector<char> is_output_;          // node has a graph output (legality reads it)
  std::vector<std::set<std::uint32_t>> fired_;  // per round (index 0 unused): rules applied
  std::optional<Worklist> work_;
  std::optional<OpPresence> presence_;  // rules that cannot match for want of an op are not tried
  StateDelta state_;
  bool tracking_ = false;  // state_ follows the graph (see kTrackStatesAfter)
  std::unordered_map<NodeId, std::pair<std::uint32_t, NodeId>> claimer_;  // for hooks
  match::Embedding emb_;  // a declined match (gate_round), for the hooks
  std::vector<GateVerdict> verdicts_;  // with a gate: per MatchResults::found index
  std::string_view gate_detail_;       // the verdict of the match being applied
};

void Driver::select_rules() {
  // The rules that run: the enabled ones, or exactly those named in only_rules.
  active_.assign(rules_.size(), 0);
  if (opt_.only_rules.empty()) {
    for (std::uint32_t r : rules_.enabled()) active_[r] = 1;
  } else {
    for (const std::string& name : opt_.only_rules) {
      const Rule* r = rules_.find(name);
      if (!r) throw Error("unknown rule '" + name + "'");
      active_[static_cast<std::size_t>(r - rules_.rules().data())] = 1;
    }
  }
  stat_of_.assign(rules_.size(), -1);
  for (std::uint32_t r = 0; r < rules_.size(); ++r) {
    if (!active_[r]) continue;
    running_.push_back(r);
    stat_of_[r] = static_cast<int>(rep_.rules.size());
    rep_.rules.push_back(RuleStats{rules_[r].name, rules_[r].loc});
  }
  native_.assign(rules_.size(), 0);
  for (std::uint32_t r : running_) native_[r] = calls_native(*rules_[r].compiled);
  group_safe_.assign(rules_.size(), 0);
  constant_root_.assign(rules_.size(), 0);
  for (std::uint32_t r : running_) {
    group_safe_[r] = group_safe(rules_[r], native_[r] != 0);
    constant_root_[r] = root_can_be_constant(rules_[r]);
  }
  std::vector<std::uint32_t> by_rank = running_;
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return rules_[a].benefit > rules_[b].benefit; });
  rank_.assign(rules_.size(), 0);
  for (std::size_t i = 0; i < by_rank.size(); ++i) rank_[by_rank[i]] = static_cast<std::uint32_t>(i);
}

void Driver::positions() {
  base_ = g_.capacity();
  if (ids_are_topological(g_, arena_ ? &*arena_ : nullptr)) {
    id_order_ = true;  // no array for the input's nodes
    return;
  }
  pos_.assign(base_, 0.0);
  std::vector<NodeId> order = g_.topological_order();  // also rejects cyclic input
  for (std::size_t i = 0; i < order.size(); ++i) pos_[order[i]] = static_cast<double>(i);
}

match::MatchResults Driver::match_round(std::span<const NodeId> candidates) {
  const match::Acceptor accept = [this](std::uint32_t r, const match::Embedding& e) {
    return check_legal(g_, *rules_[r].compiled, e, is_output_);
  };
  tbb::task_arena* arena = arena_ ? &*arena_ : nullptr;
  const std::vector<char>& runnable = presence_->runnable();
  if (!opt_.rule_times) return match::find_matches(g_, rules_, runnable, candidates, accept, arena);
  // One pass per rule over that rule's candidates, so each pass can be timed; the
  // (rule, root) pairs tried are the same as in the single pass.
  std::vector<std::vector<NodeId>> buckets(rules_.size());
  for (NodeId n : candidates) {
    if (!records::alive(g_, n)) continue;
    for (std::uint32_t r : rules_.rules_for(records::node(g_, n).op))
      if (runnable[r]) buckets[r].push_back(n);
  }
  match::MatchResults out;
  out.counts.resize(rules_.size());
  std::vector<char> one(rules_.size(), 0);
  for (std::uint32_t r : running_) {
    if (buckets[r].empty()) continue;
    one[r] = 1;
    auto t0 = Clock::now();
    match::MatchResults part = match::find_matches(g_, rules_, one, buckets[r], accept, arena);
    stats(r).match_ms += ms_between(t0, Clock::now());
    one[r] = 0;
    out.counts[r] = part.counts[r];
    out.append(std::move(part));
  }
  return out;
}

std::vector<Key> Driver::order(const std::vector<match::Found>& found) {
  std::vector<Key> keys(found.size());
  NodeId max_root = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const match::Found& f = found[i];
    keys[i] = key_of(f, static_cast<std::uint32_t>(i));
    max_root = std::max(max_root, f.root);
  }
  // Every root an input node: its position is its id, and the order is (rank, root).
  // Taken whatever the size, so that every test with such a graph checks it.
  if (id_order_ && max_root < base_ && running_.size() <= 2048) radix_order(keys, max_root);
  else if (arena_ && keys.size() > 65536) arena_->execute([&] { tbb::parallel_sort(keys.begin(), keys.end()); });
  else std::sort(keys.begin(), keys.end());
  return keys;
}

// The order of operator< when positions are node ids, by LSD radix sort: a few linear,
// stable passes (11 bits of root at a time, then the rule's rank) where a comparison
// sort of the millions of matches of a big graph's first round pays log n compares each.
void Driver::radix_order(std::vector<Key>& keys, NodeId max_root) {
  constexpr unsigned kBits = 11;
  constexpr std::size_t kDigits = std::size_t{1} << kBits;
  constexpr std::uint32_t kMask = kDigits - 1;
  std::vector<Key> tmp(keys.size());
  // Each pass counts and scatters chunk by chunk: chunk c's keys with digit d go after
  // those of every smaller digit and of the same digit in chunks before c, so the pass
  // is stable however the chunks are spread over threads (a big graph's first round
  // orders 10^5..10^6 matches, which one thread spends tens of milliseconds on).
  const std::size_t chunks = arena_ && keys.size() >= 65536 ? static_cast<std::size_t>(arena_->max_concurrency()) * 4 : 1;
  const std::size_t per = (keys.size() + chunks - 1) / chunks;
  std::vector<std::size_t> start(chunks * kDigits);
  auto for_chunks = [&](auto body) {
    if (chunks == 1) return body(0);
    arena_->execute([&] { tbb::parallel_for(std::size_t{0}, chunks, body); });
  };
  auto pass = [&](auto digit) {
    for_chunks([&](std::size_t c) {
      std::size_t* count = &start[c * kDigits];
      std::fill(count, count + kDigits, 0);
      for (std::size_t i = c * per, e = std::min(keys.size(), i + per); i < e; ++i) ++count[digit(keys[i])];
    });
    std::size_t sum = 0;
    for (std::size_t d = 0; d < kDigits; ++d)
      for (std::size_t c = 0; c < chunks; ++c) sum += std::exchange(start[c * kDigits + d], sum);
    for_chunks([&](std::size_t c) {
      std::size_t* at = &start[c * kDigits];
      for (std::size_t i = c * per, e = std::min(keys.size(), i + per); i < e; ++i) tmp[at[digit(keys[i])]++] = keys[i];
    });
    keys.swap(tmp);
  };
  for (unsigned shift = 0; shift < static_cast<unsigned>(std::bit_width(max_root)); shift += kBits)
    pass([shift](const Key& k) { return (k.root >> shift) & kMask; });
  if (running_.size() > 1) pass([this](const Key& k) { return rank_[k.rule]; });
}

// Created nodes sit between their inputs and the root they feed, so positions stay a
// topological order without re-sorting the graph: new node i of k gets a position
// strictly inside (max position of its outside inputs, root's position).
void Driver::assign_positions(const std::vector<NodeId>& created, NodeId root) {
  if (created.empty()) return;
  auto fresh = [&](NodeId n) { return std::find(created.begin(), created.end(), n) != created.end(); };
  double lo = -1.0;
  for (NodeId n : created)
    for (ValueRef v : records::node(g_, n).inputs)
      if (v.valid() && !fresh(v.node)) lo = std::max(lo, pos(v.node));
  double hi = pos(root);
  double k = static_cast<double>(created.size()) + 1.0;
  for (std::size_t i = 0; i < created.size(); ++i)
    set_pos(created[i], lo + (hi - lo) * (static_cast<double>(i) + 1.0) / k);
}

// A superset of the nodes a rewrite of `e` can change or remove: the matched nodes,
// their producers (constants the match read are swept) and their consumers (uses of
// roots that are not taken over are rewired).
std::vector<NodeId> Driver::footprint(const std::vector<NodeId>& matched) const {
  std::vector<NodeId> out;
  for (NodeId n : matched) {
    if (n == kNoNode) continue;
    out.push_back(n);
    for (ValueRef v : records::node(g_, n).inputs)
      if (v.valid()) out.push_back(v.node);
    for (const Use& u : g_.uses(n)) out.push_back(u.node);
  }
  return out;
}

std::set<std::uint32_t> Driver::fired_since(int round) const {
  std::set<std::uint32_t> s;
  for (std::size_t r = static_cast<std::size_t>(std::max(round, 1)); r < fired_.size(); ++r)
    s.insert(fired_[r].begin(), fired_[r].end());
  return s;
}

RewriteReport Driver::stop(StopKind kind, const std::string& why, const std::set<std::uint32_t>& firing) {
  rep_.converged = false;
  rep_.stop = kind;
  rep_.stop_reason = why + "; rules still firing: " + rule_list(rules_, firing);
  for (std::uint32_t r : firing) rep_.firing.push_back(rules_[r].label());
  rep_.nodes_after = g_.size();
  if (opt_.throw_on_nonconvergence) throw Error(rep_.stop_reason);
  return std::move(rep_);
}

RewriteReport Driver::stop_at_max_rounds(const std::vector<match::Found>& next) {
  // Name both sides of an oscillation: what fired last and what would fire next.
  std::set<std::uint32_t> firing = fired_.back();
  for (const match::Found& f : next) firing.insert(f.rule);
  std::string why = "no fixed point after " + std::to_string(opt_.max_rounds) + " rounds";
  // Say so when the graph grew round after round: the rules build without end.
  std::size_t grew = 0;
  for (std::size_t i = rep_.per_round.size() - 1; i-- > 0; ++grew) {
    std::size_t before = i > 0 ? rep_.per_round[i - 1].nodes : rep_.nodes_before;
    if (rep_.per_round[i].nodes <= before) break;
  }
  if (grew >= 3)
    why += " (the graph grew in each of the last " + std::to_string(grew) + " rounds, to " +
           std::to_string(g_.size()) + " nodes)";
  return stop(StopKind::MaxRounds, why, firing);
}

void Driver::gate_round(const match::MatchResults& mr, std::vector<Key>& keys, int round) {
  verdicts_.assign(mr.found.size(), GateVerdict{});
  auto decide = [&](std::size_t begin, std::size_t end) {
    // One set of buffers per chunk, reused by its matches.
    match::Embedding e;
    std::vector<NodeId> root_nodes, matched;
    std::vector<PlannedNode> planned;
    for (std::size_t i = begin; i < end; ++i) {
      const match::Found& f = mr.found[keys[i].idx];
      mr.load(f, e);
      const Rule& rule = rules_[f.rule];
      const auto& roots = rule.compiled->match.roots;
      root_nodes.clear();
      for (std::uint32_t r : roots) root_nodes.push_back(e.nodes[r]);
      plan_rewrite(g_, rule, e, planned);
      // An each's elements are matched (and removed) nodes too, as apply_match counts them.
      matched.assign(e.nodes.begin(), e.nodes.end());
      if (!rule.compiled->match.eaches.empty()) match::append_each_nodes(g_, e, rule.compiled->match, matched);
      verdicts_[keys[i].idx] = opt_.gate->decide(g_, GateCandidate{rule, matched, root_nodes, planned});
    }
  };
  // Verdicts are pure functions of (graph, match): computing them in parallel changes nothing.
  if (arena_ && keys.size() > 256)
    arena_->execute([&] {
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
    auto& declined = stats(k.rule).declined;
    auto it = std::lower_bound(declined.begin(), declined.end(), v.summary,
                               [](const auto& p, const std::string& s) { return p.first < s; });
    if (it == declined.end() || it->first != v.summary) it = declined.insert(it, {v.summary, 0});
    ++it->second;
    if (hooks_) {
      mr.load(mr.found[k.idx], emb_);
      Event ev{round, k.rule, k.root, &emb_};
      ev.outcome = Event::Outcome::Declined;
      ev.gate_detail = v.detail;
      hooks_->on_candidate(ev);
    }
  }
  // The larger saving first; equal savings keep the order without a gate (an order that is
  // already right, as when no estimate is known, is left as it is without sorting).
  auto larger = [&](const Key& a, const Key& b) { return verdicts_[a.idx].saving > verdicts_[b.idx].saving; };
  if (!std::is_sorted(kept.begin(), kept.end(), larger)) std::stable_sort(kept.begin(), kept.end(), larger);
  keys.swap(kept);
}

bool Driver::leaf_changed(const match::Embedding& e, const match::Found& f, int round) const {
  const match::MatchProgram& prog = rules_[f.rule].compiled->match;
  const Mark m = native_[f.rule] ? kChanged : kConstChanged;
  for (std::uint32_t v : prog.leaf_regs)
    if (e.values[v].valid() && marked(e.values[v].node, round, m)) return true;
  if (native_[f.rule])  // natives also see the values of variadic lists
    for (std::uint32_t k = 0; k < prog.variadics.size(); ++k)
      for (ValueRef v : match::variadic_values(g_, e, prog, k))
        if (v.valid() && marked(v.node, round, m)) return true;
  return false;
}

bool Driver::apply_match(ApplyLane& lane, const match::MatchResults& mr, const match::Found& f, int round) {
  match::Embedding& emb = lane.emb;
  mr.load(f, emb);  // a few registers into reused vectors: no allocation
  const match::MatchProgram& prog = rules_[f.rule].compiled->match;
  if (lane.tally.empty()) lane.tally.resize(rules_.size());  // on the applying thread (see ApplyLane)
  ApplyLane::Tally& tally = lane.tally[f.rule];
  // An each's elements (`Transpose(xs)...`) are matched nodes too: claimed, checked for
  // changes, removed. They are the root's inputs now, which are those matched unless the
  // root itself changed this round (then the match is stale whatever they are).
  const std::vector<NodeId>* matched = &emb.nodes;
  if (!prog.eaches.empty()) {
    lane.each_nodes.assign(emb.nodes.begin(), emb.nodes.end());
    match::append_each_nodes(g_, emb, prog, lane.each_nodes);
    matched = &lane.each_nodes;
  }
  const auto& nodes = *matched;
  Event ev{round, f.rule, f.root, &emb};
  ev.gate_detail = gate_detail_;
  auto shared = std::find_if(nodes.begin(), nodes.end(), [&](NodeId n) { return marked(n, round, kClaimed); });
  if (shared != nodes.end()) {
    ++tally.conflict;
    if (hooks_) {
      ev.outcome = Event::Outcome::Conflict;
      ev.shared = *shared;
      std::tie(ev.winner_rule, ev.winner_root) = claimer_[*shared];
      hooks_->on_candidate(ev);
    }
    return false;
  }
  // Legality was decided on the graph as it was when the round began; a match that
  // reads a node changed since then waits for the next round. Roots may have any
  // consumers, so new or lost uses of a root do not matter.
  bool stale = false;
  for (std::size_t r = 0; r < nodes.size() && !stale; ++r)
    stale = marked(nodes[r], round, kChanged) ||
            (marked(nodes[r], round, kUsesChanged) && std::find(prog.roots.begin(), prog.roots.end(), r) == prog.roots.end());
  for (std::uint32_t v : prog.leaf_regs)
    stale = stale || !records::alive(g_, emb.values[v].node);
  // A leaf binds a value, not its producer, and a producer replaced in place keeps its
  // NodeId, outputs and output types, so most leaf facts survive it. What does not: the
  // facts of a constant (const(x), value(x), values(x), a shape read off its tensor,
  // literals in the pattern) when the producer was or became a constant, and whatever a
  // native reads. Such a match was decided on facts that are gone (its rewrite would
  // compute `value(x)` on a node that is no longer a constant, and silently drop the
  // attribute): it waits for the next round like any stale match. Its root is touched so
  // the worklist matches it again (the producer is one step above the rule's depth).
  // tests/unit/stale_leaf_test.cpp.
  if (!stale && leaf_changed(emb, f, round)) {
    stale = true;
    work_->touch(f.root, lane.touched);
  }
  if (stale) {
    ++tally.stale;
    if (hooks_) {
      ev.outcome = Event::Outcome::Stale;
      hooks_->on_candidate(ev);
    }
    return false;
  }
  if (hooks_) hooks_->on_candidate(ev);
  for (NodeId n : nodes) {
    mark(n, round, kClaimed);
    work_->touch(n, lane.touched);  // so matches that lost to this one are retried next round
    if (hooks_) claimer_[n] = {f.rule, f.root};
  }
  if (tracking_) state_.before(g_, footprint(nodes));
  std::string line;
  Rewriter& rw = lane.rw;
  rw.clear_changes();
  auto t0 = opt_.rule_times ? Clock::now() : Clock::time_point{};
  apply_rewrite(rw, rules_[f.rule], emb, opt_.trace ? &line : nullptr);
  if (opt_.rule_times) stats(f.rule).apply_ms += ms_between(t0, Clock::now());
  grow();
  // Graph outputs move only onto the survivor of an erase-style rewrite at an output
  // (OutputMoved below); legality keeps them off interior nodes.
  std::vector<NodeId>& created = lane.created;
  std::vector<NodeId>& changed = lane.changed;
  created.clear();
  changed.clear();
  for (const Change& c : rw.changes()) {
    if (c.kind == ChangeKind::UsesChanged) {
      mark(c.node, round, kUsesChanged);
      work_->touch(c.node, lane.touched);
    } else if (c.kind == ChangeKind::OutputMoved) {
      // Legality must see the new output, and matches decided before (one that would move
      // a second output name onto this value) wait for the next round.
      is_output_[c.node] = 1;
      mark(c.node, round, Mark(kChanged | kConstChanged));
      work_->touch(c.node, lane.touched);
    } else if (c.kind == ChangeKind::Created) {
      lane.saw(records::op(g_, c.node));
      mark(c.node, round, kChanged);
      created.push_back(c.node);
      work_->created(c.node, lane.touched);
    } else {
      if (c.kind == ChangeKind::Replaced) lane.saw(records::op(g_, c.node));
      mark(c.node, round, c.constant ? Mark(kChanged | kConstChanged) : kChanged);
      changed.push_back(c.node);
      work_->touch(c.node, lane.touched);
    }
  }
  if (tracking_) {
    std::erase_if(changed, [&](NodeId n) { return std::find(created.begin(), created.end(), n) != created.end(); });
    // A rewrite that changed something outside its footprint makes the state hash
    // unreliable; oscillation is then left to max_rounds.
    tracking_ = state_.after(g_, created, changed);
  }
  assign_positions(created, nodes[0]);
  ++tally.applied;
  ++lane.applied;
  if (opt_.trace) rep_.trace.push_back("round " + std::to_string(round) + ": " + line);
  return true;
}

bool Driver::apply_in_order(const match::MatchResults& mr, const std::vector<Key>& keys, int round, RoundStats& rs) {
  ApplyLane& lane = *lanes_[0];
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (opt_.progress && (i & 4095) == 4095) notify(round, RewriteProgress::Phase::Apply, i, keys.size(), rs.candidates);
    // No software prefetch of the matches ahead: the records of the next matches are
    // already overlapped by the processor, and loading them early to find their input
    // lists costs more than it saves.
    if (opt_.gate) gate_detail_ = verdicts_[keys[i].idx].detail;
    if (!apply_match(lane, mr, mr.found[keys[i].idx], round)) continue;
    if (opt_.gate) stats(mr.found[keys[i].idx].rule).saving += verdicts_[keys[i].idx].saving;
    if (g_.size() > max_nodes_) {
      end_apply(rs);
      rs.nodes = g_.size();
      rep_.per_round.push_back(rs);
      rep_.rounds = round;
      return false;
    }
  }
  end_apply(rs);
  return true;
}

// Only rounds whose every rewrite is a group_safe fusion, and none of what needs the
// order of all rewrites: hooks and traces (they report in order), per-rule times, a gate
// (its savings order the round), state tracking (it hashes before and after each
// rewrite), a format's type inference (it may note what it inferred in the graph).
bool Driver::parallel_round(const match::MatchResults& mr) const {
  if (!arena_ || mr.found.size() < opt_.parallel_apply_from || hooks_ || opt_.trace || opt_.rule_times ||
      opt_.gate || tracking_ || lanes_[0]->rw.infers_types())
    return false;
  return std::all_of(mr.found.begin(), mr.found.end(), [&](const match::Found& f) { return group_safe_[f.rule]; });
}

// Groups first, then orders each group; the round is never put in order as a whole. The
// groups do not depend on the order of the matches (apply_groups.h), and the order among
// groups does not matter (each group is applied in order, the groups side by side), so
// each group needs only the order of its own matches, the order apply_in_order would
// apply them in. A group's matches arrive in `found` order and are sorted stably by the
// same Key, as the whole round is in order(): the same order, tie for tie. It spares the
// round's whole array of Keys and the radix sort's second copy, fresh memory each round,
// for many small sorts.
bool Driver::group_round(const match::MatchResults& mr) {
  // The marks lend the grouping its per-node matcher slots (apply_groups.h): memory the
  // driver has already, where slots of the grouping's own were 4 MB of fresh pages a
  // round at 10^6 nodes. The words it leaves carry kLentSlotTag, the top bit, which no
  // mark of a round below kMarkRounds has: they read as unmarked in every round.
  std::span<std::uint32_t> lent;
  if (opt_.max_rounds < kMarkRounds - 1) {  // the last round is max_rounds + 1
    grow();
    lent = marks_;
  }
  if (!group_matches(g_, mr, constant_root_, &*arena_, groups_, kThreadedGroupingFrom, lent) || groups_.size() <= 1)
    return false;
  // Each group holds its matches in found order; sorted by Key with ties kept in that
  // order, it is in application order. The Keys are built once per match and sorted
  // themselves: a comparator that built them read `found`, the rule and the position at
  // random on every comparison.
  auto before = [](const Key& a, const Key& b) { return a < b || (!(b < a) && a.idx < b.idx); };
  const std::size_t n = groups_.size();
  const std::size_t grain = std::max<std::size_t>(64, n / (static_cast<std::size_t>(arena_->max_concurrency()) * 16));
  arena_->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain), [&](const tbb::blocked_range<std::size_t>& r) {
      std::vector<Key> keys;
      for (std::size_t k = r.begin(); k < r.end(); ++k) {
        const auto first = groups_.order.begin() + groups_.starts[k], last = groups_.order.begin() + groups_.starts[k + 1];
        if (last - first < 2) continue;
        keys.clear();
        for (auto it = first; it != last; ++it) keys.push_back(key_of(mr.found[*it], *it));
        if (std::is_sorted(keys.begin(), keys.end(), before)) continue;  // found in application order already
        std::sort(keys.begin(), keys.end(), before);
        std::transform(keys.begin(), keys.end(), first, [](const Key& key) { return key.idx; });
      }
    });
  });
  return true;
}

void Driver::apply_groups(const match::MatchResults& mr, int round) {
  const auto threads = static_cast<std::size_t>(arena_->max_concurrency());
  while (lanes_.size() < threads) {
    lanes_.push_back(std::make_unique<ApplyLane>(g_));
  }
  const std::size_t n = groups_.size();
  // Enough ranges for the threads to balance groups of different sizes.
  const std::size_t grain = std::max<std::size_t>(1, n / (threads * 32));
  for (auto& lane : lanes_) {
    lane->rw.collect_removals_in(&lane->removals);
  }
  concurrent_ = true;
  arena_->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain), [&](const tbb::blocked_range<std::size_t>& r) {
      ApplyLane& lane = *lanes_[static_cast<std::size_t>(tbb::this_task_arena::current_thread_index())];
      // One thread applies these groups one after another, each in order: their matches
      // in a row.
      const std::uint32_t* first = groups_.order.data() + groups_.starts[r.begin()];
      const std::size_t count = groups_.starts[r.end()] - groups_.starts[r.begin()];
      for (std::size_t i = 0; i < count; ++i) apply_match(lane, mr, mr.found[first[i]], round);
    });
  });
  concurrent_ = false;
  for (auto& lane : lanes_) {
    lane->rw.collect_removals_in(nullptr);
    g_.settle_removals(lane->removals);
  }
}

void Driver::end_apply(RoundStats& rs) {
  for (auto& lp : lanes_) {
    ApplyLane& lane = *lp;
    if (lane.tally.empty()) continue;  // never applied anything
    for (std::uint32_t r : running_) {
      ApplyLane::Tally& t = lane.tally[r];
      RuleStats& st = stats(r);
      st.applied += t.applied;
      st.rejected[static_cast<int>(RejectReason::Conflict)] += t.conflict;
      st.rejected[static_cast<int>(RejectReason::Stale)] += t.stale;
      if (t.applied) fired_.back().insert(r);
      t = {};
    }
    for (OpType op : lane.ops) presence_->saw(op);
    lane.ops.clear();
    work_->absorb(lane.touched);
    rs.applied += lane.applied;
    lane.applied = 0;
  }
}

RewriteReport Driver::run() {
  rep_.nodes_before = g_.size();
  rep_.gated = opt_.gate != nullptr;
  select_rules();
  int threads = opt_.threads > 0 ? opt_.threads : tbb::info::default_concurrency();
  rep_.threads = threads;
  // More threads than the process may use by default (--threads 8 on 2 cores, as the
  // determinism checks run): oneTBB's pool keeps one worker per allowed CPU but one, so
  // the arena would run on fewer threads than asked and print a warning to stderr. A
  // global_control for the run lets the pool grow that far (where the application set a
  // lower limit of its own, the lower one stays in force: the smallest active value wins).
  std::optional<tbb::global_control> allow;
  if (threads > tbb::info::default_concurrency())
    allow.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  if (threads > 1) arena_.emplace(threads);
  tbb::task_arena* arena = arena_ ? &*arena_ : nullptr;
  max_nodes_ = opt_.max_nodes > 0 ? opt_.max_nodes : 8 * g_.size() + 4096;

  positions();
  grow();
  for (ValueRef v : g_.outputs()) is_output_[v.node] = 1;
  work_.emplace(g_, rules_, active_);
  std::optional<std::mt19937_64> rng;
  if (opt_.shuffle_seed) rng.emplace(*opt_.shuffle_seed);
  std::unordered_map<std::uint64_t, int> seen_states;  // state delta -> round it ended

  // Every node, kept for rounds that match everything again: removed nodes stay in it
  // (the matcher skips them) and created ones are appended.
  std::vector<NodeId> all = running_.empty() ? std::vector<NodeId>{} : g_.nodes();
  NodeId all_to = g_.capacity();
  presence_.emplace(g_, rules_, active_, all);
  std::vector<NodeId> near;  // a worklist round's candidates
  std::vector<NodeId>* cands = &all;
  fired_.resize(1);
  for (int round = 1;; ++round) {
    std::vector<NodeId>& candidates = *cands;
    if (rng) std::shuffle(candidates.begin(), candidates.end(), *rng);
    notify(round, RewriteProgress::Phase::Match, 0, candidates.size());
    auto t0 = Clock::now();
    match::MatchResults mr = match_round(candidates);
    auto t1 = Clock::now();
    RoundStats rs;
    rs.match_ms = ms_between(t0, t1);
    for (std::uint32_t r : running_) {
      const match::RuleCounts& c = mr.counts[r];
      RuleStats& st = stats(r);
      st.candidates += c.candidates;
      st.matched += c.matched;
      for (std::size_t k = 0; k < kRejectReasons; ++k) st.rejected[k] += c.rejected[k];
      rs.candidates += c.candidates;
      rs.matched += c.matched;
    }
    // The order matches arrive in must not matter; shuffling it proves that it does not.
    if (rng) std::shuffle(mr.found.begin(), mr.found.end(), *rng);
    // A round applied side by side is ordered group by group (group_round); any other is
    // put in order whole, here.
    const bool side_by_side = round <= opt_.max_rounds && parallel_round(mr);
    std::vector<Key> keys;
    if (!side_by_side) keys = order(mr.found);
    rs.order_ms = ms_between(t1, Clock::now());
    if (opt_.gate) gate_round(mr, keys, round);
    // One round past max_rounds may only confirm the fixed point.
    if (round > opt_.max_rounds) {
      rs.apply_ms = ms_between(t1, Clock::now());
      rs.nodes = g_.size();
      rep_.per_round.push_back(rs);
      if (keys.empty()) break;
      return stop_at_max_rounds(mr.found);
    }

    notify(round, RewriteProgress::Phase::Apply, 0, side_by_side ? mr.found.size() : keys.size(), rs.candidates);
    work_->begin(round);
    fired_.emplace_back();
    claimer_.clear();
    auto t2 = Clock::now();
    const bool grouped = side_by_side && group_round(mr);
    if (side_by_side && !grouped) {  // one group, or a graph input matched: in order after all
      keys = order(mr.found);
      rs.order_ms += ms_between(t2, Clock::now());
    }
    if (grouped) {
      rs.group_ms = ms_between(t2, Clock::now());
      apply_groups(mr, round);
      rs.apply_groups = groups_.size();
      end_apply(rs);
    } else if (!apply_in_order(mr, keys, round, rs)) {
      return stop(StopKind::Growth,
                  "unbounded growth: " + std::to_string(g_.size()) + " nodes in round " + std::to_string(round) +
                      ", over the limit of " + std::to_string(max_nodes_) + " (the input had " +
                      std::to_string(rep_.nodes_before) + "; max_nodes)",
                  fired_since(round - 1));
    }
    rs.apply_ms = ms_between(t1, Clock::now());
    rs.nodes = g_.size();
    rep_.per_round.push_back(rs);
    if (rs.applied == 0) break;
    rep_.rounds = round;
    if (tracking_) {
      auto [it, fresh] = seen_states.emplace(state_.value(), round);
      if (!fresh)
        return stop(StopKind::Oscillation,
                    "oscillation: the graph after round " + std::to_string(round) +
                        " is the same as after round " + std::to_string(it->second),
                    fired_since(it->second + 1));
    } else if (round == kTrackStatesAfter) {
      tracking_ = true;
      seen_states.emplace(state_.value(), round);
    }
    if (opt_.incremental && work_->finish(arena, near)) {
      cands = &near;
    } else {
      for (; all_to < g_.capacity(); ++all_to)
        if (records::alive(g_, all_to)) all.push_back(all_to);
      cands = &all;
    }
  }
  rep_.converged = true;
  rep_.stop = StopKind::FixedPoint;
  rep_.stop_reason = "fixed point";
  rep_.nodes_after = g_.size();
  return std::move(rep_);
}

}  // namespace

RewriteReport run_driver(Graph& g, const RuleSet& rules, const RewriteOptions& opt, const DriverHooks* hooks) {
  return Driver(g, rules, opt, hooks).run();
}

}  // namespace rewrite
}  // namespace graphfuse
