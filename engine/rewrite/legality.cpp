// Legality checks: external uses, graph outputs, leaves inside the match, missing attributes.
#include "rewrite/legality.h"

namespace graphfuse::rewrite {

namespace {
int code(RejectReason r) { return static_cast<int>(r); }
}  // namespace

int check_legal(const Graph& g, const match::CompiledRule& rule, const match::Embedding& e,
                const std::vector<char>& is_output) {
  const match::MatchProgram& p = rule.match;
  const std::size_t n = e.nodes.size();
  // A leaf bound to a value made inside the match would dangle once that node is gone.
  for (std::uint32_t v : p.leaf_regs) {
    NodeId producer = e.values[v].node;
    for (std::size_t r = 0; r < n; ++r)
      if (e.nodes[r] == producer) return code(RejectReason::LeafOverlap);
  }
  for (std::size_t r = 1; r < n; ++r)
    if (is_output[e.nodes[r]]) return code(RejectReason::GraphOutput);
  // Exact arity makes every input slot of a matched node a pattern edge, so an interior
  // node used only inside the match has exactly internal_uses uses.
  for (std::size_t r = 1; r < n; ++r)
    if (g.use_count(e.nodes[r]) != p.internal_uses[r]) return code(RejectReason::ExternalUse);
  for (const auto& [reg, key] : rule.rewrite.reads)
    if (!g.node(e.nodes[reg]).attrs.has(key)) return code(RejectReason::MissingAttribute);
  if (rule.rewrite.erase) {
    NodeId root = e.nodes[0];
    if (is_output[root]) return code(RejectReason::ErasedOutput);
    // Only output 0 is rewired; other outputs must be unused for the root to go.
    if (g.use_count(root) != g.use_count(ValueRef{root, 0})) return code(RejectReason::ExternalUse);
  }
  return -1;
}

}  // namespace graphfuse::rewrite
