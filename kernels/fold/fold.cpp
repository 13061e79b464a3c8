// Constant folding: nodes whose inputs are all constants become Consts holding their result.
#include "graphfuse/kernels/fold.h"

#include <map>
#include <set>

#include "core/util.h"
#include "executor/node_errors.h"
#include "executor/random_data.h"
#include "graphfuse/subgraph_reads.h"

namespace graphfuse::kernels {

FoldScope fold_scope_from_name(std::string_view name) {
  if (name == "off" || name == "none") return FoldScope::Off;
  if (name == "auto" || name == "rules") return FoldScope::RuleCreated;
  if (name == "all") return FoldScope::All;
  throw Error("unknown fold mode '" + std::string(name) + "' (expected auto, all or off)");
}

namespace {

const OpType& const_op() {
  static const OpType k = OpType::intern(ops::kConst);
  return k;
}

// The data behind a constant value, or nullopt (not a constant, or no data). ONNX
// Constant nodes with value_float(s)/value_int(s) are evaluated by their kernel.
std::optional<Tensor> constant_data(const Graph& g, ValueRef v) {
  if (!is_constant(g, v) || v.port != 0) return std::nullopt;
  if (const Tensor* t = constant_tensor(g, v)) {
    if (t->has_data()) return *t;
    return std::nullopt;
  }
  const Node& n = g.node(v.node);
  if (n.op.name() != "Constant") return std::nullopt;
  try {
    return run_op(KernelSet::Reference, "Constant", {}, n.attrs).at(0);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Node n becomes Const(value = t) in place; edges to its former inputs are dropped.
void make_const(Graph& g, NodeId n, Tensor t) {
  Attributes attrs;
  attrs.set("value", t);
  if (const AttrValue* rule = g.node(n).attrs.find("_rule")) attrs.set("_rule", *rule);
  g.set_inputs(n, {});
  g.set_op(n, const_op());
  g.attrs(n) = std::move(attrs);
  OutputInfo& out = g.output_infos(n).at(0);
  out.type.dtype = t.dtype;
  out.type.shape = t.shape;
  out.type.shape_known = true;
  out.type.dim_params.clear();
}

}  // namespace

FoldReport fold_constants(Graph& g, const FoldOptions& options) {
  FoldReport report;
  if (options.scope == FoldScope::Off) return report;
  static const OpType kInput = OpType::intern(ops::kInput);
  const KernelRegistry& reg = registry(KernelSet::Reference);
  std::set<NodeId> fed;      // constants that fed a folded node: removal candidates
  std::set<NodeId> derived;  // folded here from a rule's value: their readers may fold too
  auto from_rule = [&](const Node& n) {
    if (n.attrs.has("_rule")) return true;
    for (const ValueRef& in : n.inputs)
      if (in.valid() && (derived.count(in.node) || g.node(in.node).attrs.has("_rule"))) return true;
    return false;
  };
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (n.op == kInput || is_constant(g, {id, 0}) || n.inputs.empty() || n.outputs.size() != 1) continue;
    // RuleCreated: a node a rule created, or one that reads a constant a rule made (the
    // arithmetic on a Shape a rule replaced by its value); the model's own constant
    // arithmetic, which reads only the model's constants, stays.
    if (options.scope == FoldScope::RuleCreated && !from_rule(n)) continue;
    std::vector<Tensor> inputs;
    bool all_const = true;
    for (const ValueRef& in : n.inputs) {
      if (!in.valid()) {
        inputs.push_back(Tensor{DType::Undefined, {}, nullptr});  // an absent optional input
        continue;
      }
      auto t = constant_data(g, in);
      if (!t) {
        all_const = false;
        break;
      }
      inputs.push_back(std::move(*t));
    }
    if (!all_const) continue;
    const std::string op(n.op.name());
    if (!reg.has(op)) {
      report.skipped.push_back(n.id + ": no kernel for op '" + op + "'");
      continue;
    }
    Tensor result;
    try {
      result = run_op(KernelSet::Reference, op, inputs, n.attrs, 1).at(0);
    } catch (const Error& e) {
      report.skipped.push_back(n.id + ": " + e.message());
      continue;
    }
    if (result.num_elements() > options.max_elements) {
      report.skipped.push_back(n.id + ": result too large (" + shape_str(result.shape) + ")");
      continue;
    }
    for (const ValueRef& in : n.inputs)
      if (in.valid()) fed.insert(in.node);
    report.folded.push_back({n.id, op});
    derived.insert(id);
    make_const(g, id, std::move(result));
  }
  // Removing a constant can leave no other constant without users (constants have no
  // inputs), so one sweep in id order suffices.
  const SubgraphReads subgraphs(g);
  for (NodeId c : fed) {
    if (!g.alive(c) || !is_constant(g, {c, 0}) || g.use_count(c) != 0 || g.has_graph_output(c)) continue;
    if (subgraphs.may_read(g.value_name({c, 0}))) continue;
    report.removed.push_back(g.node(c).id);
    g.remove_node(c);
  }
  return report;
}

namespace {
// The shape a data-less constant stands for, or nullopt when it has none.
std::optional<Shape> declared_shape(const Node& n) {
  const Tensor* value = n.attrs.get_if<Tensor>("value");
  if (auto s = n.attrs.get_if<std::vector<std::int64_t>>("shape"); s && (!value || value->shape.empty()))
    return *s;
  if (value) return value->shape;
  return std::nullopt;
}

bool needs_data(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.op != const_op()) return false;  // ONNX Constant nodes always carry their value
  const Tensor* value = n.attrs.get_if<Tensor>("value");
  return !(value && value->has_data());
}

void fill(Graph& g, NodeId id, Tensor t) {
  g.attrs(id).set("value", std::move(t));
}
}  // namespace

std::size_t materialize_constants(Graph& g, std::uint64_t seed) {
  std::size_t filled = 0;
  for (NodeId id : g.nodes()) {
    if (!needs_data(g, id)) continue;
    const Node& n = g.node(id);
    auto shape = declared_shape(n);
    if (!shape) throw node_error(g, n, "constant has neither data nor a shape");
    if (const Tensor* v = n.attrs.get_if<Tensor>("value"); v && v->dtype != DType::Float32)
      throw node_error(g, n, "cannot make random data of type " + std::string(dtype_name(v->dtype)));
    Tensor data;
    try {
      data = random_tensor(seed, n.id, *shape, role_of_constant(g, id, *shape));
    } catch (const Error& e) {
      throw node_error(g, n, e.message());  // a declared shape too large to allocate
    }
    fill(g, id, std::move(data));
    ++filled;
  }
  return filled;
}

std::vector<TensorDiff> verify_graphs(const Graph& before, const Graph& after, const ExecOptions& options,
                                      double rtol, double atol) {
  Graph b = before, a = after;
  materialize_constants(b, options.seed);
  for (NodeId id : a.nodes()) {
    if (!needs_data(a, id)) continue;
    auto shape = declared_shape(a.node(id));
    auto same = b.find(a.node(id).id);
    if (!shape || !same || !is_constant(b, {*same, 0})) continue;
    const Tensor* t = constant_tensor(b, {*same, 0});
    if (t && t->has_data() && t->shape == *shape) fill(a, id, *t);
  }
  materialize_constants(a, options.seed);  // constants the rewrite created
  return verify_rewrite(b, a, options, rtol, atol);
}

std::string format_diffs(const std::vector<TensorDiff>& diffs) {
  std::string out;
  char buf[160];
  for (const TensorDiff& d : diffs) {
    if (!d.shape_ok) {
      out += d.name + ": shapes differ FAIL\n";
      continue;
    }
    std::snprintf(buf, sizeof buf, ": max_abs %.3g, max_rel %.3g, max_abs/max|ref| %.3g %s\n", d.max_abs,
                  d.max_rel, d.max_ref > 0 ? d.max_abs / d.max_ref : d.max_abs, d.pass ? "PASS" : "FAIL");
    out += d.name + buf;
  }
  return out;
}

}  // namespace graphfuse::kernels
