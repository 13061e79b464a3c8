// Graph mutation told to a listener, and the application of a rule's rewrite program.
#include "rewrite/rewriter.h"

#include <algorithm>

#include "graph/graph_tuning.h"
#include "graph/storage.h"
#include "match/embedding_values.h"
#include "match/eval.h"
#include "match/program.h"

namespace graphfuse::rewrite {

void Rewriter::uses_changed(std::span<const ValueRef> values) {
  for (ValueRef v : values)
    if (v.valid()) listener_->uses_changed(v.node);
}

NodeId Rewriter::create(std::string id, OpType op, InputList inputs, Attributes attrs,
                        std::uint32_t num_outputs) {
  uses_changed(inputs);
  NodeId n = g_.add_node(std::move(id), op, std::move(inputs), std::move(attrs), num_outputs);
  if (types_) types_->infer(g_, n);
  listener_->node_created(n);
  return n;
}

void Rewriter::replace_in_place(NodeId n, OpType op, InputList inputs, Attributes attrs) {
  uses_changed(records::node(g_, n).inputs);
  uses_changed(inputs);
  const bool was_constant = is_constant(g_, ValueRef{n, 0});
  g_.set_op(n, op);
  g_.set_inputs(n, std::move(inputs));
  g_.set_attrs(n, std::move(attrs));  // shares the set with identical fused nodes
  // The node keeps the root's outputs, and their types: the rewrite computes the same
  // values. Only outputs the root had no type for are inferred.
  if (types_) types_->infer(g_, n);
  listener_->node_replaced(n, was_constant || is_constant(g_, ValueRef{n, 0}));
}

void Rewriter::replace_all_uses(ValueRef from, ValueRef to) {
  for (const Use& u : g_.consumers(from)) listener_->inputs_changed(u.node);
  const ValueRef both[] = {from, to};
  uses_changed(both);
  g_.replace_all_uses(from, to);
}

void Rewriter::erase(NodeId n) {
  uses_changed(records::node(g_, n).inputs);
  if (removals_) {
    GraphTuning::remove_node(g_, n, *removals_);
    // The handed-over sets (those not canonical: tensors, long lists; canonical ones stay
    // in the dead records) are dropped a batch at a time, which bounds what a round of
    // 10^6 removals holds until it ends.
    if (removals_->attrs.size() >= kRemovalBatch) removals_->attrs.clear();
  } else {
    g_.remove_node(n);
  }
  listener_->node_erased(n);
}

void Rewriter::take_output_name(ValueRef v, OutputInfo from) {
  OutputInfo& to = g_.output_infos(v.node)[v.port];
  to.name = std::move(from.name);
  if (to.type.dtype == DType::Undefined && !to.type.shape_known) to.type = std::move(from.type);
  listener_->output_moved(v.node);
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

// `provenance`: with the `_rule` attribute naming the rule (every created node has it; a
// RewriteGate's plan does without: no target condition reads it).
Attributes build_attrs(const Graph& g, const Rule& rule, const match::RwNode& node, const match::Embedding& e,
                       bool provenance = true) {
  Attributes out;
  for (const RwAttr& a : node.attrs) {
    if (a.kind == RwAttr::Kind::Literal) {
      out.set(a.key, a.literal);
      continue;
    }
    if (a.kind == RwAttr::Kind::Computed) {
      // The match program checked that the value is defined (value(c), natives, ...).
      if (auto v = match::eval_term(a.term, g, e, rule.compiled->match)) out.set(a.key, std::move(*v));
      continue;
    }
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
      case RwAttr::Kind::Computed: break;
    }
  }
  if (provenance) out.set("_rule", rule.name);  // which rule made this node
  return out;
}

}  // namespace

