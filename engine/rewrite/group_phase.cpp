// The apply phase side by side: a round of plain fusions in groups of matches that share
// nothing a decision or a mutation of another group depends on (apply_groups.h), the
// groups applied on the arena's threads, each in order.
#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "rewrite/driver_phases.h"

namespace graphfuse::rewrite {

// Only rounds whose every rewrite is a group_safe fusion, and none of what needs the
// order of all rewrites: hooks and traces (they report in order), per-rule times, a gate
// (its savings order the round), state tracking (it hashes before and after each
// rewrite), a format's type inference (it may note what it inferred in the graph).
bool ApplyPhase::parallel_round(const DriverContext& cx, const match::MatchResults& mr) const {
  if (!cx.arena || mr.found.size() < cx.opt.parallel_apply_from || cx.hooks || cx.opt.trace || cx.opt.rule_times ||
      cx.opt.gate || cx.record.tracking || lanes_[0]->rw.infers_types())
    return false;
  return std::all_of(mr.found.begin(), mr.found.end(),
                     [&](const match::Found& f) { return cx.sel.group_safe[f.rule]; });
}

// Groups first, then orders each group; the round is never put in order as a whole. The
// groups do not depend on the order of the matches (apply_groups.h), and the order among
// groups does not matter (each group is applied in order, the groups side by side), so
// each group needs only the order of its own matches, the order in_order would apply them
// in. A group's matches arrive in `found` order and are sorted stably by the same Key, as
// the whole round is in order_round(): the same order, tie for tie. It spares the round's
// whole array of Keys and the radix sort's second copy, fresh memory each round, for many
// small sorts.
bool ApplyPhase::group_round(DriverContext& cx, const match::MatchResults& mr) {
  // The marks lend the grouping its per-node matcher slots (apply_groups.h): memory the
  // driver has already. The words it leaves carry kLentSlotTag, the top bit, which no
  // mark of a round below kMarkRounds has: they read as unmarked in every round.
  std::span<std::uint32_t> lent;
  if (cx.opt.max_rounds < kMarkRounds - 1) {  // the last round is max_rounds + 1
    cx.grow();
    lent = cx.marks.words();
  }
  if (!group_matches(cx.g, mr, cx.sel.constant_root, &*cx.arena, groups_, kThreadedGroupingFrom, lent) ||
      groups_.size() <= 1)
    return false;
  // Each group holds its matches in found order; sorted by Key with ties kept in that
  // order, it is in application order. The Keys are built once per match and sorted
  // themselves: a comparator that built them read `found`, the rule and the position at
  // random on every comparison.
  auto before = [](const Key& a, const Key& b) { return a < b || (!(b < a) && a.idx < b.idx); };
  const std::size_t n = groups_.size();
  const std::size_t grain = std::max<std::size_t>(64, n / (static_cast<std::size_t>(cx.arena->max_concurrency()) * 16));
  cx.arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain), [&](const tbb::blocked_range<std::size_t>& r) {
      std::vector<Key> keys;
      for (std::size_t k = r.begin(); k < r.end(); ++k) {
        const auto first = groups_.order.begin() + groups_.starts[k], last = groups_.order.begin() + groups_.starts[k + 1];
        if (last - first < 2) continue;
        keys.clear();
        for (auto it = first; it != last; ++it) keys.push_back(cx.key_of(mr.found[*it], *it));
        if (std::is_sorted(keys.begin(), keys.end(), before)) continue;  // found in application order already
        std::sort(keys.begin(), keys.end(), before);
        std::transform(keys.begin(), keys.end(), first, [](const Key& key) { return key.idx; });
      }
    });
  });
  return true;
}

void ApplyPhase::apply_groups(DriverContext& cx, const match::MatchResults& mr, int round) {
  const auto threads = static_cast<std::size_t>(cx.arena->max_concurrency());
  while (lanes_.size() < threads) {
    lanes_.push_back(std::make_unique<ApplyLane>(cx.g));
  }
  const std::size_t n = groups_.size();
  // Enough ranges for the threads to balance groups of different sizes.
  const std::size_t grain = std::max<std::size_t>(1, n / (threads * 32));
  for (auto& lane : lanes_) {
    lane->rw.collect_removals_in(&lane->removals);
  }
  cx.marks.set_concurrent(true);
  cx.arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain), [&](const tbb::blocked_range<std::size_t>& r) {
      ApplyLane& lane = *lanes_[static_cast<std::size_t>(tbb::this_task_arena::current_thread_index())];
      // One thread applies these groups one after another, each in order: their matches
      // in a row.
      const std::uint32_t* first = groups_.order.data() + groups_.starts[r.begin()];
      const std::size_t count = groups_.starts[r.end()] - groups_.starts[r.begin()];
      for (std::size_t i = 0; i < count; ++i) apply_match(cx, lane, mr, mr.found[first[i]], round);
    });
  });
  cx.marks.set_concurrent(false);
  for (auto& lane : lanes_) {
    lane->rw.collect_removals_in(nullptr);
    GraphTuning::settle_removals(cx.g, lane->removals);
  }
}

}  // namespace graphfuse::rewrite
