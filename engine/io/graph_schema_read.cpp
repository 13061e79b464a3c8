// The graph schema's nodes and top level (see graph_schema_read.h), each rule written once
// for the quiet and the loud reading.
#include "graph_schema_read.h"

#include <algorithm>
#include <cstring>

#include "graph/graph_tuning.h"

namespace graphfuse::textio {

namespace {

template <std::size_t N>
bool is(std::string_view s, const char (&lit)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}

const std::string kNoName;  // `what` of a quiet reading: no message is built

}  // namespace

NodeParts::Key node_key(std::string_view key) {
  return is(key, "id")           ? NodeParts::kId
         : is(key, "op_type")    ? NodeParts::kOp
         : is(key, "inputs")     ? NodeParts::kInputs
         : is(key, "outputs")    ? NodeParts::kOutputs
         : is(key, "types")      ? NodeParts::kTypes
         : is(key, "attributes") ? NodeParts::kAttrs
                                 : NodeParts::kKeys;
}

bool read_top(const DocRef& root, const Check& c, TopParts& out) {
  if (!root.is_map())
    return c.fail(root.is_null() ? SourceLoc{c.src().file, 1, 1} : c.src().loc(root),
                  [] { return std::string("expected a mapping with a `nodes:` list (and optional `inputs:`, `outputs:`)"); });
  std::vector<YamlEntry> top;
  if (!yaml_entries(root, c, c.loud() ? std::string("graph") : kNoName, top)) return false;
  for (const YamlEntry& e : top) {
    if (e.key == "nodes") out.nodes = e.value, out.has_nodes = true;
    else if (e.key == "inputs") out.inputs = e.value, out.has_inputs = true;
    else if (e.key == "outputs") out.outputs = e.value, out.has_outputs = true;
    else if (e.key == "properties") out.properties = e.value, out.has_properties = true;
    else
      return c.fail(e.key_node, [&] { return "unknown key '" + e.key + "' (expected nodes, inputs, outputs, properties)"; });
  }
  if (!out.has_nodes) return c.fail(root, [] { return std::string("the graph has no `nodes:` list"); });
  if (!out.nodes.is_seq()) return c.fail(out.nodes, [] { return std::string("`nodes` must be a list of nodes"); });
  return true;
}

bool NodeReader::parts(const DocRef& n, NodeParts& p) const {
  p.node = n;
  if (!n.is_map()) return c_.fail(n, [] { return std::string("a node must be a mapping {id: ..., op_type: ..., inputs: [...]}"); });
  // Loud, the whole mapping's keys are checked first (a duplicate before an unknown key, as
  // yaml_entries finds them); quiet, the first problem of either kind stops.
  if (c_.loud()) {
    std::vector<YamlEntry> es;
    if (!yaml_entries(n, c_, "node", es)) return false;
    for (const YamlEntry& e : es) {
      NodeParts::Key k = node_key(e.key);
      if (k == NodeParts::kKeys)
        return c_.fail(e.key_node, [&] {
          return "node: unknown key '" + e.key + "' (expected id, op_type, inputs, outputs, attributes, types)";
        });
      p.set(k, e.value);
    }
    return true;
  }
  for (auto it = n.begin(); it != n.end(); ++it) {
    DocRef k = *it;
    DocRef v = *++it;
    if (!k.is_scalar()) return false;
    NodeParts::Key key = node_key(k.scalar());
    if (key == NodeParts::kKeys || !p.set(key, v)) return false;
  }
  return true;
}

template <class What>
bool NodeReader::name(const DocRef& n, const What& what, std::string_view& out) const {
  if (!n.is_scalar() || n.scalar().empty()) return c_.fail(n, [&] { return what() + " must be a non-empty name"; });
  out = n.scalar();
  return true;
}

OpType NodeReader::op_type(std::string_view name) {
  for (const auto& [known, op] : ops_)
    if (known == name) return op;
  OpType op = OpType::intern(name);
  if (ops_.size() < 64) ops_.emplace_back(std::string(name), op);
  return op;
}

/// s, as a view that lives as long as the batch: into the text read, or kept by the batch
/// (a decoded name lives in a tree cleared for the next node).
std::string_view NodeReader::view(std::string_view s, NodeBatch& b) const {
  if (s.empty() || (s.data() >= text_.data() && s.data() + s.size() <= text_.data() + text_.size())) return s;
  return b.kept.emplace_back(s);
}

bool NodeReader::attributes(const DocRef& n, const std::string& what, Attributes& out) const {
  std::vector<YamlEntry> es;
  if (!yaml_entries(n, c_, c_.loud() ? what + ": attributes" : kNoName, es)) return false;
  for (YamlEntry& e : es) {
    // An empty name: GraphBuilder's graph check says so (the in-order build cannot).
    if (e.key.empty() && !c_.loud()) return false;
    AttrValue v;
    if (!yaml_attr_value(e.value, c_, c_.loud() ? what + ": attribute '" + e.key + "'" : kNoName, v)) return false;
    out.set(std::move(e.key), std::move(v));
  }
  return true;
}

bool NodeReader::types(const DocRef& n, const std::string& what, std::vector<ValueType>& out) const {
  if (!n.is_seq()) return c_.fail(n, [&] { return what + ": `types` must be a list"; });
  for (const auto& t : n) {
    ValueType v;
    if (!yaml_value_type(t, c_, c_.loud() ? what + ": a type" : kNoName, v)) return false;
    out.push_back(std::move(v));
  }
  return true;
}

bool NodeReader::read(const NodeParts& p, NodeBatch& b) {
  using K = NodeParts;
  const bool loud = c_.loud();
  if (!p.has(K::kId)) return c_.fail(p.node, [] { return std::string("node has no `id`"); });
  std::string_view id;
  if (!name(p.part[K::kId], [] { return std::string("node id"); }, id)) return false;
  const std::string what = loud ? "node '" + std::string(id) + "'" : std::string();
  auto in = [&](const char* part) { return [&what, part] { return what + part; }; };
  if (!p.has(K::kOp)) return c_.fail(p.node, [&] { return what + " has no `op_type`"; });
  std::string_view op;
  if (!name(p.part[K::kOp], in(": op_type"), op)) return false;
  if (p.has(K::kOutputs) && !take_outputs_) return false;

  NodeBatch::Node& node = b.nodes.emplace_back();
  node.id = std::string(id);
  node.id_hash = GraphTuning::id_hash(node.id);
  node.op = op_type(op);
  node.pos = p.pos;
  node.inputs_begin = node.inputs_end = static_cast<std::uint32_t>(b.inputs.size());
  node.outputs_begin = node.outputs_end = static_cast<std::uint32_t>(b.output_names.size());
  if (p.has(K::kInputs)) {
    const DocRef& ins = p.part[K::kInputs];
    if (!ins.is_seq()) return c_.fail(ins, in(": `inputs` must be a list"));
    for (const auto& r : ins) {
      // null or "": an absent optional input.
      std::string_view text;
      if (!r.is_null() && !(r.is_scalar() && r.scalar().empty()) && !name(r, in(": an input"), text)) return false;
      text = view(text, b);
      b.inputs.push_back(text);
      b.input_hashes.push_back(GraphTuning::id_hash(text));
      b.input_pos.push_back(r.position());
    }
    node.inputs_end = static_cast<std::uint32_t>(b.inputs.size());
  }
  if (p.has(K::kOutputs)) {
    const DocRef& outs = p.part[K::kOutputs];
    if (!outs.is_seq()) return c_.fail(outs, in(": `outputs` must be a list"));
    for (const auto& o : outs) {
      std::string_view text;
      if (!name(o, in(": an output name"), text)) return false;
      b.output_names.emplace_back(text);
    }
    node.outputs_end = static_cast<std::uint32_t>(b.output_names.size());
    if (node.outputs_end == node.outputs_begin)
      return c_.fail(outs, [&] { return what + ": `outputs` must name at least one output"; });
  }
  const std::size_t count = std::max<std::size_t>(1, node.outputs_end - node.outputs_begin);
  if (p.types_read) {
    if (p.types_read->size() != count) return false;
    node.types = p.copy_types ? &b.kept_types.emplace_back(*p.types_read) : p.types_read;
  } else if (p.has(K::kTypes)) {
    const DocRef& ts = p.part[K::kTypes];
    if (!ts.is_seq()) return c_.fail(ts, in(": `types` must be a list"));
    if (ts.size() != count)
      return c_.fail(ts, [&] {
        return what + ": `types` has " + std::to_string(ts.size()) + " entries for " + std::to_string(count) +
               " output(s)";
      });
    std::vector<ValueType>& list = b.kept_types.emplace_back();
    if (!types(ts, what, list)) return false;
    node.types = &list;
  }
  if (p.attrs_read) node.attrs = *p.attrs_read;
  else if (p.has(K::kAttrs) && !attributes(p.part[K::kAttrs], what, node.attrs)) return false;
  return true;
}

}  // namespace graphfuse::textio