void apply_rewrite(Rewriter& rw, const Rule& rule, const match::Embedding& e, std::string* trace) {
  const match::RewriteProgram& prog = rule.compiled->rewrite;
  const match::MatchProgram& mp = rule.compiled->match;
  const Graph& g = rw.graph();
  const NodeId root = e.nodes[0];
  // The root keeps its record (and id) until the sweep below; the trace wants it after.
  const std::string& root_id = records::node(g, root).id;
  const std::string root_id_copy = trace ? root_id : std::string();
  Rewriter::Scratch& s = rw.scratch();
  // The roots' ops before they are replaced, for the trace only (naming an op takes the
  // interning table's lock, which a million rewrites should not pay for).
  std::vector<std::string> root_ops;
  if (trace)
    for (std::uint32_t r : mp.roots) root_ops.emplace_back(g.node(e.nodes[r]).op.name());

  // Every attribute is computed before the first mutation: the roots' own attributes
  // may be read by the template and are about to be replaced.
  // A set built before from the same sources is taken from the cache (attr_cache.h).
  const std::size_t k = prog.nodes.size();
  TemplateAttrCache& cache = rw.attr_cache();
  std::vector<Attributes>& attrs = s.attrs;
  attrs.resize(k);
  s.keys.resize(std::max(s.keys.size(), k));
  s.sources.resize(std::max(s.sources.size(), k));
  s.keyed.assign(k, 0);
  for (std::size_t i = 0; i < k; ++i) {
    if (TemplateAttrCache::key_of(g, rule, prog.nodes[i], e, s.keys[i])) {
      if (cache.take(s.keys[i], attrs[i])) continue;
      s.keyed[i] = 1;
      TemplateAttrCache::sources_of(g, prog.nodes[i], e, s.sources[i]);
    }
    attrs[i] = build_attrs(g, rule, prog.nodes[i], e);
  }
  // `u.op_type(...)` nodes take the matched op, read before anything changes.
  std::vector<OpType>& ops = s.ops;
  ops.clear();
  for (const auto& n : prog.nodes) ops.push_back(n.op_of >= 0 ? records::op(g, e.nodes[static_cast<std::size_t>(n.op_of)]) : n.op);
  // Constants whose values the rule folded in: removed below once nothing reads them.
  // An each's elements (`Transpose(xs)...`), read while the root still has its inputs.
  std::vector<NodeId>& elements = s.elements;
  elements.clear();
  match::append_each_nodes(g, e, mp, elements);
  std::vector<NodeId>& consts = s.consts;
  consts.clear();
  for (std::uint32_t v : prog.folded)
    if (is_constant(g, e.values[v])) consts.push_back(e.values[v].node);

  std::vector<NodeId>& created = s.created;
  created.assign(k, kNoNode);
  auto resolve = [&](const RwInput& in) -> ValueRef {
    switch (in.kind) {
      case RwInput::Kind::Value: return e.values[in.index];
      case RwInput::Kind::NodeOut: return ValueRef{e.nodes[in.index], in.port};
      case RwInput::Kind::New: return ValueRef{created[in.index], in.port};
      case RwInput::Kind::Variadic:
      case RwInput::Kind::Absent: break;
    }
    return {};
  };
  auto inputs_of = [&](const match::RwNode& n) {
    InputList ins;
    ins.reserve(n.inputs.size());
    for (const RwInput& in : n.inputs) {
      if (in.kind != RwInput::Kind::Variadic) {
        ins.push_back(resolve(in));
        continue;
      }
      for (ValueRef v : match::variadic_values(g, e, mp, in.index)) ins.push_back(v);
    }
    return ins;
  };

  std::string added, replaced;
  std::vector<char>& taken = s.taken;
  taken.assign(mp.roots.size(), 0);
  for (std::size_t i = 0; i < k; ++i) {
    const match::RwNode& n = prog.nodes[i];
    if (n.takeover >= 0) {
      auto r = static_cast<std::size_t>(n.takeover);
      taken[r] = 1;
      created[i] = e.nodes[mp.roots[r]];
      rw.replace_in_place(created[i], ops[i], inputs_of(n), std::move(attrs[i]));
      if (trace) replaced += (replaced.empty() ? "" : "; ") + std::string(ops[i].name()) + " replaces " + root_ops[r];
    } else {
      // Derived from the root's id: deterministic and readable ("relu/t").
      std::string id = rw.unique_id(root_id + "/" + n.name);
      created[i] = rw.create(id, ops[i], inputs_of(n), std::move(attrs[i]), n.num_outputs);
      if (trace) added += (added.empty() ? "" : ", ") + id;
    }
    if (s.keyed[i]) cache.remember(s.keys[i], std::move(s.sources[i]), records::node(g, created[i]).attrs);
  }
  // Roots nobody took over: their uses read the replacements; the sweep removes them.
  // A graph output among them moves onto its replacement, which takes over its name
  // once the root is gone (legality checked that it can: output_takeover).
  std::vector<std::pair<ValueRef, OutputInfo>>& moved = s.moved;
  moved.clear();
  std::size_t off = 0;
  for (std::size_t r = 0; r < mp.roots.size(); ++r) {
    std::uint32_t k = mp.root_outputs[r];
    if (!taken[r]) {
      NodeId n = e.nodes[mp.roots[r]];
      for (std::uint32_t port = 0; port < k; ++port) {
        ValueRef to = resolve(prog.replacements[off + port]);
        if (trace && port == 0)
          replaced += (replaced.empty() ? "" : "; ") + root_ops[r] + " erased, uses now read '" + g.value_name(to) + "'";
        if (g.has_graph_output(n) && g.is_output(ValueRef{n, port})) {
          OutputInfo info = port < g.node(n).outputs.size() ? g.node(n).outputs[port] : OutputInfo{};
          info.name = g.value_name(ValueRef{n, port});
          moved.emplace_back(to, std::move(info));
        }
        rw.replace_all_uses(ValueRef{n, port}, to);
      }
    }
    off += k;
  }

  // Matched nodes the rewrite no longer reads are dead now; removing one can free its
  // producer, so sweep until nothing changes (patterns are small).
  std::vector<char>& is_root = s.is_root;
  is_root.assign(e.nodes.size(), 0);
  for (std::size_t r = 0; r < mp.roots.size(); ++r) is_root[mp.roots[r]] = taken[r] ? 2 : 1;
  std::string removed;
  auto sweep = [&](NodeId n, bool listed) {
    if (!records::alive(g, n) || g.use_count(n) != 0 || g.has_graph_output(n)) return false;
    if (trace && listed) removed += (removed.empty() ? "'" : ", '") + g.node(n).id + "'";
    rw.erase(n);
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < e.nodes.size(); ++r)
      if (is_root[r] != 2) progress |= sweep(e.nodes[r], is_root[r] == 0);
    for (NodeId n : elements) progress |= sweep(n, true);
  }
  for (NodeId c : consts) sweep(c, true);
  for (auto& [v, info] : moved) {
    if (trace) replaced += "; '" + g.value_name(v) + "' takes over output name '" + info.name + "'";
    rw.take_output_name(v, std::move(info));
  }
  if (!trace) return;
  std::string line = rule.label() + " at '" + root_id_copy + "': " + replaced;
  if (!removed.empty()) line += "; removed " + removed;
  if (!added.empty()) line += "; added " + added;
  *trace = std::move(line);
}

