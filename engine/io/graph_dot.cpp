// The Graphviz DOT writer: one box per node labelled with its op type and id, edges from
// producer to consumer labelled with the output port / input slot when not 0. Deterministic.
#include "graphfuse/io.h"
#include "text_values.h"

namespace graphfuse {

namespace {

/// A DOT double-quoted string; `\n` in labels is Graphviz's line break, so a real newline
/// inside an id is written as that too.
std::string dot_str(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string write_graph_dot(const Graph& g) {
  static const OpType kInput = OpType::intern(ops::kInput);
  static const OpType kConst = OpType::intern(ops::kConst);
  // DOT ids are the topological index, so odd characters in node ids only ever appear
  // inside labels.
  std::vector<NodeId> order = textio::write_order(g);
  std::vector<std::size_t> index(g.capacity(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) index[order[i]] = i;

  std::string out = "digraph graphfuse {\n  node [shape=box, fontname=\"Helvetica\"];\n"
                    "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Node& nd = g.node(order[i]);
    std::string label = std::string(nd.op.name());
    if (nd.id != label) label += "\n" + nd.id;
    out += "  n" + std::to_string(i) + " [label=" + dot_str(label);
    if (nd.op == kInput) out += ", shape=ellipse";
    else if (nd.op == kConst) out += ", shape=box, style=filled, fillcolor=\"#eeeeee\"";
    out += "];\n";
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Node& nd = g.node(order[i]);
    for (std::size_t slot = 0; slot < nd.inputs.size(); ++slot) {
      ValueRef v = nd.inputs[slot];
      if (!v.valid()) continue;
      out += "  n" + std::to_string(index[v.node]) + " -> n" + std::to_string(i);
      std::string attrs;
      if (v.port != 0) attrs += "taillabel=\"" + std::to_string(v.port) + "\"";
      if (slot != 0) attrs += std::string(attrs.empty() ? "" : ", ") + "headlabel=\"" + std::to_string(slot) + "\"";
      out += attrs.empty() ? ";\n" : " [" + attrs + "];\n";
    }
  }
  for (std::size_t k = 0; k < g.outputs().size(); ++k) {
    ValueRef v = g.outputs()[k];
    out += "  out" + std::to_string(k) + " [label=" + dot_str("output " + std::to_string(k)) +
           ", shape=plaintext];\n";
    out += "  n" + std::to_string(index[v.node]) + " -> out" + std::to_string(k) +
           (v.port != 0 ? " [taillabel=\"" + std::to_string(v.port) + "\"];\n" : ";\n");
  }
  return out + "}\n";
}

}  // namespace graphfuse
