#include "match/embedding_values.h"

namespace graphfuse::match {

std::vector<ValueRef> variadic_values(const Graph& g, const Embedding& e, const MatchProgram& p,
                                      std::uint32_t i) {
  const Variadic& v = p.variadics[i];
  const auto& ins = g.node(e.nodes[v.node]).inputs;
  if (v.start >= ins.size()) return {};
  std::vector<ValueRef> out(ins.begin() + v.start, ins.end());
  if (v.each < 0) return out;
  // The match checked every element's arity and that these inputs are present.
  for (ValueRef& x : out) {
    const auto& el = g.node(x.node).inputs;
    x = v.element_input < el.size() ? el[v.element_input] : ValueRef{};
  }
  return out;
}

void append_each_nodes(const Graph& g, const Embedding& e, const MatchProgram& p, std::vector<NodeId>& out) {
  for (const Each& ea : p.eaches) {
    const auto& ins = g.node(e.nodes[ea.node]).inputs;
    for (std::size_t k = ea.start; k < ins.size(); ++k)
      if (ins[k].valid()) out.push_back(ins[k].node);
  }
}

}  // namespace graphfuse::match
