// Grouping a round's matches for the parallel apply phase: union-find over the nodes
// the matches touch, in one pass in application order.
#include "rewrite/apply_groups.h"

#include <algorithm>

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
// Flags in a node's `matcher` word (group_matches), above the match position.
constexpr std::uint32_t kInterior = 0x80000000u;       // matched as a non-root: a rewrite removes it
constexpr std::uint32_t kMaybeConstant = 0x40000000u;  // matched as a root that may be a constant
constexpr std::uint32_t kIndex = 0x3fffffffu;

/// Union-find over match positions; the smaller position becomes the representative,
/// so a group is named by its first match.
class Groups {
 public:
  explicit Groups(std::size_t n) : parent_(n) {
    for (std::uint32_t i = 0; i < n; ++i) parent_[i] = i;
  }
  std::uint32_t find(std::uint32_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a > b) std::swap(a, b);
    parent_[b] = a;
  }

 private:
  std::vector<std::uint32_t> parent_;
};

}  // namespace

bool root_can_be_constant(const Rule& rule) {
  return rule.root_ops.empty() || std::any_of(rule.root_ops.begin(), rule.root_ops.end(), is_constant_op);
}

bool group_matches(const Graph& g, const match::MatchResults& mr, std::span<const std::uint32_t> in_order,
                   std::span<const char> constant_roots, ApplyGroups& out) {
  const std::size_t m = in_order.size();
  if (m > kIndex) return false;
  std::vector<NodeId> inputs = g.inputs();
  std::sort(inputs.begin(), inputs.end());
  // Per node, in one word (one cache line visited, not two): the first match (position
  // in in_order) that matched it, with kInterior once any match matched it as a
  // non-root and kMaybeConstant when a match matched it as a root its rule allows to be
  // a constant; and in the high half, the first match that read it as a leaf.
  struct Seen {
    std::uint32_t matcher = kNone, reader = kNone;
  };
  std::vector<Seen> seen(g.capacity());
  // Only a node some rule may match as a constant is looked at: the rest need no load
  // of the node's record.
  auto constant = [&](NodeId n, std::uint32_t mk) { return (mk & kMaybeConstant) != 0 && is_constant(g, ValueRef{n, 0}); };
  Groups groups(m);
  for (std::uint32_t i = 0; i < m; ++i) {
    const match::Found& f = mr.found[in_order[i]];
    match::EmbeddingView e = mr.embedding(f);
    for (std::size_t r = 0; r < e.nodes.size(); ++r) {
      NodeId n = e.nodes[r];
      if (n == kNoNode) continue;
      const bool interior = r != 0;
      if (interior && std::binary_search(inputs.begin(), inputs.end(), n)) return false;
      Seen& s = seen[n];
      if (s.matcher == kNone) s.matcher = i;
      else groups.unite(i, s.matcher & kIndex);
      if (interior) s.matcher |= kInterior;
      else if (constant_roots[f.rule]) s.matcher |= kMaybeConstant;
      // A reader of n cares when n goes away or stops (or starts) being a constant.
      if (s.reader != kNone && (interior || constant(n, s.matcher))) groups.unite(i, s.reader);
    }
    for (ValueRef v : e.values) {
      if (!v.valid() || std::find(e.nodes.begin(), e.nodes.end(), v.node) != e.nodes.end()) continue;
      Seen& s = seen[v.node];
      if (s.reader == kNone) s.reader = i;
      else groups.unite(i, s.reader);
      if (s.matcher != kNone && ((s.matcher & kInterior) != 0 || constant(v.node, s.matcher)))
        groups.unite(i, s.matcher & kIndex);
    }
  }
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
