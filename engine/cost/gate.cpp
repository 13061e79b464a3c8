// The target gate: a rewrite is applied only when the target has a kernel for every node
// it creates and, with the cost model, when the estimate before minus after pays.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "graphfuse/cost.h"

namespace graphfuse {

namespace {

bool is_constant_node(const Graph& g, ValueRef v) { return v.valid() && is_constant_op(g.node(v.node).op); }

std::string ms_text(double us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000.0);
  return buf;
}

// Whether an input of a planned node is a constant: a graph constant, or a planned node
// found constant.
bool constant_input(const Graph& g, ValueRef v, const std::vector<char>& constant) {
  if (v.valid()) return is_constant_node(g, v);
  return v.port < constant.size() && constant[v.port];
}

// The integer value of a scalar constant input (a planned Const or a graph Const).
std::optional<std::int64_t> scalar_of(const Graph& g, const GateCandidate& c, ValueRef v) {
  const Attributes* attrs = nullptr;
  if (v.valid()) attrs = &g.node(v.node).attrs;
  else if (v.port < c.planned.size()) attrs = &c.planned[v.port].attrs;
  const Tensor* t = attrs ? attrs->get_if<Tensor>("value") : nullptr;
  if (!t || t->num_elements() != 1 || !t->has_data()) return std::nullopt;
  if (t->dtype == DType::Int32) return *t->as<std::int32_t>();
  if (t->dtype == DType::Int64) return *t->as<std::int64_t>();
  return std::nullopt;
}

// A constant computed from constants (folded before any run). A concatenation (merged
// weights) adds up its inputs along the axis (ONNX's attribute, TensorFlow's last input);
// anything else is as large as the largest constant it reads, so that the nodes reading it
// get a size.
ValueType constant_result(const Graph& g, const GateCandidate& c, const PlannedNode& p, const std::vector<ValueType>& in) {
  std::string_view op = p.op.name();
  std::optional<std::int64_t> axis;
  std::size_t parts = in.size();
  if (op == "Concat") {
    if (const auto* a = p.attrs.get_if<std::int64_t>("axis")) axis = *a;
  } else if (op == "ConcatV2" && !p.inputs.empty()) {
    axis = scalar_of(g, c, p.inputs.back());
    --parts;
  }
  ValueType out;
  for (std::size_t k = 0; k < parts; ++k) {
    const ValueType& t = in[k];
    if (!t.shape_known) continue;
    if (!out.shape_known) out = t;
    else if (axis && t.shape.size() == out.shape.size()) {
      std::int64_t r = static_cast<std::int64_t>(t.shape.size());
      std::int64_t a = *axis < 0 ? *axis + r : *axis;
      if (a >= 0 && a < r) out.shape[static_cast<std::size_t>(a)] += t.shape[static_cast<std::size_t>(a)];
    } else if (!axis && t.shape.size() > out.shape.size()) {
      out = t;
    }
  }
  return out;
}

// The type of a new node that takes over no root. A convolution (a horizontal fusion's
// merged one) is shaped like a matched convolution of the same input, with as many
// channels as its weight gives; any other node is sized like the first non-constant value
// it reads (layout and elementwise helpers keep the element count).
ValueType new_node_type(const Graph& g, const GateCandidate& c, const PlannedNode& p, const std::vector<ValueType>& in,
                        const std::vector<char>& constant) {
  std::string_view op = p.op.name();
  if (op.find("Conv") != std::string_view::npos && p.inputs.size() >= 2 && p.inputs[0].valid() && in[1].shape_known &&
      !in[1].shape.empty()) {
    bool nhwc = op.find('.') == std::string_view::npos && op != "Conv" && op != "ConvTranspose";
    for (NodeId n : c.matched) {
      if (n == kNoNode || g.node(n).op != p.op || g.node(n).inputs.empty() || g.node(n).inputs[0] != p.inputs[0]) continue;
      ValueType t = value_type(g, ValueRef{n, 0});
      if (!t.shape_known || t.shape.size() < 2) continue;
      t.shape[nhwc ? t.shape.size() - 1 : 1] = nhwc ? in[1].shape.back() : in[1].shape.front();
      return t;
    }
  }
  for (std::size_t k = 0; k < p.inputs.size(); ++k)
    if (in[k].shape_known && !constant_input(g, p.inputs[k], constant)) return in[k];
  return {};
}

class TargetGate final : public RewriteGate {
 public:
  TargetGate(std::shared_ptr<const CostModel> m, bool use_cost, bool details)
      : m_(std::move(m)), use_cost_(use_cost), details_(details) {}

