// Grouping a round's matches for the parallel apply phase: a union-find over match
// positions, fed by two passes over the matches (slots written, then read).
#include "rewrite/apply_groups.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "graph/storage.h"
#include "graphfuse/cost.h"
#include "match/program.h"

namespace graphfuse::rewrite {

bool group_safe(const Rule& rule, bool calls_native) {
  const match::MatchProgram& mp = rule.compiled->match;
  const match::RewriteProgram& rp = rule.compiled->rewrite;
  if (calls_native || mp.roots.size() != 1 || !mp.eaches.empty() || !mp.variadics.empty() ||
      mp.on_external_use != match::ExternalUse::Reject)
    return false;
  if (rp.erase || !rp.folded.empty() || rp.nodes.size() != 1) return false;
  const match::RwNode& n = rp.nodes[0];
  if (n.takeover != 0 || n.op_of >= 0 || is_constant_op(n.op)) return false;
  for (const match::RwInput& in : n.inputs)
    if (in.kind == match::RwInput::Kind::New || in.kind == match::RwInput::Kind::Variadic) return false;
  return std::none_of(n.attrs.begin(), n.attrs.end(),
                      [](const match::RwAttr& a) { return a.kind == match::RwAttr::Kind::Computed; });
}

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

/// Union-find over match positions that threads unite in side by side: a root is only
/// ever linked under a smaller root (by compare-and-swap), so every root is the smallest
/// position of its set, and the sets, and so the groups and their names, do not depend
/// on the order of the unions.
class Groups {
 public:
  /// Positions [0, n), each its own set once init() has covered them all.
  explicit Groups(std::size_t n) : parent_(new std::uint32_t[n]) {}
  void init(std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) parent_[i] = static_cast<std::uint32_t>(i);
  }
  std::uint32_t find(std::uint32_t i) {
    for (;;) {
      std::uint32_t p = at(i).load(std::memory_order_relaxed);
      if (p == i) return i;
      std::uint32_t gp = at(p).load(std::memory_order_relaxed);
      if (gp != p) at(i).store(gp, std::memory_order_relaxed);  // halving: gp is an ancestor too
      i = gp;
    }
  }
  /// find() that writes nothing, for flatten().
  std::uint32_t root_of(std::uint32_t i) {
    for (std::uint32_t p; (p = at(i).load(std::memory_order_relaxed)) != i;) i = p;
    return i;
  }
  /// Once every union is made: points each of [begin, end) straight at its root, so that
  /// root(i) is a load. Threads may flatten side by side: every store writes a root, which
  /// the others' walks read as a valid ancestor (a find() halving here could store a
  /// non-root over a root another thread had written).
  void flatten(std::size_t begin, std::size_t end) {
    for (auto i = static_cast<std::uint32_t>(begin); i < end; ++i) at(i).store(root_of(i), std::memory_order_relaxed);
  }
  /// After flatten() of every position.
  std::uint32_t root(std::uint32_t i) const { return parent_[i]; }
  /// After flatten(), a representative's entry may hold a count instead of itself:
  /// root() is then no longer valid for it, only for the other matches of its group.
  void set_count(std::uint32_t i, std::uint32_t count) { parent_[i] = kCounted | count; }
  bool counted(std::uint32_t i) const { return (parent_[i] & kCounted) != 0; }
  std::uint32_t count(std::uint32_t i) const { return parent_[i] & ~kCounted; }
  /// Positions and counts must stay below this bit (group() refuses larger rounds).
  static constexpr std::uint32_t kCounted = 0x80000000u;
  void unite(std::uint32_t a, std::uint32_t b) {
    for (;;) {
      a = find(a);
      b = find(b);
      if (a == b) return;
      if (a > b) std::swap(a, b);
      std::uint32_t root = b;
      if (at(b).compare_exchange_strong(root, a, std::memory_order_acq_rel)) return;
    }
  }

 private:
  std::atomic_ref<std::uint32_t> at(std::uint32_t i) { return std::atomic_ref(parent_[i]); }
  std::unique_ptr<std::uint32_t[]> parent_;
};

}  // namespace

bool root_can_be_constant(const Rule& rule) {
  return rule.root_ops.empty() || std::any_of(rule.root_ops.begin(), rule.root_ops.end(), is_constant_op);
}

