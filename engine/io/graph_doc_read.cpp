// The YAML/JSON graph schema (docs/graph-formats.md) -> GraphBuilder -> Graph, errors at the values'
// positions.
#include "graph_doc_read.h"

#include <algorithm>

#include "graphfuse/io.h"

namespace graphfuse::textio {

Graph GraphDocReader::read(const DocRef& root) {
  if (!root.is_map())
    src_.fail(root.is_null() ? SourceLoc{src_.file, 1, 1} : src_.loc(root),
              "expected a mapping with a `nodes:` list (and optional `inputs:`, `outputs:`)");
  auto top = yaml_entries(root, src_, "graph");
  const DocRef *nodes = nullptr, *inputs = nullptr, *outputs = nullptr, *props = nullptr;
  for (const YamlEntry& e : top) {
    if (e.key == "nodes") nodes = &e.value;
    else if (e.key == "inputs") inputs = &e.value;
    else if (e.key == "outputs") outputs = &e.value;
    else if (e.key == "properties") props = &e.value;
    else src_.fail(e.key_node, "unknown key '" + e.key + "' (expected nodes, inputs, outputs, properties)");
  }
  if (!nodes) src_.fail(root, "the graph has no `nodes:` list");
  if (!nodes->is_seq()) src_.fail(*nodes, "`nodes` must be a list of nodes");
  builder_.reserve(nodes->size());
  for (const auto& n : *nodes) add_node(n);
  return finish(inputs, outputs, props);
}

void GraphDocReader::add_node(const DocRef& n) { add_node(node(n)); }

void GraphDocReader::add_node(PendingNode p) {
  if (p.op == ops::kInput) input_ops_.push_back(p.id);
  builder_.add_node(std::move(p));
}

Graph GraphDocReader::finish(const DocRef* inputs, const DocRef* outputs, const DocRef* props) {
  if (inputs) {
    for (const auto& r : list(*inputs, [] { return std::string("`inputs`"); })) {
      PendingRef ref = value_ref(r, [] { return std::string("a graph input"); });
      // A graph input need not be listed among the nodes: it is then an Input node.
      if (!builder_.has_node(ref.name)) {
        PendingNode in;
        in.id = ref.name;
        in.op = std::string(ops::kInput);
        in.loc = ref.loc;
        builder_.add_node(std::move(in));
      }
      builder_.add_graph_input(std::move(ref));
    }
  } else {
    for (const auto& id : input_ops_) builder_.add_graph_input(PendingRef{id, -1, false, {}});
  }
  if (outputs)
    for (const auto& r : list(*outputs, [] { return std::string("`outputs`"); }))
      builder_.add_graph_output(value_ref(r, [] { return std::string("a graph output"); }));
  Graph g = builder_.build(src_.file);
  set_properties(g, props, src_);
  return g;
}

void set_properties(Graph& g, const DocRef* properties, const YamlSource& src) {
  if (properties)
    for (const YamlEntry& e : yaml_entries(*properties, src, "properties"))
      g.properties().set(e.key, yaml_attr_value(e.value, src, "property '" + e.key + "'"));
}

// The `what` arguments below name the value in an error and are called only then: building
// those strings for every value of a 10^6 node file cost a tenth of its load.
template <class What>
const DocRef& GraphDocReader::list(const DocRef& n, const What& what) {
  if (!n.is_seq()) src_.fail(n, what() + " must be a list");
  return n;
}

template <class What>
std::string GraphDocReader::name(const DocRef& n, const What& what) {
  if (n.is_scalar() && !n.scalar().empty()) return std::string(n.scalar());
  return yaml_name(n, src_, what());  // fails, with yaml_name's message
}

template <class What>
PendingRef GraphDocReader::value_ref(const DocRef& n, const What& what, bool may_be_absent) {
  if (may_be_absent && (n.is_null() || (n.is_scalar() && n.scalar().empty())))
    return PendingRef{"", -1, true, src_.loc(n)};
  return PendingRef{name(n, what), -1, false, src_.loc(n)};
}

PendingNode GraphDocReader::node(const DocRef& n) {
  PendingNode p;
  p.loc = src_.loc(n);
  if (!n.is_map()) src_.fail(n, "a node must be a mapping {id: ..., op_type: ..., inputs: [...]}");
  auto es = yaml_entries(n, src_, "node");
  const DocRef *id = nullptr, *op = nullptr, *ins = nullptr, *outs = nullptr, *attrs = nullptr, *types = nullptr;
  for (const YamlEntry& e : es) {
    if (e.key == "id") id = &e.value;
    else if (e.key == "op_type") op = &e.value;
    else if (e.key == "inputs") ins = &e.value;
    else if (e.key == "outputs") outs = &e.value;
    else if (e.key == "attributes") attrs = &e.value;
    else if (e.key == "types") types = &e.value;
    else src_.fail(e.key_node, "node: unknown key '" + e.key + "' (expected id, op_type, inputs, outputs, attributes, types)");
  }
  if (!id) src_.fail(n, "node has no `id`");
  p.id = name(*id, [] { return std::string("node id"); });
  std::string what = "node '" + p.id + "'";
  auto in = [&](const char* part) { return [&what, part] { return what + part; }; };
  if (!op) src_.fail(n, what + " has no `op_type`");
  p.op = name(*op, in(": op_type"));
  if (ins)
    for (const auto& r : list(*ins, in(": `inputs`"))) p.inputs.push_back(value_ref(r, in(": an input"), true));
  if (outs) {
    for (const auto& o : list(*outs, in(": `outputs`"))) p.output_names.push_back(name(o, in(": an output name")));
    if (p.output_names.empty()) src_.fail(*outs, what + ": `outputs` must name at least one output");
  }
  if (types) {
    const DocRef& ts = list(*types, in(": `types`"));
    std::size_t count = std::max<std::size_t>(1, p.output_names.size());
    if (ts.size() != count)
      src_.fail(*types, what + ": `types` has " + std::to_string(ts.size()) + " entries for " +
                            std::to_string(count) + " output(s)");
    for (const auto& t : ts) p.output_types.push_back(yaml_value_type(t, src_, what + ": a type"));
  }
  if (attrs)
    for (const YamlEntry& e : yaml_entries(*attrs, src_, what + ": attributes"))
      p.attrs.set(e.key, yaml_attr_value(e.value, src_, what + ": attribute '" + e.key + "'"));
  return p;
}

// The in-order reading keeps to node()'s rules; whatever node() would refuse is a
// SchemaProblem (node() names it), and the messages' `what` texts are not built.
void InOrderDocReader::add_node(const DocRef& n) {
  static const std::string kLater;  // GraphDocReader names the value
  if (!n.is_map()) throw SchemaProblem{};
  enum { kId, kOp, kInputs, kAttrs, kTypes, kKeys };
  DocRef part[kKeys];
  bool seen[kKeys] = {};
  for (auto it = n.begin(); it != n.end(); ++it) {
    DocRef k = *it;
    DocRef v = *++it;
    if (!k.is_scalar()) throw SchemaProblem{};
    std::string_view key = k.scalar();
    if (key == "outputs") throw GiveUp{};  // output names: GraphBuilder's
    int i = key == "id" ? kId : key == "op_type" ? kOp : key == "inputs" ? kInputs
          : key == "attributes" ? kAttrs : key == "types" ? kTypes : kKeys;
    if (i == kKeys || seen[i]) throw SchemaProblem{};  // an unknown or repeated key
    seen[i] = true;
    part[i] = v;
  }
  auto name = [](const DocRef& r) {
    if (!r.is_scalar() || r.scalar().empty()) throw SchemaProblem{};
    return r.scalar();
  };
  if (!seen[kId] || !seen[kOp]) throw SchemaProblem{};
  std::string id(name(part[kId]));
  OpType op = op_type(name(part[kOp]));
  inputs_.clear();
  if (seen[kInputs]) {
    if (!part[kInputs].is_seq()) throw SchemaProblem{};
    for (const auto& r : part[kInputs]) {
      // value_ref's rule: null or "" is an absent optional input.
      if (r.is_null() || (r.is_scalar() && r.scalar().empty())) inputs_.push_back(ValueRef{});
      else inputs_.push_back(builder_.resolve(name(r)));
    }
  }
  const ValueType* type = nullptr;
  ValueType t;
  if (seen[kTypes]) {
    if (!part[kTypes].is_seq() || part[kTypes].size() != 1) throw SchemaProblem{};
    t = yaml_value_type(*part[kTypes].begin(), src_, kLater);
    type = &t;
  }
  Attributes attrs;
  if (seen[kAttrs])
    for (const YamlEntry& e : yaml_entries(part[kAttrs], src_, kLater)) {
      if (e.key.empty()) throw GiveUp{};  // GraphBuilder's graph check says so
      attrs.set(e.key, yaml_attr_value(e.value, src_, kLater));
    }
  builder_.add_node(std::move(id), op, InputList(inputs_.begin(), inputs_.end()), std::move(attrs),
                    src_.loc(n), {}, type ? std::span<const ValueType>(type, 1) : std::span<const ValueType>());
}

OpType InOrderDocReader::op_type(std::string_view name) {
  for (const auto& [known, op] : ops_)
    if (known == name) return op;
  OpType op = OpType::intern(name);
  if (ops_.size() < 64) ops_.emplace_back(std::string(name), op);
  return op;
}

Graph finish_in_order(InOrderBuilder& builder, const DocRef* inputs, const DocRef* outputs, const DocRef* properties,
                      const YamlSource& src) {
  auto names = [](const DocRef* list, const auto& take) {
    if (!list->is_seq()) throw SchemaProblem{};
    for (const auto& r : *list) {
      if (!r.is_scalar() || r.scalar().empty()) throw SchemaProblem{};
      take(r);
    }
  };
  if (inputs) names(inputs, [&](const DocRef& r) { builder.add_graph_input(r.scalar(), src.loc(r)); });
  else builder.inputs_from_input_nodes();
  if (outputs) names(outputs, [&](const DocRef& r) { builder.add_graph_output(builder.resolve(r.scalar())); });
  Graph g = builder.finish();
  set_properties(g, properties, src);
  return g;
}

Graph InOrderDocReader::finish(const DocRef* inputs, const DocRef* outputs, const DocRef* properties) {
  return finish_in_order(builder_, inputs, outputs, properties, src_);
}

}  // namespace graphfuse::textio
