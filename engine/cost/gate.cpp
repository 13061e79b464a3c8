// The target gate: a rewrite is applied only when the target has a kernel for every node
// it creates and, with the cost model, when the estimate before minus after pays.
#include <algorithm>
#include <cstdio>

#include "graphfuse/cost.h"

namespace graphfuse {

namespace {

bool is_constant_node(const Graph& g, ValueRef v) {
  if (!v.valid()) return false;
  std::string_view op = g.node(v.node).op.name();
  return op == "Const" || op == "Constant";
}

std::string ms_text(double us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000.0);
  return buf;
}

class TargetGate final : public RewriteGate {
 public:
  TargetGate(std::shared_ptr<const CostModel> m, bool use_cost) : m_(std::move(m)), use_cost_(use_cost) {}

  GateVerdict decide(const Graph& g, const GateCandidate& c) const override {
    const TargetProfile& t = m_->target();
    const std::size_t np = c.planned.size();
    // Output types of the planned nodes: a node that takes over a root has the root's;
    // another is estimated from its inputs (unknown here).
    std::vector<ValueType> out(np);
    std::vector<char> constant(np, 0);
    for (std::size_t i = 0; i < np; ++i)
      if (c.planned[i].takes_over != kNoNode) out[i] = value_type(g, ValueRef{c.planned[i].takes_over, 0});
    // Planned nodes only read earlier planned nodes, so one pass in order settles constness.
    std::vector<std::vector<ValueType>> in_types(np);
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
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
      // A constant computed from constants (folded before any run): as large as the
      // largest constant it reads, so the nodes reading it get a size.
      if (all_const && !out[i].shape_known)
        for (const ValueType& t : in_types[i])
          if (t.shape_known && (!out[i].shape_known || t.shape.size() > out[i].shape.size())) out[i] = t;
      // A new node that takes over no root: sized like the first non-constant value it
      // reads (layout and elementwise helpers keep the element count).
      if (p.takes_over == kNoNode)
        for (std::size_t k = 0; k < p.inputs.size(); ++k)
          if (in_types[i][k].shape_known && !constant_input(g, p.inputs[k], constant)) {
            out[i] = in_types[i][k];
            break;
          }
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

    // Before: the matched nodes the rewrite removes. An interior node that keeps a use
    // outside the match (on_external_use: duplicate) stays, so it saves nothing.
    double before = 0;
    for (NodeId n : c.matched) {
      if (n == kNoNode) continue;
      bool root = std::find(c.roots.begin(), c.roots.end(), n) != c.roots.end();
      if (!root && (g.has_graph_output(n) || !uses_inside(g, n, c.matched))) continue;
      NodeCost nc = m_->estimate(g, n);
      known = known && nc.known;
      before += nc.us;
    }
    const double saving = before - after;
    const std::string figures = "(" + ms_text(before) + " -> " + ms_text(after) + ")";
    if (!known) return GateVerdict{true, 0, {}, "no estimate (shapes unknown) " + figures};
    const double margin = std::max(t.min_saving_us, t.min_saving_fraction * before);
    if (saving < margin) {
      std::string detail = saving < 0 ? "costs " + ms_text(-saving) + " more " + figures
                                      : "saves only " + ms_text(saving) + " " + figures + ", under the margin of " + ms_text(margin);
      return GateVerdict{false, saving / 1000.0, "no_gain on " + t.name, detail};
    }
    return GateVerdict{true, saving / 1000.0, {}, "saves " + ms_text(saving) + " " + figures};
  }

 private:
  static bool constant_input(const Graph& g, ValueRef v, const std::vector<char>& constant) {
    if (v.valid()) return is_constant_node(g, v);
    return v.port < constant.size() && constant[v.port];
  }
  // Every use of n is by a matched node.
  static bool uses_inside(const Graph& g, NodeId n, std::span<const NodeId> matched) {
    for (const Use& u : g.uses(n))
      if (std::find(matched.begin(), matched.end(), u.node) == matched.end()) return false;
    return true;
  }

  std::shared_ptr<const CostModel> m_;
  bool use_cost_;
};

}  // namespace

std::shared_ptr<const RewriteGate> make_target_gate(std::shared_ptr<const CostModel> model, bool use_cost) {
  return std::make_shared<TargetGate>(std::move(model), use_cost);
}

}  // namespace graphfuse