namespace {

/// group_matches() over m matches, the i-th of which is found[match_at(i)].
template <class MatchAt>
bool group(const Graph& g, const match::MatchResults& mr, std::size_t m, const MatchAt& match_at,
           std::span<const char> constant_roots, tbb::task_arena* arena, ApplyGroups& out, std::size_t threaded_from,
           std::span<std::uint32_t> lent) {
  if (m >= Groups::kCounted) return false;
  std::vector<NodeId> inputs = g.inputs();
  std::sort(inputs.begin(), inputs.end());
  // A big round's loops run on the arena's threads, the node arrays' first touch among
  // them (fresh pages are the dearest part of filling them).
  const bool threaded = arena != nullptr && m >= threaded_from;
  const std::size_t grain = std::clamp<std::size_t>(m / 64, 64, 4096);
  auto split = [&](std::size_t n, auto&& body) {
    if (!threaded) return body(std::size_t{0}, n);
    arena->execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain),
                        [&](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end()); });
    });
  };
  auto over_matches = [&](auto&& body) { split(m, body); };
  // Per node, a match (its position i) that matched it: its matcher slot. Two passes:
  // the first writes the slots, each match over whatever another wrote there; the
  // second, with every slot settled, unites each match with the holder of every slot it
  // wrote. All matchers of a node are then united with the one holder, and so with each
  // other, whichever write won. The first pass is plain stores and the second plain loads
  // (the unions aside), so a thread's cache misses overlap, where a compare-and-swap per
  // slot waited for each miss in turn.
  //
  // The readers of a node (the matches that hold one of its consumers) need no slots of
  // their own: the second pass walks the node's use list, in order, to the first consumer
  // some match of this round holds, and unites with that holder. Every reader of the node
  // stops at the same consumer (its own, at the latest), so all of them meet in the
  // holder's group. A node whose first held consumer lies past kScanLimit uses (a hub read
  // by a few matches at the end of a long list) is noted instead, and its readers are
  // united after the pass, sorted by node; that list is empty on common graphs.
  //
  // Every array here that a round would take fresh costs its page faults (dear on a VM), so the grouping avoids new memory:
  // - The matcher slots are lent words where the caller has them (group_matches: the
  //   driver's marks), tagged so that the lender can tell them from its own; else an
  //   array of the grouping's own. Either way a slot is read only where this round wrote
  //   it (a matched node's), or checked against the match it names (held_by): no
  //   filling is needed.
  // - Readers found through use lists cost no array at all. Reader slots (4 bytes a node,
  //   written where a leaf of several uses was read) took about 940 fresh pages a round
  //   on the wide 10^6-node graph, whose leaves are spread over every page.
  const std::size_t nodes = g.capacity();
  const auto& hot = g.storage().hot;
  const bool borrowed = lent.size() >= nodes && m < kLentSlotTag;
  ZeroedArray<std::uint32_t> own_slots;
  if (!borrowed) own_slots.grow_to(nodes);
  std::uint32_t* matcher = borrowed ? lent.data() : own_slots.data();
  const std::uint32_t tag = borrowed ? kLentSlotTag : 0;
  auto contains = [](const match::EmbeddingView& e, NodeId n) {
    return std::find(e.nodes.begin(), e.nodes.end(), n) != e.nodes.end();
  };
  auto slot = [](std::uint32_t& s) { return std::atomic_ref<std::uint32_t>(s); };
  // The match of this round that holds node c, plus one (0: none). The slot may be from
  // an earlier round (or, lent, the lender's own word); it names a match of this round
  // only if this round wrote it, which that match holding c proves.
  auto held_by = [&](NodeId c) -> std::uint32_t {
    const std::uint32_t word = slot(matcher[c]).load(std::memory_order_relaxed);
    if ((word & kLentSlotTag) != tag || (word & ~tag) >= m) return 0;
    const std::uint32_t h = word & ~tag;
    return contains(mr.embedding(mr.found[match_at(h)]), c) ? h + 1 : 0;
  };
  // The first reader of n in use-list order, for match e: the holder of n's first
  // consumer that some match holds, plus one; `self` where that consumer is e's own (e
  // is then in its holder's group already); 0 where no consumer is held; kFar where none
  // is among the first kScanLimit.
  constexpr std::uint32_t kSelf = kNone, kFar = kNone - 1;
  constexpr std::size_t kScanLimit = 64;
  auto first_reader = [&](NodeId n, const match::EmbeddingView& e) -> std::uint32_t {
    std::size_t seen = 0;
    for (const Use& u : hot[n].uses.view()) {
      if (contains(e, u.node)) return kSelf;
      if (std::uint32_t h = held_by(u.node)) return h;
      if (++seen == kScanLimit) return kFar;
    }
    return 0;
  };
  out.flags.assign_zero((nodes + 63) / 64);
  auto share = [&](NodeId n) {  // sets n's flag; other threads set bits of the same word
    std::atomic_ref<std::uint64_t> word(out.flags[n / 64]);
    const std::uint64_t bit = std::uint64_t{1} << (n % 64);
    if ((word.load(std::memory_order_relaxed) & bit) == 0) word.fetch_or(bit, std::memory_order_relaxed);
  };
  Groups groups(m);
  over_matches([&](std::size_t begin, std::size_t end) { groups.init(begin, end); });
  std::atomic<bool> refused{false};
  out.order.resize(m);  // written by this pass first (UnfilledAllocator), by the sort at the end
  over_matches([&](std::size_t begin, std::size_t end) {
    std::fill(out.order.begin() + static_cast<std::ptrdiff_t>(begin), out.order.begin() + static_cast<std::ptrdiff_t>(end), 0u);
    for (auto i = static_cast<std::uint32_t>(begin); i < end; ++i) {
      match::EmbeddingView e = mr.embedding(mr.found[match_at(i)]);
      for (std::size_t r = 0; r < e.nodes.size(); ++r) {
        NodeId n = e.nodes[r];
        if (n == kNoNode) continue;
        if (r != 0 && std::binary_search(inputs.begin(), inputs.end(), n)) refused.store(true, std::memory_order_relaxed);
        slot(matcher[n]).store(tag | i, std::memory_order_relaxed);
      }
    }
  });
  if (refused) return false;
  // Nodes whose readers lie past kScanLimit: (node, what the match is to it, match).
  enum Role : std::uint8_t { kReader, kRootJoins, kRootShares };
  struct Far {
    NodeId node;
    Role role;
    std::uint32_t match;
    auto operator<=>(const Far&) const = default;
  };
  std::vector<Far> far;
  std::mutex far_mutex;
  auto note_far = [&](NodeId n, Role role, std::uint32_t i) {
    std::lock_guard lock(far_mutex);
    far.push_back({n, role, i});
  };
  over_matches([&](std::size_t begin, std::size_t end) {
    // A leaf's first reader is the same for every match that reads it, but for the
    // match that holds the consumer itself (kSelf), which is that reader. Neighbouring
    // matches often read the same leaves (the wide graph's branches share a block's
    // input, weights and bias), so the last few are kept: a repeat costs no walk.
    struct Seen {
      NodeId node = kNoNode;
      std::uint32_t reader = 0;  // as first_reader() gives it, kSelf turned into its match
    };
    std::array<Seen, 16> seen{};
    for (auto i = static_cast<std::uint32_t>(begin); i < end; ++i) {
      const match::Found& f = mr.found[match_at(i)];
      match::EmbeddingView e = mr.embedding(f);
      for (std::size_t r = 0; r < e.nodes.size(); ++r) {
        NodeId n = e.nodes[r];
        if (n == kNoNode) continue;
        if (std::uint32_t h = slot(matcher[n]).load(std::memory_order_relaxed) & ~tag; h != i) groups.unite(i, h);
        // A reader of the root cares when it may stop or start being a constant (a root
        // its rule allows to be one); else the two stay apart, and both may mark it side
        // by side. An interior node's readers need no look: its every use is inside the
        // match (legality: a group_safe rule rejects interior nodes with outside uses),
        // so a reader holds one of the match's nodes and joins its group through that
        // node's slot.
        if (r != 0) continue;
        const std::uint32_t rd = first_reader(n, e);
        if (rd == 0 || rd == kSelf) continue;
        const bool joins = constant_roots[f.rule] && is_constant(g, ValueRef{n, 0});
        if (rd == kFar)
          note_far(n, joins ? kRootJoins : kRootShares, i);
        else if (joins)
          groups.unite(i, rd - 1);
        else
          share(n);
      }
      for (ValueRef v : e.values) {
        if (!v.valid() || contains(e, v.node)) continue;
        Seen& last = seen[v.node % seen.size()];
        if (last.node != v.node) {
          const std::uint32_t rd = first_reader(v.node, e);
          last = {v.node, rd == kSelf ? i + 1 : rd};
        }
        if (last.reader == kFar) note_far(v.node, kReader, i);
        else if (last.reader != 0 && last.reader != i + 1) groups.unite(i, last.reader - 1);
      }
    }
  });
  // The far nodes' readers, each node's in one group, and its matchers as above. Sorted,
  // the list is the same whatever the threads' interleaving (and the unions are not
  // order-dependent anyway).
  std::sort(far.begin(), far.end());
  for (std::size_t a = 0, b; a < far.size(); a = b) {
    for (b = a; b < far.size() && far[b].node == far[a].node; ++b) {
    }
    auto readers = std::find_if(far.begin() + a, far.begin() + b, [](const Far& x) { return x.role == kReader; });
    if (readers == far.begin() + b) continue;
    for (auto it = far.begin() + a; it != far.begin() + b; ++it) {
      if (it->role == kReader || it->role == kRootJoins) groups.unite(it->match, readers->match);
      else share(it->node);
    }
  }
  own_slots = {};
  // A counting sort by representative: groups in order of their first match, each in
  // order. Flattened, the union-find's array points each match at its representative
  // (its group's first match), and each representative's own entry, which no find()
  // reads any more, holds its group's count, then where the group's next match goes: no
  // other array of a word per match or per group (every array a round touches for the
  // first time costs its page faults; the default 10^6-node graph has 10^5 groups).
  over_matches([&](std::size_t begin, std::size_t end) { groups.flatten(begin, end); });
  std::size_t n = 0;
  for (std::uint32_t i = 0; i < m; ++i) {
    if (groups.root(i) == i) {  // a representative comes before its group's other matches
      groups.set_count(i, 1);
      ++n;
    } else {
      groups.set_count(groups.root(i), groups.count(groups.root(i)) + 1);
    }
  }
  out.starts.resize(n + 1);
  split(n + 1, [&](std::size_t begin, std::size_t end) {
    std::fill(out.starts.begin() + static_cast<std::ptrdiff_t>(begin), out.starts.begin() + static_cast<std::ptrdiff_t>(end), 0u);
  });
  std::uint32_t sum = 0;
  for (std::uint32_t i = 0, k = 0; i < m; ++i) {
    if (!groups.counted(i)) continue;
    const std::uint32_t size = groups.count(i);
    out.starts[k++] = sum;
    groups.set_count(i, sum);
    sum += size;
  }
  out.starts[n] = sum;
  for (std::uint32_t i = 0; i < m; ++i) {
    const std::uint32_t r = groups.counted(i) ? i : groups.root(i);
    const std::uint32_t at = groups.count(r);
    out.order[at] = match_at(i);
    groups.set_count(r, at + 1);
  }
  return true;
}

}  // namespace

bool group_matches(const Graph& g, const match::MatchResults& mr, std::span<const std::uint32_t> in_order,
                   std::span<const char> constant_roots, tbb::task_arena* arena, ApplyGroups& out,
                   std::size_t threaded_from) {
  return group(g, mr, in_order.size(), [&](std::size_t i) { return in_order[i]; }, constant_roots, arena, out,
               threaded_from, {});
}

bool group_matches(const Graph& g, const match::MatchResults& mr, std::span<const char> constant_roots,
                   tbb::task_arena* arena, ApplyGroups& out, std::size_t threaded_from, std::span<std::uint32_t> lent) {
  return group(g, mr, mr.found.size(), [](std::size_t i) { return static_cast<std::uint32_t>(i); }, constant_roots,
               arena, out, threaded_from, lent);
}

}  // namespace graphfuse::rewrite
