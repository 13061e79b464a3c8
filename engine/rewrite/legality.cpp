// Legality checks: external uses, graph outputs, leaves inside the match, missing
// attributes, roots that are rewired, and cycles through several roots.
#include "rewrite/legality.h"

#include <algorithm>

#include "match/convex.h"

namespace graphfuse::rewrite {

namespace {
int code(RejectReason r) { return static_cast<int>(r); }

// Roots and takeovers are a handful per rule, so scanning beats building a table: this
// runs for every embedding the matcher finds, on all threads, and must not allocate.
bool is_root(const match::MatchProgram& p, std::size_t reg) {
  return std::find(p.roots.begin(), p.roots.end(), reg) != p.roots.end();
}
bool taken_over(const match::RewriteProgram& rw, std::size_t root_index) {
  return std::any_of(rw.nodes.begin(), rw.nodes.end(),
                     [&](const match::RwNode& t) { return t.takeover == static_cast<std::int32_t>(root_index); });
}
}  // namespace

int check_legal(const Graph& g, const match::CompiledRule& rule, const match::Embedding& e,
                const std::vector<char>& is_output) {
  const match::MatchProgram& p = rule.match;
  const std::size_t n = e.nodes.size();
  // `on_external_use: duplicate` keeps interior nodes that others still read; the
  // sweep after the rewrite removes only those left without uses.
  const bool keep = p.on_external_use == match::ExternalUse::Duplicate;
  // A leaf bound to a value made inside the match would dangle once that node is gone.
  if (!keep)
    for (std::uint32_t v : p.leaf_regs) {
      NodeId producer = e.values[v].node;
      for (std::size_t r = 0; r < n; ++r)
        if (e.nodes[r] == producer) return code(RejectReason::LeafOverlap);
    }
  for (std::size_t r = 0; r < n && !keep; ++r)
    if (!is_root(p, r) && is_output[e.nodes[r]]) return code(RejectReason::GraphOutput);
  // Exact arity makes every input slot of a matched node a pattern edge, so an interior
  // node used only inside the match has exactly internal_uses uses.
  for (std::size_t r = 0; r < n && !keep; ++r)
    if (!is_root(p, r) && g.use_count(e.nodes[r]) != p.internal_uses[r]) return code(RejectReason::ExternalUse);
  for (const auto& [reg, key] : rule.rewrite.reads)
    if (!g.node(e.nodes[reg]).attrs.has(key)) return code(RejectReason::MissingAttribute);
  // A root no template node takes over is rewired to its replacements and removed: it
  // must not be a graph output (that would rename the output), and only the outputs the
  // pattern names are rewired, so others must be unused.
  for (std::size_t i = 0; i < p.roots.size(); ++i) {
    if (taken_over(rule.rewrite, i)) continue;
    NodeId r = e.nodes[p.roots[i]];
    if (is_output[r]) return code(RejectReason::ErasedOutput);
    std::size_t named = 0;
    for (std::uint32_t port = 0; port < p.root_outputs[i]; ++port) named += g.use_count(ValueRef{r, port});
    if (g.use_count(r) != named) return code(RejectReason::ExternalUse);
  }
  if (p.roots.size() > 1 && match::creates_cycle(g, p, e)) return code(RejectReason::Cycle);
  return -1;
}

}  // namespace graphfuse::rewrite
