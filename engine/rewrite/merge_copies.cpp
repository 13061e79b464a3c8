// Merging the copies of one computation that a rewrite made (graphfuse/merge_copies.h).
#include "graphfuse/merge_copies.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

namespace graphfuse {

namespace {

constexpr std::string_view kRuleAttr = "_rule";

bool nondeterministic(OpType op) {
  const std::string_view name = op.local_name();
  return name.rfind("Random", 0) == 0 || name == "Multinomial" || name == "Bernoulli" || name == "Dropout";
}

bool holds_subgraph(const Attributes& attrs) {
  for (const auto& entry : attrs)
    if (std::holds_alternative<Opaque>(entry.second)) return true;
  return false;
}

// Equal attribute sets, `_rule` (which rule made the node) aside.
bool same_attrs(const Attributes& a, const Attributes& b) {
  std::size_t na = 0, nb = 0;
  for (const auto& [key, value] : a) {
    if (key == kRuleAttr) continue;
    ++na;
    const AttrValue* other = b.find(key);
    if (!other || !(*other == value)) return false;
  }
  for (const auto& entry : b) nb += entry.first != kRuleAttr;
  return na == nb;
}

// A node without inputs is a copy only when it is a constant: two rule-made literals of one
// value (each rewrite makes its own `[3]`) are one, and so become the nodes reading them.
bool constant(OpType op) {
  const std::string_view name = op.name();
  return name == "Const" || name == "Constant";
}

bool candidate(const Graph& g, NodeId n) {
  const Node& nd = g.node(n);
  return nd.attrs.has(kRuleAttr) && (!nd.inputs.empty() || constant(nd.op)) && !g.has_graph_output(n) &&
         g.use_count(n) > 0 && !nondeterministic(nd.op) && !holds_subgraph(nd.attrs);
}

}  // namespace

std::size_t merge_rule_copies(Graph& g, NodeId first_new) {
  std::vector<NodeId> made;
  for (NodeId n = first_new; n < g.capacity(); ++n)
    if (g.alive(n) && g.node(n).attrs.has(kRuleAttr)) made.push_back(n);
  if (made.size() < 2) return 0;
  // By id: the copy kept is the one whose id sorts first, whatever order the rewrite
  // created them in.
  std::sort(made.begin(), made.end(), [&](NodeId a, NodeId b) { return g.node(a).id < g.node(b).id; });
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::size_t, std::size_t>;  // op, first input, #inputs, #outputs
  std::size_t merged = 0;
  // Merging two copies can make their readers copies (F(K1) and F(K2) once K2 reads as K1):
  // passes repeat until one merges nothing.
  for (bool again = true; again;) {
    again = false;
    std::map<Key, std::vector<NodeId>> seen;
    for (NodeId n : made) {
      if (!candidate(g, n)) continue;  // merged away already: no readers left
      const Node& nd = g.node(n);
      const ValueRef first = nd.inputs[0];
      const Key key{nd.op.index(), first.valid() ? first.node : kNoNode, nd.inputs.size(), nd.outputs.size()};
      std::vector<NodeId>& same_key = seen[key];
      const auto original = std::find_if(same_key.begin(), same_key.end(), [&](NodeId m) {
        const Node& md = g.node(m);
        return md.op == nd.op && md.inputs == nd.inputs && same_attrs(md.attrs, nd.attrs);
      });
      if (original == same_key.end()) {
        same_key.push_back(n);
        continue;
      }
      const auto outs = static_cast<std::uint32_t>(nd.outputs.size());
      for (std::uint32_t port = 0; port < outs; ++port) g.replace_all_uses(ValueRef{n, port}, ValueRef{*original, port});
      ++merged;
      again = true;
    }
  }
  return merged;
}

}  // namespace graphfuse