  GateVerdict decide(const Graph& g, const GateCandidate& c) const override {
    const TargetProfile& t = m_->target();
    const std::size_t np = c.planned.size();
    // Output types of the planned nodes: a node that takes over a root has the root's;
    // another is estimated from its inputs (unknown here).
    std::vector<ValueType> out(np);
    std::vector<char> constant(np, 0);
    for (std::size_t i = 0; i < np; ++i)
      if (c.planned[i].takes_over != kNoNode) out[i] = value_type(g, ValueRef{c.planned[i].takes_over, 0});
    // New constants first (an inline tensor is planned after the node that reads it): they
    // have their value's type. Other planned nodes read only earlier ones, so one pass in
    // order settles the rest.
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
      if (p.takes_over != kNoNode || !is_constant_op(p.op)) continue;
      constant[i] = 1;
      if (const auto* v = p.attrs.get_if<Tensor>("value")) out[i] = ValueType{v->dtype, v->shape, true, {}};
    }
    std::vector<std::vector<ValueType>> in_types(np);
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
      if (constant[i]) {
        in_types[i].assign(p.inputs.size(), ValueType{});
        continue;
      }
      bool all_const = !p.inputs.empty();
      in_types[i].reserve(p.inputs.size());
      for (ValueRef v : p.inputs) {
        if (v.valid()) {
          in_types[i].push_back(value_type(g, v));
          all_const = all_const && is_constant_node(g, v);
        } else if (v.port != kAbsentInput && v.port < np) {
          in_types[i].push_back(out[v.port]);
          all_const = all_const && constant[v.port];
        } else {
          in_types[i].push_back(ValueType{});
        }
      }
      constant[i] = all_const;
      if (p.takes_over != kNoNode) continue;
      if (all_const) {
        out[i] = constant_result(g, c, p, in_types[i]);
        continue;
      }
      out[i] = new_node_type(g, c, p, in_types[i], constant);
    }
    // Kernel availability first: it needs no shapes.
    double after = 0;
    bool known = true;
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
      std::vector<const ValueType*> ins;
      CostQuery q;
      q.op = p.op.name();
      q.attrs = &p.attrs;
      for (std::size_t k = 0; k < p.inputs.size(); ++k) {
        bool absent = !p.inputs[k].valid() && p.inputs[k].port == kAbsentInput;
        ins.push_back(absent ? nullptr : &in_types[i][k]);
        if (!absent) q.const_inputs.push_back(constant_input(g, p.inputs[k], constant));
      }
      // Trailing absent inputs are not passed.
      while (!ins.empty() && ins.back() == nullptr) ins.pop_back();
      if (!constant[i]) {
        std::string why = t.lacks(q.op, p.attrs, ins);
        if (!why.empty()) return GateVerdict{false, 0, why, why};
      }
      if (!use_cost_) continue;
      for (const ValueType* in : ins)
        if (in) q.inputs.push_back(in);
      q.output = &out[i];
      NodeCost nc = m_->estimate(q);
      known = known && nc.known;
      after += nc.us;
    }
    if (!use_cost_) return GateVerdict{true, 0, {}, "the target has kernels for it"};

    // Before: the nodes the rewrite removes.
    double before = 0;
    for (NodeId n : removed_nodes(g, c)) {
      NodeCost nc = m_->estimate(g, n);
      known = known && nc.known;
      before += nc.us;
    }
    const double saving = before - after;
    // The sentences are for explain only: formatting them for every candidate of a large
    // graph would cost more than the estimate itself.
    auto figures = [&] { return details_ ? "(" + ms_text(before) + " -> " + ms_text(after) + ")" : std::string(); };
    if (!known) return GateVerdict{true, 0, {}, details_ ? "no estimate (shapes unknown) " + figures() : ""};
    // A rewrite that leaves the estimate as it was (moving a Transpose, putting a constant
    // operand second) is a canonicalization other rewrites build on: applied, as without a
    // model. The margin is for rewrites that change the cost.
    if (std::fabs(saving) <= 1e-9 * std::max(before, 1.0))
      return GateVerdict{true, 0, {}, details_ ? "cost-neutral " + figures() : ""};
    const double margin = std::max(t.min_saving_us, t.min_saving_fraction * before);
    if (saving < margin) {
      std::string detail;
      if (details_)
        detail = saving < 0 ? "costs " + ms_text(-saving) + " more " + figures()
                            : "saves only " + ms_text(saving) + " " + figures() + ", under the margin of " + ms_text(margin);
      return GateVerdict{false, saving / 1000.0, "no_gain on " + t.name, detail};
    }
    return GateVerdict{true, saving / 1000.0, {}, details_ ? "saves " + ms_text(saving) + " " + figures() : ""};
  }

 private:
  // Every use of n is by one of `nodes`.
  static bool uses_only(const Graph& g, NodeId n, const std::vector<NodeId>& nodes) {
    for (const Use& u : g.uses(n))
      if (std::find(nodes.begin(), nodes.end(), u.node) == nodes.end()) return false;
    return true;
  }

  // The nodes a rewrite removes: its roots, the matched interior nodes used only inside the
  // match (one that keeps a use outside, on_external_use: duplicate, stays and saves
  // nothing), and, transitively, producers left without users (the rest of a decomposed
  // layer norm above the matched tail), which dead-code removal takes. A node the new nodes
  // read, a graph output, an input or a constant is never removed.
  static std::vector<NodeId> removed_nodes(const Graph& g, const GateCandidate& c) {
    std::vector<NodeId> matched;
    for (NodeId n : c.matched)
      if (n != kNoNode) matched.push_back(n);
    std::vector<NodeId> out;
    for (NodeId n : matched) {
      bool root = std::find(c.roots.begin(), c.roots.end(), n) != c.roots.end();
      if (root || (!g.has_graph_output(n) && uses_only(g, n, matched))) out.push_back(n);
    }
    auto read_by_new = [&](NodeId n) {
      for (const PlannedNode& p : c.planned)
        for (ValueRef v : p.inputs)
          if (v.valid() && v.node == n) return true;
      return false;
    };
    for (std::size_t i = 0; i < out.size(); ++i)
      for (ValueRef v : g.node(out[i]).inputs) {
        if (!v.valid() || std::find(out.begin(), out.end(), v.node) != out.end()) continue;
        static const OpType k_input = OpType::intern("Input");
        OpType op = g.node(v.node).op;
        if (op == k_input || is_constant_op(op) || g.has_graph_output(v.node) || read_by_new(v.node)) continue;
        if (uses_only(g, v.node, out)) out.push_back(v.node);
      }
    return out;
  }

  std::shared_ptr<const CostModel> m_;
  bool use_cost_;
  bool details_;
};

}  // namespace

std::shared_ptr<const RewriteGate> make_target_gate(std::shared_ptr<const CostModel> model, bool use_cost,
                                                    bool details) {
  return std::make_shared<TargetGate>(std::move(model), use_cost, details);
}

}  // namespace graphfuse
