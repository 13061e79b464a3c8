// Grouping a round's matches for the parallel apply phase: union-find over the nodes
// the matches touch, in one pass in application order.
#include "rewrite/apply_groups.h"

#include <algorithm>
#include <atomic>

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
// A node's flags (group_matches).
constexpr std::uint8_t kInterior = 1;       // matched as a non-root: a rewrite removes it
constexpr std::uint8_t kMaybeConstant = 2;  // matched as a root its rule allows to be a constant
constexpr std::uint8_t kRoot = 8;           // matched as a root
static_assert((ApplyGroups::kShared & (kInterior | kMaybeConstant | kRoot)) == 0);

std::atomic_ref<std::uint32_t> at(std::vector<std::uint32_t>& v, std::size_t i) { return std::atomic_ref(v[i]); }

/// Union-find over match positions that threads unite in side by side: a root is only
/// ever linked under a smaller root (by compare-and-swap), so every root is the smallest
/// position of its set, and the sets, and so the groups and their names, do not depend
/// on the order of the unions.
class Groups {
 public:
  explicit Groups(std::size_t n) : parent_(n) {
    for (std::uint32_t i = 0; i < n; ++i) parent_[i] = i;
  }
  std::uint32_t find(std::uint32_t i) {
    for (;;) {
      std::uint32_t p = at(parent_, i).load(std::memory_order_relaxed);
      if (p == i) return i;
      std::uint32_t gp = at(parent_, p).load(std::memory_order_relaxed);
      if (gp != p) at(parent_, i).store(gp, std::memory_order_relaxed);  // halving: gp is an ancestor too
      i = gp;
    }
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    for (;;) {
      a = find(a);
      b = find(b);
      if (a == b) return;
      if (a > b) std::swap(a, b);
      std::uint32_t root = b;
      if (at(parent_, b).compare_exchange_strong(root, a, std::memory_order_acq_rel)) return;
    }
  }

 private:
  std::vector<std::uint32_t> parent_;
};

}  // namespace

bool root_can_be_constant(const Rule& rule) {
  return rule.root_ops.empty() || std::any_of(rule.root_ops.begin(), rule.root_ops.end(), is_constant_op);
}

