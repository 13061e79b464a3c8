// The fixed-point driver: a loop over the round's phases (collect candidates, match,
// order, decide, group, apply, record) until a round applies nothing, or, reporting the
// rules still firing, until a bound. The phases are in driver_phases.h; what they share
// is in driver_context.h.
#include "rewrite/driver.h"

#include <optional>
#include <random>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/info.h>

#include "graph/storage.h"
#include "rewrite/driver_context.h"
#include "rewrite/driver_phases.h"

namespace graphfuse {

RewriteReport rewrite_graph(Graph& g, const RuleSet& rules, const RewriteOptions& opt) {
  std::string note = opt.gate ? opt.gate->prepare(g) : std::string();
  RewriteReport rep = rewrite::run_driver(g, rules, opt, nullptr);
  if (!note.empty()) rep.notes.push_back(std::move(note));
  return rep;
}

namespace rewrite {

namespace {

class Driver {
 public:
  Driver(Graph& g, const RuleSet& rules, const RewriteOptions& opt, const DriverHooks* hooks)
      : apply_(g),
        marks_(apply_.groups()),
        cx_{g, rules, opt, hooks && hooks->on_candidate ? hooks : nullptr, sel_, marks_, positions_, record_,
            arena_, work_, presence_} {}

  RewriteReport run();

 private:
  /// Threads, limits, positions, marks, worklist and op presence for the run.
  void start();
  /// The candidates of the next round: the worklist's neighbourhood of what changed, or
  /// every node.
  void collect_candidates();
  /// Adds the match phase's counts to the report and the round's stats.
  void count_matches(const match::MatchResults& mr, RoundStats& rs);