void plan_rewrite(const Graph& g, const Rule& rule, const match::Embedding& e, std::vector<PlannedNode>& out) {
  const match::RewriteProgram& prog = rule.compiled->rewrite;
  const match::MatchProgram& mp = rule.compiled->match;
  out.resize(prog.nodes.size());
  for (std::size_t i = 0; i < prog.nodes.size(); ++i) {
    const match::RwNode& n = prog.nodes[i];
    PlannedNode& p = out[i];
    p.op = n.op_of >= 0 ? g.node(e.nodes[static_cast<std::size_t>(n.op_of)]).op : n.op;
    p.attrs = build_attrs(g, rule, n, e, false);
    p.inputs.clear();
    p.takes_over = n.takeover >= 0 ? e.nodes[mp.roots[static_cast<std::size_t>(n.takeover)]] : kNoNode;
    for (const RwInput& in : n.inputs) {
      switch (in.kind) {
        case RwInput::Kind::Value: p.inputs.push_back(e.values[in.index]); break;
        case RwInput::Kind::NodeOut: p.inputs.push_back(ValueRef{e.nodes[in.index], in.port}); break;
        case RwInput::Kind::New: p.inputs.push_back(ValueRef{kNoNode, in.index}); break;
        case RwInput::Kind::Absent: p.inputs.push_back(ValueRef{kNoNode, kAbsentInput}); break;
        case RwInput::Kind::Variadic:
          for (ValueRef v : match::variadic_values(g, e, mp, in.index)) p.inputs.push_back(v);
          break;
      }
    }
  }
}

}  // namespace graphfuse::rewrite