bool group_matches(const Graph& g, const match::MatchResults& mr, std::span<const std::uint32_t> in_order,
                   std::span<const char> constant_roots, tbb::task_arena* arena, ApplyGroups& out) {
  const std::size_t m = in_order.size();
  if (m >= kNone) return false;
  std::vector<NodeId> inputs = g.inputs();
  std::sort(inputs.begin(), inputs.end());
  // Per node: the first match (position in in_order) that matched it, the first that read
  // it as a leaf, and flags. Threads go through the matches side by side: whoever finds a
  // node's slot taken unites with its holder, so every matcher of a node is united with
  // every other, and every reader with every other.
  std::vector<std::uint32_t> matcher(g.capacity(), kNone), reader(g.capacity(), kNone);
  std::vector<std::uint8_t>& flags = out.flags;
  flags.assign(g.capacity(), 0);
  // The pass is a string of locked instructions (each waits for the loads and stores
  // before it), so a slot or flag already set is read, not written again: a value read
  // by many matches, or a node matched twice, costs one plain load per further match.
  // Why skipping keeps the pairing below: a slot seen taken is what the compare-and-swap
  // would have failed on, and its holder is united with this match. Flags seen set were
  // set by an earlier matcher of the node, which this match is united with through the
  // matcher slot, and that matcher's pairing with the node's readers holds for both.
  auto claim = [](std::vector<std::uint32_t>& slots, NodeId n, std::uint32_t i) {
    std::uint32_t holder = at(slots, n).load(std::memory_order_seq_cst);
    if (holder != kNone) return holder;
    return at(slots, n).compare_exchange_strong(holder, i, std::memory_order_seq_cst) ? kNone : holder;
  };
  auto set_flags = [&flags](NodeId n, std::uint8_t bits, std::memory_order order) {
    std::atomic_ref<std::uint8_t> f(flags[n]);
    if ((f.load(std::memory_order_seq_cst) & bits) != bits) f.fetch_or(bits, order);
  };
  // Only a node some rule may match as a constant root is looked at: the rest need no
  // load of the node's record.
  auto constant = [&](NodeId n, std::uint8_t f) { return (f & kMaybeConstant) != 0 && is_constant(g, ValueRef{n, 0}); };
  Groups groups(m);
  std::atomic<bool> refused{false};
  auto pass = [&](std::size_t begin, std::size_t end) {
    for (auto i = static_cast<std::uint32_t>(begin); i < end; ++i) {
      const match::Found& f = mr.found[in_order[i]];
      match::EmbeddingView e = mr.embedding(f);
      for (std::size_t r = 0; r < e.nodes.size(); ++r) {
        NodeId n = e.nodes[r];
        if (n == kNoNode) continue;
        const bool interior = r != 0;
        if (interior && std::binary_search(inputs.begin(), inputs.end(), n)) refused = true;
        if (std::uint32_t holder = claim(matcher, n, i); holder != kNone) groups.unite(i, holder);
        // The matcher's side of a matcher/reader pair: flags written after the matcher
        // slot, then the reader slot read; a reader writes its slot, then reads the
        // flags. Sequentially consistent, so at least one of the two sees the other.
        std::uint8_t mine = interior ? kInterior : kRoot | (constant_roots[f.rule] ? kMaybeConstant : 0);
        set_flags(n, mine, std::memory_order_seq_cst);
        // A reader of n cares when n goes away or stops (or starts) being a constant;
        // else the two may stay apart, and both mark n.
        std::uint32_t rd = at(reader, n).load(std::memory_order_seq_cst);
        if (rd != kNone) {
          if (interior || constant(n, mine)) groups.unite(i, rd);
          else set_flags(n, ApplyGroups::kShared, std::memory_order_relaxed);
        }
      }
      for (ValueRef v : e.values) {
        if (!v.valid() || std::find(e.nodes.begin(), e.nodes.end(), v.node) != e.nodes.end()) continue;
        if (std::uint32_t holder = claim(reader, v.node, i); holder != kNone) groups.unite(i, holder);
        std::uint8_t fl = std::atomic_ref(flags[v.node]).load(std::memory_order_seq_cst);
        if ((fl & kInterior) != 0 || constant(v.node, fl)) groups.unite(i, at(matcher, v.node).load(std::memory_order_seq_cst));
        else if ((fl & kRoot) != 0) set_flags(v.node, ApplyGroups::kShared, std::memory_order_relaxed);
      }
    }
  };
  if (arena != nullptr && m >= 65536)
    arena->execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m, 4096),
                        [&](const tbb::blocked_range<std::size_t>& r) { pass(r.begin(), r.end()); });
    });
  else
    pass(0, m);
  if (refused) return false;
  // The claim slots (4 bytes a node each) are done with: freed before the sort's arrays
  // are made, which then reuse their memory. Held until the end, they were the round's
  // memory peak (the wide 10^6-node graph peaked 5 MB higher: docs/performance.md).
  std::vector<std::uint32_t>().swap(matcher);
  std::vector<std::uint32_t>().swap(reader);
  // Counting sort by representative: groups in order of their first match, each in order.
  std::vector<std::uint32_t> rep(m), count(m + 1, 0);
  for (std::uint32_t i = 0; i < m; ++i) ++count[(rep[i] = groups.find(i)) + 1];
  out.starts.clear();
  std::vector<std::uint32_t> at(m + 1, 0);
  std::uint32_t sum = 0;
  for (std::uint32_t i = 0; i < m; ++i) {
    if (rep[i] != i) continue;  // not a representative: its group starts elsewhere
    out.starts.push_back(sum);
    at[i] = sum;
    sum += count[i + 1];
  }
  out.starts.push_back(sum);
  out.order.resize(m);
  for (std::uint32_t i = 0; i < m; ++i) out.order[at[rep[i]]++] = in_order[i];
  return true;
}

}  // namespace graphfuse::rewrite
