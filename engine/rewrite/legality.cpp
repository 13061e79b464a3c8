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
  // An each's elements are interior nodes too, each read once by the match (check_each
  // made them distinct).
  if (!keep)
    for (const match::Each& ea : p.eaches) {
      const auto& ins = g.node(e.nodes[ea.node]).inputs;
      for (std::size_t k = ea.start; k < ins.size(); ++k) {
        if (is_output[ins[k].node]) return code(RejectReason::GraphOutput);
        if (g.use_count(ins[k].node) != 1) return code(RejectReason::ExternalUse);
      }
    }
  for (const auto& [reg, key] : rule.rewrite.reads)
    if (!g.node(e.nodes[reg]).attrs.has(key)) return code(RejectReason::MissingAttribute);
  // A root no template node takes over is rewired to its replacements and removed: it
  // must not be a graph output (that would rename the output), and only the outputs the
  // pattern names are rewired, so others must be unused.
  for (std::size_t i = 0; i < p.roots.size(); ++i) {
    if (taken_over(rule.rewrite, i)) continue;
    NodeId r = e.nodes[p.roots[i]];
    // Rare (one node in thousands is an output), so the full check runs only here.
    if (is_output[r] && output_takeover(g, rule, e).block != OutputBlock::None) return code(RejectReason::ErasedOutput);
    // When the pattern names every output, all uses are rewired: nothing to count (a
    // per-port count scans the node's uses, O(fan-out) per match).
    if (p.root_outputs[i] >= g.node(r).outputs.size()) continue;
    std::size_t named = 0;
    for (std::uint32_t port = 0; port < p.root_outputs[i]; ++port) named += g.use_count(ValueRef{r, port});
    if (g.use_count(r) != named) return code(RejectReason::ExternalUse);
  }
  if (p.roots.size() > 1 && match::creates_cycle(g, p, e)) return code(RejectReason::Cycle);
  return -1;
}

namespace {
// The value a root output reads after the rewrite; `fresh` for an output of a node the
// rewrite creates (nothing else reads or names it yet).
ValueRef survivor_of(const match::RwInput& in, const match::Embedding& e, bool& fresh) {
  fresh = false;
  switch (in.kind) {
    case match::RwInput::Kind::Value: return e.values[in.index];
    case match::RwInput::Kind::NodeOut: return ValueRef{e.nodes[in.index], in.port};
    case match::RwInput::Kind::New: fresh = true; return ValueRef{};
    case match::RwInput::Kind::Variadic:
    case match::RwInput::Kind::Absent: break;
  }
  return ValueRef{};
}
}  // namespace

OutputTakeover output_takeover(const Graph& g, const match::CompiledRule& rule, const match::Embedding& e) {
  const match::MatchProgram& p = rule.match;
  // (survivor, name) pairs decided so far: a value takes one name only.
  std::vector<std::pair<match::RwInput, std::string>> named;
  std::size_t off = 0;
  for (std::size_t i = 0; i < p.roots.size(); off += p.root_outputs[i], ++i) {
    if (taken_over(rule.rewrite, i)) continue;
    const NodeId r = e.nodes[p.roots[i]];
    if (!g.has_graph_output(r)) continue;
    for (std::uint32_t port = 0; port < g.node(r).outputs.size(); ++port) {
      const ValueRef out{r, port};
      if (!g.is_output(out)) continue;
      OutputTakeover t;
      t.output = out;
      if (port >= p.root_outputs[i]) {
        t.block = OutputBlock::NotReplaced;
        return t;
      }
      const match::RwInput& in = rule.rewrite.replacements[off + port];
      bool fresh = false;
      t.survivor = survivor_of(in, e, fresh);
      if (!fresh) {
        if (!t.survivor.valid()) t.block = OutputBlock::Absent;
        else if (g.node(t.survivor.node).op.name() == ops::kInput) t.block = OutputBlock::GraphInput;
        else if (g.is_output(t.survivor)) t.block = OutputBlock::OtherOutput;
        else if (is_constant(g, t.survivor))
          for (const Use& u : g.consumers(t.survivor))
            if (std::find(e.nodes.begin(), e.nodes.end(), u.node) == e.nodes.end()) t.block = OutputBlock::SharedInitializer;
        if (t.block != OutputBlock::None) return t;
      }
      std::string name = g.value_name(out);
      for (const auto& [prev, prev_name] : named)
        if (prev == in && prev_name != name) {
          t.block = OutputBlock::TwoNames;
          t.other = prev_name;
          return t;
        }
      named.emplace_back(in, std::move(name));
    }
  }
  return {};
}

std::string describe(const Graph& g, const OutputTakeover& t) {
  const std::string out = "graph output '" + g.value_name(t.output) + "'";
  const std::string surv = t.survivor.valid() ? "'" + g.value_name(t.survivor) + "'" : std::string("a new node");
  switch (t.block) {
    case OutputBlock::None: return out + " passes its name to " + surv;
    case OutputBlock::Absent: return out + " would read an absent value";
    case OutputBlock::GraphInput:
      return out + " would move onto " + surv + ", a graph input, whose name must stay; the output would be renamed";
    case OutputBlock::SharedInitializer:
      return out + " would move onto the constant " + surv +
             ", which nodes outside the match also read; it cannot take the output's name";
    case OutputBlock::OtherOutput:
      return out + " would move onto " + surv + ", already a graph output under its own name; one value has one name";
    case OutputBlock::TwoNames:
      return out + " and graph output '" + t.other + "' would both move onto " + surv + ", which can take one name only";
    case OutputBlock::NotReplaced:
      return out + " is an output of the root that the rewrite does not replace";
  }
  return out;
}

}  // namespace graphfuse::rewrite
