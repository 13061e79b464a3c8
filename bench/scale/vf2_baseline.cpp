// The VF2 baseline: a general subgraph search per pattern, the way a rewriter without
// compiled search plans would find matches. The benchmark times it against the matcher.
#include "vf2_baseline.h"

#include <algorithm>
#include <boost/graph/vf2_sub_graph_iso.hpp>

#include "graphfuse/boost_graph.h"

namespace graphfuse::bench {

namespace {

/// A pattern edge: output `port` of the producer into input `slot` of the consumer.
struct PatternEdge {
  std::uint32_t port = 0;
  std::uint32_t slot = 0;
};
using PatternGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                           PatternNode, PatternEdge>;

}  // namespace

std::optional<PatternShape> pattern_shape(const match::MatchProgram& p, std::string* why) {
  using match::Opcode;
  PatternShape s;
  s.nodes.resize(p.num_node_regs);
  // Value register -> the (node register, slot) it was loaded from.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> loaded_from(p.num_value_regs, {0, 0});
  auto fail = [&](const std::string& msg) -> std::optional<PatternShape> {
    if (why) *why = msg;
    return std::nullopt;
  };
  for (const match::Instr& in : p.code) {
    switch (in.op) {
      case Opcode::CheckOp: s.nodes[in.a].ops = p.op_sets[in.aux]; break;
      case Opcode::CheckArity: s.nodes[in.a].arity = static_cast<int>(in.b); break;
      case Opcode::LoadInput: loaded_from[in.c] = {in.a, in.b}; break;
      case Opcode::Producer:
        s.edges.push_back({in.c, in.b, loaded_from[in.a].first, loaded_from[in.a].second});
        break;
      case Opcode::ValueIs:
        s.edges.push_back({in.b, in.c, loaded_from[in.a].first, loaded_from[in.a].second});
        break;
      case Opcode::Accept: break;
      case Opcode::SameValue: return fail("a leaf used twice");
      case Opcode::CheckAttr: return fail("attribute checks");
      case Opcode::Fork:
      case Opcode::Jump: return fail("alternatives (fork)");
      default: return fail("a step VF2 has no counterpart for");  // the language grows
    }
  }
  return s;
}

std::vector<NodeId> vf2_roots(const Graph& big, const PatternShape& shape) {
  PatternGraph pat;
  for (const PatternNode& n : shape.nodes) boost::add_vertex(n, pat);
  for (const auto& e : shape.edges) boost::add_edge(e.from, e.to, PatternEdge{e.port, e.slot}, pat);

  auto same_vertex = [&](PatternGraph::vertex_descriptor pv, NodeId gv) {
    if (!big.alive(gv)) return false;
    const Node& v = big.node(gv);
    const PatternNode& pn = pat[pv];
    if (pn.arity >= 0 && v.inputs.size() != static_cast<std::size_t>(pn.arity)) return false;
    return pn.ops.empty() || std::find(pn.ops.begin(), pn.ops.end(), v.op) != pn.ops.end();
  };
  auto same_edge = [&](PatternGraph::edge_descriptor pe, GraphEdge ge) {
    return pat[pe].port == ge.port && pat[pe].slot == ge.slot;
  };
  std::vector<NodeId> roots;
  auto found = [&](auto small_to_big, auto /*big_to_small*/) {
    roots.push_back(static_cast<NodeId>(boost::get(small_to_big, 0)));
    return true;  // keep searching: VF2 enumerates every embedding
  };
  boost::vf2_subgraph_mono(pat, big, found, boost::vertex_order_by_mult(pat),
                           boost::edges_equivalent(same_edge).vertices_equivalent(same_vertex));
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

}  // namespace graphfuse::bench
