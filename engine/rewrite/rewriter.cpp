// Graph mutation with a change log, and the application of a rule's rewrite program.
#include "rewrite/rewriter.h"

#include "match/program.h"

namespace graphfuse::rewrite {

void Rewriter::uses_changed(const std::vector<ValueRef>& values) {
  for (ValueRef v : values)
    if (v.valid()) changes_.push_back({ChangeKind::UsesChanged, v.node});
}

NodeId Rewriter::create(std::string id, OpType op, std::vector<ValueRef> inputs, Attributes attrs) {
  uses_changed(inputs);
  NodeId n = g_.add_node(std::move(id), op, std::move(inputs), std::move(attrs));
  changes_.push_back({ChangeKind::Created, n});
  return n;
}

void Rewriter::replace_in_place(NodeId n, OpType op, std::vector<ValueRef> inputs, Attributes attrs) {
  uses_changed(g_.node(n).inputs);
  uses_changed(inputs);
  g_.set_op(n, op);
  g_.set_inputs(n, std::move(inputs));
  g_.attrs(n) = std::move(attrs);
  changes_.push_back({ChangeKind::Replaced, n});
}

void Rewriter::replace_all_uses(ValueRef from, ValueRef to) {
  for (const Use& u : g_.consumers(from)) changes_.push_back({ChangeKind::InputsChanged, u.node});
  uses_changed({from, to});
  g_.replace_all_uses(from, to);
}

void Rewriter::erase(NodeId n) {
  uses_changed(g_.node(n).inputs);
  g_.remove_node(n);
  changes_.push_back({ChangeKind::Removed, n});
}

std::string Rewriter::unique_id(const std::string& base) const {
  if (!g_.find(base)) return base;
  for (int k = 2;; ++k) {
    std::string id = base + "_" + std::to_string(k);
    if (!g_.find(id)) return id;
  }
}

namespace {

using match::RwAttr;
using match::RwInput;

Attributes build_attrs(const Graph& g, const Rule& rule, const match::RwNode& node, const match::Embedding& e) {
  Attributes out;
  for (const RwAttr& a : node.attrs) {
    const Node& src = g.node(e.nodes[a.node]);
    switch (a.kind) {
      case RwAttr::Kind::Spread:
        if (out.empty()) {
          out = src.attrs;  // the common `{...conv, ...}`: one copy, no per-key lookups
          break;
        }
        for (const auto& [k, v] : src.attrs) out.set(k, v);
        break;
      case RwAttr::Kind::Literal: out.set(a.key, a.literal); break;
      case RwAttr::Kind::Copy:
        // Legality checked presence before anything was mutated.
        if (const AttrValue* v = src.attrs.find(a.src_key)) out.set(a.key, *v);
        break;
      case RwAttr::Kind::OpTypeOf: out.set(a.key, std::string(src.op.name())); break;
    }
  }
  out.set("_rule", rule.name);  // provenance: which rule made this node
  return out;
}

}  // namespace

void apply_rewrite(Rewriter& rw, const Rule& rule, const match::Embedding& e, std::string* trace) {
  const match::RewriteProgram& prog = rule.compiled->rewrite;
  const Graph& g = rw.graph();
  const NodeId root = e.nodes[0];
  const std::string root_id = g.node(root).id;
  const std::string root_op(g.node(root).op.name());

  // Every attribute is computed before the first mutation: the root's own attributes
  // may be read by the template and are about to be replaced.
  std::vector<Attributes> attrs;
  attrs.reserve(prog.nodes.size());
  for (const auto& n : prog.nodes) attrs.push_back(build_attrs(g, rule, n, e));

  std::vector<NodeId> created;
  auto resolve = [&](const RwInput& in) -> ValueRef {
    switch (in.kind) {
      case RwInput::Kind::Value: return e.values[in.index];
      case RwInput::Kind::NodeOut: return ValueRef{e.nodes[in.index], in.port};
      case RwInput::Kind::New: return ValueRef{created[in.index], in.port};
    }
    return {};
  };
  auto inputs_of = [&](const match::RwNode& n) {
    std::vector<ValueRef> ins;
    ins.reserve(n.inputs.size());
    for (const RwInput& in : n.inputs) ins.push_back(resolve(in));
    return ins;
  };

  std::size_t last = prog.erase ? prog.nodes.size() : prog.nodes.size() - 1;
  std::string added;
  for (std::size_t i = 0; i < last; ++i) {
    const match::RwNode& n = prog.nodes[i];
    // Derived from the root's id: deterministic and readable ("relu/t").
    std::string id = rw.unique_id(root_id + "/" + n.name);
    created.push_back(rw.create(id, n.op, inputs_of(n), std::move(attrs[i])));
    if (trace) added += (added.empty() ? "" : ", ") + id;
  }
  if (prog.erase) {
    rw.replace_all_uses(ValueRef{root, 0}, resolve(prog.erase_to));
    rw.erase(root);
  } else {
    const match::RwNode& n = prog.nodes[last];
    rw.replace_in_place(root, n.op, inputs_of(n), std::move(attrs[last]));
  }

  // Matched nodes the rewrite no longer reads are dead now; removing one can free its
  // producer, so sweep until nothing changes (patterns are small).
  std::string removed;
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 1; r < e.nodes.size(); ++r) {
      NodeId n = e.nodes[r];
      if (!g.alive(n) || g.use_count(n) != 0 || g.has_graph_output(n)) continue;
      if (trace) removed += (removed.empty() ? "'" : ", '") + g.node(n).id + "'";
      rw.erase(n);
      progress = true;
    }
  }
  if (!trace) return;
  std::string line = rule.label() + " at '" + root_id + "': ";
  if (prog.erase) {
    ValueRef to = resolve(prog.erase_to);
    line += root_op + " erased, uses now read '" + g.value_name(to) + "'";
  } else {
    line += std::string(prog.nodes[last].op.name()) + " replaces " + root_op;
  }
  if (!removed.empty()) line += "; removed " + removed;
  if (!added.empty()) line += "; added " + added;
  *trace = std::move(line);
}

}  // namespace graphfuse::rewrite
