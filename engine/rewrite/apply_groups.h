// Splitting a round's selected matches into groups that can be applied side by side.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <tbb/task_arena.h>

#include "graphfuse/graph.h"
#include "graphfuse/rules.h"
#include "match/matcher.h"
#include "memory/unfilled_allocator.h"
#include "memory/zeroed_array.h"

namespace graphfuse::rewrite {

/// True when every rewrite of `rule` is a fusion the parallel apply phase can apply on
/// its own: one root, taken over in place by the rewrite's only node (so no node is
/// created and no use of the root is rewired), an op that is written in the rule and is
/// not a constant, attributes copied from matched nodes or written as literals (nothing
/// computed from a leaf), every input a leaf or a matched node's output, no folded
/// constants, no each, no variadic list, no native, and interior nodes with outside
/// uses rejected. Such a rewrite changes only its matched nodes, and the use lists of
/// the values its matched nodes read (docs/rewriter.md, "Applying in parallel").
bool group_safe(const Rule& rule, bool calls_native);

/// A round's matches in groups: `order` holds indices into MatchResults::found, group
/// after group, each group in application order; group k is order[starts[k],
/// starts[k+1]). Groups are numbered by their first match.
struct ApplyGroups {
  std::vector<std::uint32_t, UnfilledAllocator<std::uint32_t>> order;
  std::vector<std::uint32_t, UnfilledAllocator<std::uint32_t>> starts;
  std::size_t size() const { return starts.empty() ? 0 : starts.size() - 1; }
  /// Per node: whether two groups may write its marks side by side (one match matched it
  /// as a root, and another read it): only such a node needs its marks set atomically.
  bool shared(NodeId n) const { return (flags[n / 64] >> (n % 64)) & 1u; }

  /// A bit per node, set where shared: an eighth of a byte a node, so that the applying
  /// threads, which look a node up for every mark, find it in cache, and the grouping
  /// writes 32 pages, not 256, at 10^6 nodes.
  ZeroedArray<std::uint64_t> flags;
};

/// Rounds of this many matches or more are grouped on the arena's threads by default.
inline constexpr std::size_t kThreadedGroupingFrom = 65536;

/// Puts matches (of group_safe rules, `in_order` in application order) into groups such
/// that applying the groups in any interleaving, each in order, makes exactly the
/// decisions and the graph that applying all of them in order makes. The groups (which
/// matches share one) do not depend on the order of `in_order`, only their numbering and
/// the order within each group do: a caller may pass the matches in any order and sort
/// each group afterwards (the driver does, ApplyPhase::group_round in rewrite/group_phase.cpp). Two matches share
/// a group when they match a common node (their conflict is decided in order), when they
/// read a common value (its producer's use list is edited by both, and the order of a
/// use list is part of the graph), or when one reads a value the other's rewrite removes
/// (a matched node that is not the root) or turns into or out of a constant (the root of
/// a constant). What stays apart: a match reading, as a leaf, the root of another match
/// that replaces it in place with a non-constant. The rewrite of the one edits the root's
/// use list, the other its op, inputs and attributes, and neither decision reads what
/// the other writes.
/// The matches must be legal ones (rewrite/legality.h), as the matcher hands the driver:
/// an interior node's every use is then inside its match, so a match that reads it
/// holds one of that match's nodes, and the grouping looks up only roots' and leaves' readers.
/// Returns false when the matches cannot be grouped so (a matched node that is a graph
/// input: removing it edits the graph's input list); the round is then applied in order.
/// `constant_roots[rule]`: root_can_be_constant() of each rule.
/// With `arena`, rounds of `threaded_from` matches or more are grouped by its threads
/// (the groups and flags are the same).
bool group_matches(const Graph& g, const match::MatchResults& mr, std::span<const std::uint32_t> in_order,
                   std::span<const char> constant_roots, tbb::task_arena* arena, ApplyGroups& out,
                   std::size_t threaded_from = kThreadedGroupingFrom);

/// group_matches() for the matches in the order of MatchResults::found (in_order[i] == i)
/// without a list that says so: the list is a megabyte of fresh memory a round for the
/// wide 10^6-node graph's 282,406 matches, written by one thread.
///
/// `lent`: where given (at least g.capacity() words), the per-node words the grouping
/// keeps each node's matcher in, instead of an array of its own: 4 bytes a node that a
/// round would otherwise take as fresh memory (about 1,000 page faults at 10^6 nodes,
/// 10 us each on a VM). The words of the nodes the matches matched are overwritten with
/// kLentSlotTag | position, and left so; the others are not touched. The lender must
/// read such words as none of its own (the driver lends its marks, and no round's mark
/// has the top bit set).
bool group_matches(const Graph& g, const match::MatchResults& mr, std::span<const char> constant_roots,
                   tbb::task_arena* arena, ApplyGroups& out, std::size_t threaded_from = kThreadedGroupingFrom,
                   std::span<std::uint32_t> lent = {});
/// The bit set in every word group_matches() leaves in lent slots.
inline constexpr std::uint32_t kLentSlotTag = 0x80000000u;
/// Whether a match of `rule` may have a constant as its root (Const, Constant or any op):
/// only then does group_matches look at the root's op.
bool root_can_be_constant(const Rule& rule);

}  // namespace graphfuse::rewrite