  RuleSelection sel_;
  ApplyPhase apply_;
  RoundMarks marks_;
  Positions positions_;
  RoundRecord record_;
  std::optional<tbb::task_arena> arena_;
  std::optional<Worklist> work_;
  std::optional<OpPresence> presence_;
  DriverContext cx_;
  DecidePhase decide_;
  std::size_t max_nodes_ = 0;  // live nodes past which the driver stops (RewriteOptions::max_nodes)
  std::optional<tbb::global_control> allow_;
  std::optional<std::mt19937_64> rng_;
  // Every node, kept for rounds that match everything again: removed nodes stay in it
  // (the matcher skips them) and created ones are appended.
  std::vector<NodeId> all_;
  NodeId all_to_ = 0;
  std::vector<NodeId> near_;  // a worklist round's candidates
  std::vector<NodeId>* cands_ = &all_;
};

void Driver::start() {
  const Graph& g = cx_.g;
  const RewriteOptions& opt = cx_.opt;
  RewriteReport& rep = record_.rep;
  rep.nodes_before = g.size();
  rep.gated = opt.gate != nullptr;
  sel_.select(cx_.rules, opt, rep);
  int threads = opt.threads > 0 ? opt.threads : tbb::info::default_concurrency();
  rep.threads = threads;
  // More threads than the process may use by default (--threads 8 on 2 cores, as the
  // determinism checks run): oneTBB's pool keeps one worker per allowed CPU but one, so
  // the arena would run on fewer threads than asked and print a warning to stderr. A
  // global_control for the run lets the pool grow that far (where the application set a
  // lower limit of its own, the lower one stays in force: the smallest active value wins).
  if (threads > tbb::info::default_concurrency())
    allow_.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  if (threads > 1) arena_.emplace(threads);
  max_nodes_ = opt.max_nodes > 0 ? opt.max_nodes : 8 * g.size() + 4096;
  positions_.init(g, cx_.arena_ptr());
  cx_.grow();
  for (ValueRef v : g.outputs()) marks_.is_output()[v.node] = 1;
  work_.emplace(g, cx_.rules, sel_.active);
  if (opt.shuffle_seed) rng_.emplace(*opt.shuffle_seed);
  all_ = sel_.running.empty() ? std::vector<NodeId>{} : g.nodes();
  all_to_ = g.capacity();
  presence_.emplace(g, cx_.rules, sel_.active, all_);
  record_.fired.resize(1);
}

void Driver::collect_candidates() {
  if (cx_.opt.incremental && work_->finish(cx_.arena_ptr(), near_)) {
    cands_ = &near_;
    return;
  }
  for (; all_to_ < cx_.g.capacity(); ++all_to_)
    if (records::alive(cx_.g, all_to_)) all_.push_back(all_to_);
  cands_ = &all_;
}

void Driver::count_matches(const match::MatchResults& mr, RoundStats& rs) {
  for (std::uint32_t r : sel_.running) {
    const match::RuleCounts& c = mr.counts[r];
    RuleStats& st = cx_.stats(r);
    st.candidates += c.candidates;
    st.matched += c.matched;
    for (std::size_t k = 0; k < kRejectReasons; ++k) st.rejected[k] += c.rejected[k];
    rs.candidates += c.candidates;
    rs.matched += c.matched;
  }
}

RewriteReport Driver::run() {
  start();
  Graph& g = cx_.g;
  const RewriteOptions& opt = cx_.opt;
  RewriteReport& rep = record_.rep;
  for (int round = 1;; ++round) {
    // match
    std::vector<NodeId>& candidates = *cands_;
    if (rng_) std::shuffle(candidates.begin(), candidates.end(), *rng_);
    cx_.notify(round, RewriteProgress::Phase::Match, 0, candidates.size());
    auto t0 = Clock::now();
    match::MatchResults mr = match_round(cx_, candidates);
    auto t1 = Clock::now();
    RoundStats rs;
    rs.match_ms = ms_between(t0, t1);
    count_matches(mr, rs);
    // The order matches arrive in must not matter; shuffling it proves that it does not.
    if (rng_) std::shuffle(mr.found.begin(), mr.found.end(), *rng_);
    // order: a round applied side by side is ordered group by group (group_round); any
    // other is put in order whole, here.
    const bool side_by_side = round <= opt.max_rounds && apply_.parallel_round(cx_, mr);
    std::vector<Key> keys;
    if (!side_by_side) keys = order_round(cx_, mr.found);
    rs.order_ms = ms_between(t1, Clock::now());
    // decide
    if (opt.gate) decide_.run(cx_, mr, keys, round);
    // One round past max_rounds may only confirm the fixed point.
    if (round > opt.max_rounds) {
      rs.apply_ms = ms_between(t1, Clock::now());
      rs.nodes = g.size();
      rep.per_round.push_back(rs);
      if (keys.empty()) break;
      return record_.stop_at_max_rounds(g, cx_.rules, opt, mr.found);
    }
    // group and apply
    cx_.notify(round, RewriteProgress::Phase::Apply, 0, side_by_side ? mr.found.size() : keys.size(), rs.candidates);
    work_->begin(round);
    record_.fired.emplace_back();
    apply_.begin_round();
    auto t2 = Clock::now();
    const bool grouped = side_by_side && apply_.group_round(cx_, mr);
    if (side_by_side && !grouped) {  // one group, or a graph input matched: in order after all
      keys = order_round(cx_, mr.found);
      rs.order_ms += ms_between(t2, Clock::now());
    }
    if (grouped) {
      rs.group_ms = ms_between(t2, Clock::now());
      apply_.apply_groups(cx_, mr, round);
      rs.apply_groups = apply_.groups().size();
      apply_.end(cx_, rs);
    } else if (!apply_.in_order(cx_, mr, keys, decide_, round, rs, max_nodes_)) {
      return record_.stop(g, cx_.rules, opt, StopKind::Growth,
                          "unbounded growth: " + std::to_string(g.size()) + " nodes in round " +
                              std::to_string(round) + ", over the limit of " + std::to_string(max_nodes_) +
                              " (the input had " + std::to_string(rep.nodes_before) + "; max_nodes)",
                          record_.fired_since(round - 1));
    }
    // record
    rs.apply_ms = ms_between(t1, Clock::now());
    rs.nodes = g.size();
    rep.per_round.push_back(rs);
    if (rs.applied == 0) break;
    rep.rounds = round;
    if (std::optional<RewriteReport> stopped = record_.check_state(g, cx_.rules, opt, round)) return std::move(*stopped);
    // collect the next round's candidates
    collect_candidates();
  }
  rep.converged = true;
  rep.stop = StopKind::FixedPoint;
  rep.stop_reason = "fixed point";
  rep.nodes_after = g.size();
  return std::move(rep);
}

}  // namespace

RewriteReport run_driver(Graph& g, const RuleSet& rules, const RewriteOptions& opt, const DriverHooks* hooks) {
  return Driver(g, rules, opt, hooks).run();
}

}  // namespace rewrite
}  // namespace graphfuse
