// The Graphviz DOT writer: one box per node labelled with its op type and id (and, on request,
// attributes and output shapes), nodes a rule made coloured per rule, edges from producer to
// consumer labelled with the output port / input slot when not 0. Deterministic.
#include <cstdint>

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

/// Long values (weights, big lists) would make a node as wide as the page.
std::string shortened(std::string s, std::size_t max = 40) {
  if (s.size() <= max) return s;
  s.resize(max - 3);
  return s + "...";
}

std::string type_text(const ValueType& t) {
  if (t.dtype == DType::Undefined && !t.shape_known) return {};
  std::string out = t.dtype == DType::Undefined ? "?" : std::string(dtype_name(t.dtype));
  if (!t.shape_known) return out;
  out += "[";
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (i) out += ",";
    if (i < t.dim_params.size() && !t.dim_params[i].empty()) out += t.dim_params[i];
    else out += t.shape[i] < 0 ? "?" : std::to_string(t.shape[i]);
  }
  return out + "]";
}

std::string node_label(const Graph& g, NodeId n, const DotOptions& o, const std::string* rule) {
  const Node& nd = g.node(n);
  std::string label = std::string(nd.op.name());
  if (nd.id != label) label += "\n" + nd.id;
  if (o.rules && rule) label += "\n[" + *rule + "]";
  if (o.attributes)
    for (const auto& [name, value] : nd.attrs)
      if (name.empty() || name[0] != '_') label += "\n" + name + " = " + shortened(format_attr_value(value));
  if (o.shapes)
    for (std::size_t k = 0; k < nd.outputs.size(); ++k) {
      std::string t = type_text(nd.outputs[k].type);
      if (!t.empty()) label += "\n" + (nd.outputs.size() > 1 ? std::to_string(k) + ": " : std::string("-> ")) + t;
    }
  return label;
}

}  // namespace

std::string rule_colour(std::string_view rule) {
  // Light fills that keep black text readable, distinct enough side by side.
  static constexpr const char* kPalette[] = {"#ffd59e", "#b9e4c9", "#c6d8ff", "#ffc4d6", "#e4d1ff",
                                             "#fff3a6", "#b8f0f0", "#ffd0b0", "#d8f5a2", "#f0c8f0"};
  std::uint32_t h = 2166136261u;  // FNV-1a: stable across runs and platforms
  for (char c : rule) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return kPalette[h % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string write_graph_dot(const Graph& g) { return write_graph_dot(g, DotOptions{}); }

std::string write_graph_dot(const Graph& g, const DotOptions& o) {
  static const OpType kInput = OpType::intern(ops::kInput);
  static const OpType kConst = OpType::intern(ops::kConst);
  auto drawn = [&](NodeId n) { return o.only.empty() || (n < o.only.size() && o.only[n]); };
  // DOT ids are the topological index, so odd characters in node ids only ever appear
  // inside labels.
  std::vector<NodeId> order = textio::write_order(g);
  std::vector<std::size_t> index(g.capacity(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) index[order[i]] = i;

  std::string out = "digraph graphfuse {\n  node [shape=box, fontname=\"Helvetica\"];\n"
                    "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!drawn(order[i])) continue;
    const Node& nd = g.node(order[i]);
    const std::string* rule = nd.attrs.get_if<std::string>("_rule");
    out += "  n" + std::to_string(i) + " [label=" + dot_str(node_label(g, order[i], o, rule));
    if (nd.op == kInput) out += ", shape=ellipse";
    else if (nd.op == kConst) out += ", shape=box, style=filled, fillcolor=\"#eeeeee\"";
    else if (o.rules && rule) {
      out += ", style=\"filled,bold\", fillcolor=\"" + rule_colour(*rule) + "\"";
      if (o.rule_links) out += ", URL=" + dot_str("#rule-" + *rule) + ", tooltip=" + dot_str("made by rule " + *rule);
    }
    out += "];\n";
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!drawn(order[i])) continue;
    const Node& nd = g.node(order[i]);
    for (std::size_t slot = 0; slot < nd.inputs.size(); ++slot) {
      ValueRef v = nd.inputs[slot];
      if (!v.valid() || !drawn(v.node)) continue;
      out += "  n" + std::to_string(index[v.node]) + " -> n" + std::to_string(i);
      std::string attrs;
      if (v.port != 0) attrs += "taillabel=\"" + std::to_string(v.port) + "\"";
      if (slot != 0) attrs += std::string(attrs.empty() ? "" : ", ") + "headlabel=\"" + std::to_string(slot) + "\"";
      out += attrs.empty() ? ";\n" : " [" + attrs + "];\n";
    }
  }
  for (std::size_t k = 0; k < g.outputs().size(); ++k) {
    ValueRef v = g.outputs()[k];
    if (!drawn(v.node)) continue;
    out += "  out" + std::to_string(k) + " [label=" + dot_str("output " + std::to_string(k)) +
           ", shape=plaintext];\n";
    out += "  n" + std::to_string(index[v.node]) + " -> out" + std::to_string(k) +
           (v.port != 0 ? " [taillabel=\"" + std::to_string(v.port) + "\"];\n" : ";\n");
  }
  return out + "}\n";
}

}  // namespace graphfuse
