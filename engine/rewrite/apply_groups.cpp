// Grouping a round's matches for the parallel apply phase: a union-find over match
// positions, fed by two passes over the matches (slots written, then read).
#include "rewrite/apply_groups.h"

#include <algorithm>
#include <atomic>
#include <memory>

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
  if (m >= kNone) return false;
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
  // Per node: a match (its position i) that matched it, and one that read it as a
  // leaf. Two passes: the first writes the slots, each match over whatever another wrote
  // there; the second, with every slot settled, unites each match with the holder of every
  // slot it wrote. All matchers of a node are then united with the one holder, and so
  // with each other, whichever write won; the same for readers. The first pass is plain
  // stores and the second plain loads (the unions aside), so a thread's cache misses
  // overlap, where a compare-and-swap per slot waited for each miss in turn.
  //
  // Every array here that a round would take fresh costs its page faults (10 us a page
  // on a VM: docs/performance.md), so the slots avoid new memory:
  // - The matcher slots are lent words where the caller has them (group_matches: the
  //   driver's marks), tagged so that the lender can tell them from its own; else an
  //   array of the grouping's own. Either way a slot is read only where this round wrote
  //   it (a matched node's), or checked against the match it names (reader_of): no
  //   filling is needed.
  // - A value whose node has one use needs no reader slot: every match that reads it as
  //   a leaf holds its one consumer, so those readers are united through the consumer's
  //   matcher slot, and a match that matched the node finds one of them there
  //   (reader_of). Most leaves of a fusion are such values (a weight, a bias, the
  //   previous layer's output), so most reader slots are never written.
  // - The reader slots come zeroed from calloc (zeroed_array.h), so pages no match
  //   writes are never faulted in; and a byte per page records which were written,
  //   because reading a page no one wrote would fault it in too (the kernel maps its
  //   zero page), at about the cost of writing it. A reader slot holds its match's
  //   position plus one (0: no reader).
  const std::size_t nodes = g.capacity();
  const auto& hot = g.storage().hot;
  auto one_use = [&](NodeId n) { return hot[n].uses.size() == 1; };
  const bool borrowed = lent.size() >= nodes && m < kLentSlotTag;
  ZeroedArray<std::uint32_t> own_slots;
  if (!borrowed) own_slots.grow_to(nodes);
  std::uint32_t* matcher = borrowed ? lent.data() : own_slots.data();
  const std::uint32_t tag = borrowed ? kLentSlotTag : 0;
  auto contains = [](const match::EmbeddingView& e, NodeId n) {
    return std::find(e.nodes.begin(), e.nodes.end(), n) != e.nodes.end();
  };
  auto slot = [](std::uint32_t& s) { return std::atomic_ref<std::uint32_t>(s); };
  ZeroedArray<std::uint32_t> reader;
  reader.grow_to(nodes);
  constexpr std::uintptr_t kPage = 4096;
  const std::uintptr_t first_page = reinterpret_cast<std::uintptr_t>(reader.data()) / kPage;
  auto page_of = [&](NodeId n) { return reinterpret_cast<std::uintptr_t>(&reader[n]) / kPage - first_page; };
  std::vector<std::uint8_t> reader_pages(nodes == 0 ? 0 : page_of(static_cast<NodeId>(nodes - 1)) + 1, 0);
  auto written = [&](NodeId n) { return std::atomic_ref<std::uint8_t>(reader_pages[page_of(n)]); };
  auto write_reader = [&](NodeId n, std::uint32_t i) {
    slot(reader[n]).store(i + 1, std::memory_order_relaxed);
    // Stored only once: the byte's cache line then stays shared between the threads.
    if (written(n).load(std::memory_order_relaxed) == 0) written(n).store(1, std::memory_order_relaxed);
  };
  // For the second pass, a reader of n plus one (0: none): its reader slot, or, for a
  // node of one use, a match that holds its consumer, from the consumer's matcher slot.
  // That slot may be from an earlier round (or, lent, the lender's own word); it names a
  // match of this round only if this round wrote it, which that match holding the
  // consumer proves. Such a holder may have matched n as well: it then shares n's group
  // already, and uniting with it changes nothing; and n is flagged as shared although no
  // other group may mark it, which costs an atomic mark or two but keeps the flags the
  // same whichever matcher's write the slot kept.
  // An interior node of one use read inside its own match (a Conv2D by its BiasAdd) is
  // the common case, and needs no look: every reader of it holds that consumer, as this
  // match does, so it is in this match's group already.
  auto reader_of = [&](NodeId n, const match::EmbeddingView& e) -> std::uint32_t {
    if (!one_use(n)) {
      if (written(n).load(std::memory_order_relaxed) == 0) return 0;
      return slot(reader[n]).load(std::memory_order_relaxed);
    }
    const NodeId c = hot[n].uses.view().begin()->node;
    if (contains(e, c)) return 0;
    const std::uint32_t word = slot(matcher[c]).load(std::memory_order_relaxed);
    if ((word & kLentSlotTag) != tag || (word & ~tag) >= m) return 0;
    const std::uint32_t h = word & ~tag;
    return contains(mr.embedding(mr.found[match_at(h)]), c) ? h + 1 : 0;
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
  over_matches([&](std::size_t begin, std::size_t end) {
    for (auto i = static_cast<std::uint32_t>(begin); i < end; ++i) {
      match::EmbeddingView e = mr.embedding(mr.found[match_at(i)]);
      for (std::size_t r = 0; r < e.nodes.size(); ++r) {
        NodeId n = e.nodes[r];
        if (n == kNoNode) continue;
        if (r != 0 && std::binary_search(inputs.begin(), inputs.end(), n)) refused.store(true, std::memory_order_relaxed);
        slot(matcher[n]).store(tag | i, std::memory_order_relaxed);
      }
      for (ValueRef v : e.values)
        if (v.valid() && !contains(e, v.node) && !one_use(v.node))
          write_reader(v.node, i);
    }
  });
  if (refused) return false;
  over_matches([&](std::size_t begin, std::size_t end) {
    for (auto i = static_cast<std::uint32_t>(begin); i < end; ++i) {
      const match::Found& f = mr.found[match_at(i)];
      match::EmbeddingView e = mr.embedding(f);
      for (std::size_t r = 0; r < e.nodes.size(); ++r) {
        NodeId n = e.nodes[r];
        if (n == kNoNode) continue;
        if (std::uint32_t h = slot(matcher[n]).load(std::memory_order_relaxed) & ~tag; h != i) groups.unite(i, h);
        // A reader of n cares when n goes away (an interior node) or may stop or start
        // being a constant (a root its rule allows to be one); else the two stay apart,
        // and both may mark n side by side.
        std::uint32_t rd = reader_of(n, e);
        if (rd == 0) continue;
        if (r != 0 || (constant_roots[f.rule] && is_constant(g, ValueRef{n, 0})))
          groups.unite(i, rd - 1);
        else
          share(n);
      }
      for (ValueRef v : e.values) {
        if (!v.valid() || contains(e, v.node) || one_use(v.node)) continue;  // one use: united through its consumer
        if (std::uint32_t h = slot(reader[v.node]).load(std::memory_order_relaxed); h != i + 1) groups.unite(i, h - 1);
      }
    }
  });
  // The reader slots, and the matcher slots where they are the grouping's own (4 bytes a
  // node each), are done with: freed before the sort's arrays are made, which then reuse
  // their memory. Held until the end, they were the round's memory peak (the wide
  // 10^6-node graph peaked 5 MB higher: docs/performance.md).
  own_slots = {};
  reader = {};
  // Counting sort by representative: groups in order of their first match, each in order.
  // The union-find's own array holds each match's representative once flattened, and one
  // array holds first the groups' sizes, then where each group's next match goes: every
  // array a round touches for the first time costs its page faults (about 1 MB and 280
  // faults each for the wide graph's 282,406 matches).
  over_matches([&](std::size_t begin, std::size_t end) { groups.flatten(begin, end); });
  std::vector<std::uint32_t> at(m + 1, 0);
  for (std::uint32_t i = 0; i < m; ++i) ++at[groups.root(i) + 1];
  out.starts.clear();
  std::uint32_t sum = 0;
  for (std::uint32_t i = 0; i < m; ++i) {
    if (groups.root(i) != i) continue;  // not a representative: its group starts elsewhere
    out.starts.push_back(sum);
    const std::uint32_t size = at[i + 1];  // read before at[i + 1] may be written, at i + 1
    at[i] = sum;
    sum += size;
  }
  out.starts.push_back(sum);
  out.order.resize(m);
  for (std::uint32_t i = 0; i < m; ++i) out.order[at[groups.root(i)]++] = match_at(i);
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
