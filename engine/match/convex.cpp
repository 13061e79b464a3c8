// The cycle check for multi-root rewrites: a search downstream of the replaced roots.
#include "match/convex.h"

#include <algorithm>
#include <unordered_set>

#include "match/embedding_values.h"

namespace graphfuse::match {

bool creates_cycle(const Graph& g, const MatchProgram& p, const Embedding& e) {
  // Reaching a matched node from outside means entering it through an input that is
  // not a pattern edge, i.e. a leaf; reaching a leaf's producer is the same cycle.
  std::vector<NodeId> matched(e.nodes.begin(), e.nodes.end());
  append_each_nodes(g, e, p, matched);
  std::unordered_set<NodeId> stop(matched.begin(), matched.end());
  for (std::uint32_t v : p.leaf_regs)
    if (e.values[v].valid()) stop.insert(e.values[v].node);
  for (std::uint32_t i = 0; i < p.variadics.size(); ++i)
    for (ValueRef v : variadic_values(g, e, p, i))
      if (v.valid()) stop.insert(v.node);
  std::unordered_set<NodeId> seen;
  std::vector<NodeId> stack;
  auto push_consumers = [&](NodeId n) {
    for (std::uint32_t port = 0; port < g.node(n).outputs.size(); ++port)
      for (const Use& u : g.consumers(ValueRef{n, port})) {
        if (seen.insert(u.node).second) stack.push_back(u.node);
      }
  };
  for (std::uint32_t r : p.roots) {
    NodeId root = e.nodes[r];
    for (std::uint32_t port = 0; port < g.node(root).outputs.size(); ++port)
      for (const Use& u : g.consumers(ValueRef{root, port})) {
        // A matched node reading a root through a pattern edge is impossible (roots are
        // never read by the pattern), so any matched consumer reads it as a leaf.
        if (stop.count(u.node)) return true;
        if (seen.insert(u.node).second) stack.push_back(u.node);
      }
  }
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    if (stop.count(n)) return true;
    push_consumers(n);
  }
  return false;
}

}  // namespace graphfuse::match
