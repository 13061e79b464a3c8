// The target gate: a rewrite is applied only when the target has a kernel for every node
// it creates and, with the cost model, when the estimate before minus after pays.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <optional>

#include "io/format_hooks.h"
#include "node_estimate.h"

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
bool constant_input(const Graph& g, ValueRef v, std::span<const char> constant) {
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

void assign(ValueType& to, const TypeView& v) {
  to.dtype = v.dtype;
  to.shape.assign(v.shape.begin(), v.shape.end());
  to.shape_known = v.shape_known;
}

// A constant computed from constants (folded before any run), written to `out`. A
// concatenation (merged weights) adds up its inputs along the axis (ONNX's attribute,
// TensorFlow's last input); anything else is as large as the largest constant it reads, so
// that the nodes reading it get a size.
void constant_result(const Graph& g, const GateCandidate& c, const PlannedNode& p, std::span<const TypeView> in,
                     ValueType& out) {
  std::string_view op = p.op.name();
  std::optional<std::int64_t> axis;
  std::size_t parts = in.size();
  if (op == "Concat") {
    if (const auto* a = p.attrs.get_if<std::int64_t>("axis")) axis = *a;
  } else if (op == "ConcatV2" && !p.inputs.empty()) {
    axis = scalar_of(g, c, p.inputs.back());
    --parts;
  }
  out = ValueType{};
  for (std::size_t k = 0; k < parts; ++k) {
    const TypeView& t = in[k];
    if (!t.shape_known) continue;
    if (!out.shape_known) assign(out, t);
    else if (axis && t.shape.size() == out.shape.size()) {
      std::int64_t r = static_cast<std::int64_t>(t.shape.size());
      std::int64_t a = *axis < 0 ? *axis + r : *axis;
      if (a >= 0 && a < r) out.shape[static_cast<std::size_t>(a)] += t.shape[static_cast<std::size_t>(a)];
    } else if (!axis && t.shape.size() > out.shape.size()) {
      assign(out, t);
    }
  }
}

// The type of a new node that takes over no root. A convolution (a horizontal fusion's
// merged one) is shaped like a matched convolution of the same input, with as many
// channels as its weight gives (written to `owned`); any other node is sized like the first
// non-constant value it reads (layout and elementwise helpers keep the element count).
TypeView new_node_type(const Graph& g, const GateCandidate& c, const PlannedNode& p, std::span<const TypeView> in,
                       std::span<const char> constant, ValueType& owned) {
  if (p.inputs.size() >= 2 && p.inputs[0].valid() && in[1].shape_known && !in[1].shape.empty()) {
    std::string_view op = p.op.name();
    if (op.find("Conv") != std::string_view::npos) {
      bool nhwc = op.find('.') == std::string_view::npos && op != "Conv" && op != "ConvTranspose";
      for (NodeId n : c.matched) {
        if (n == kNoNode || g.node(n).op != p.op || g.node(n).inputs.empty() || g.node(n).inputs[0] != p.inputs[0]) continue;
        TypeView t = cost::type_view(g, ValueRef{n, 0});
        if (!t.shape_known || t.shape.size() < 2) continue;
        assign(owned, t);
        owned.shape[nhwc ? owned.shape.size() - 1 : 1] = nhwc ? in[1].shape.back() : in[1].shape.front();
        return owned;
      }
    }
  }
  for (std::size_t k = 0; k < p.inputs.size(); ++k)
    if (in[k].shape_known && !constant_input(g, p.inputs[k], constant)) return in[k];
  return {};
}

// Buffers one decide() call needs, kept per thread so that a round's candidates reuse them
// instead of allocating their own.
struct Scratch {
  std::vector<TypeView> out;          // per planned node: its output type
  std::vector<ValueType> owned;       // per planned node: a type computed here (out views it)
  std::vector<char> constant;         // per planned node: folded before any run
  std::vector<TypeView> in;           // the planned nodes' input types, back to back
  std::vector<std::size_t> in_at;     // where planned node i's start in `in`
  std::vector<TypeView> query;        // one node's inputs as the model or the filter reads them
  std::vector<NodeId> matched, removed;
  bool typed = false;                 // out, in and in_at hold this call's types
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// What the target says about an op: absent, or present with conditions (`support`) or
// without. Decided once per op type and thread, not by name lookups per candidate.
struct KernelFacts {
  bool resolved = false;
  bool has = true;
  const OpSupport* support = nullptr;
  std::size_t typed_inputs = 0;  // support->typed_inputs()
};

class TargetGate final : public RewriteGate {
 public:
  TargetGate(std::shared_ptr<const CostModel> m, bool use_cost, bool details)
      : m_(std::move(m)), use_cost_(use_cost), details_(details), serial_(next_serial()) {}

  std::string prepare(Graph& g) const override {
    return io_hooks::raise_onnx_opset(g, m_->target().raise_onnx_opset);
  }

  GateVerdict decide(const Graph& g, const GateCandidate& c) const override {
    const TargetProfile& t = m_->target();
    const std::size_t np = c.planned.size();
    Scratch& s = scratch();
    // Which planned nodes are constants: new constants, and nodes that read only constants
    // (folded before any run). An inline tensor is planned after the node that reads it;
    // other planned nodes read only earlier ones, so one pass in order settles the rest.
    s.constant.assign(np, 0);
    for (std::size_t i = 0; i < np; ++i)
      if (c.planned[i].takes_over == kNoNode && is_constant_op(c.planned[i].op)) s.constant[i] = 1;
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
      if (s.constant[i]) continue;
      bool all_const = !p.inputs.empty();
      for (ValueRef v : p.inputs) {
        if (v.valid()) all_const = all_const && is_constant_node(g, v);
        else if (v.port != kAbsentInput && v.port < np) all_const = all_const && s.constant[v.port];
      }
      s.constant[i] = all_const;
    }
    s.typed = false;
    // Kernel availability first: it needs no shapes, and the types only of the inputs of an
    // op the target lists with conditions.
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
      if (s.constant[i]) continue;
      const KernelFacts& k = kernel_facts(p.op);
      if (!k.has) {
        std::string why = "no_kernel: " + std::string(p.op.name()) + " on " + t.name;
        return GateVerdict{false, 0, why, why};
      }
      if (!k.support) continue;
      // The filter sees absent inputs as absent (trailing ones are not passed), and the
      // types of the inputs its conditions read; those of a planned node need all types.
      const std::size_t typed = std::min(k.typed_inputs, p.inputs.size());
      bool reads_planned = false;
      for (std::size_t j = 0; j < typed; ++j)
        reads_planned = reads_planned || (!p.inputs[j].valid() && p.inputs[j].port != kAbsentInput);
      if (reads_planned) type_planned(g, c, s);
      s.query.clear();
      for (std::size_t j = 0; j < p.inputs.size(); ++j) {
        ValueRef v = p.inputs[j];
        if (!v.valid() && v.port == kAbsentInput) s.query.push_back(TypeView::absent());
        else if (j >= typed) s.query.push_back(TypeView{});  // present; its type is not read
        else if (reads_planned) s.query.push_back(s.in[s.in_at[i] + j]);
        else s.query.push_back(cost::type_view(g, v));
      }
      while (!s.query.empty() && !s.query.back().present) s.query.pop_back();
      // Measured slower on the target than what it replaces: never worth emitting, whatever
      // the roofline estimates say, except at the sizes `pays_up_to` names. With
      // `slower_than`, only when what the rewrite removes is that measured form; a rewrite of
      // another form (a decomposed norm the measurement did not cover) is left to the cost
      // model.
      if (!k.support->pays_at(s.query) && replaces_measured_form(g, c, s, k.support->slower_than)) {
        std::string why = "slower: " + std::string(p.op.name()) + " measured slower than its unfused form on " + t.name;
        return GateVerdict{false, 0, why, why};
      }
      std::string why = t.lacks(*k.support, p.attrs, s.query);
      if (!why.empty()) return GateVerdict{false, 0, why, why};
    }
    if (!use_cost_) return GateVerdict{true, 0, {}, "the target has kernels for it"};

    // Without explain's sentence, a candidate with a node whose shapes are unknown needs no
    // further estimates: it is applied without one whatever the others say.
    const bool need_all = details_;
    const GateVerdict unknown{true, 0, {}, {}};
    bool known = true;
    // The roots are always removed: one of them unknown settles it before the other
    // removed nodes are looked for.
    if (!need_all)
      for (NodeId n : c.roots)
        if (n != kNoNode && cost::output_unknown(g, n)) return unknown;
    // Before: the nodes the rewrite removes.
    double before = 0;
    removed_nodes(g, c, s);
    for (NodeId n : s.removed) {
      NodeCost nc = cost::estimate_node(*m_, g, n);
      if (!nc.known && !need_all) return unknown;
      known = known && nc.known;
      before += nc.us;
    }
    // After: the planned nodes, absent inputs left out.
    type_planned(g, c, s);
    double after = 0;
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
      s.query.clear();
      bool all_const = false;
      for (std::size_t j = 0; j < p.inputs.size(); ++j) {
        if (!p.inputs[j].valid() && p.inputs[j].port == kAbsentInput) continue;
        s.query.push_back(s.in[s.in_at[i] + j]);
        bool k_const = constant_input(g, p.inputs[j], s.constant);
        all_const = (s.query.size() == 1 || all_const) && k_const;
      }
      NodeCost nc = cost::estimate_node(*m_, cost::op_facts(p.op), p.attrs, s.query, all_const, s.out[i]);
      if (!nc.known && !need_all) return unknown;
      known = known && nc.known;
      after += nc.us;
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
  // The planned nodes' input and output types (into s.in, s.in_at, s.out), once per call.
  // A node that takes over a root has the root's type; a new constant its value's; a node
  // computed from constants is sized by constant_result, another by new_node_type.
  static void type_planned(const Graph& g, const GateCandidate& c, Scratch& s) {
    if (s.typed) return;
    s.typed = true;
    const std::size_t np = c.planned.size();
    s.out.assign(np, TypeView{});
    if (s.owned.size() < np) s.owned.resize(np);
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
      if (p.takes_over != kNoNode) s.out[i] = cost::type_view(g, ValueRef{p.takes_over, 0});
      else if (!is_constant_op(p.op)) continue;
      else if (const auto* v = p.attrs.get_if<Tensor>("value")) {
        s.out[i].dtype = v->dtype;
        s.out[i].shape = v->shape;
        s.out[i].shape_known = true;
      }
    }
    s.in.clear();
    s.in_at.assign(np + 1, 0);
    for (std::size_t i = 0; i < np; ++i) {
      const PlannedNode& p = c.planned[i];
      s.in_at[i] = s.in.size();
      if (p.takes_over == kNoNode && is_constant_op(p.op)) {
        s.in.resize(s.in.size() + p.inputs.size());
        continue;
      }
      for (ValueRef v : p.inputs) {
        if (v.valid()) s.in.push_back(cost::type_view(g, v));
        else if (v.port != kAbsentInput && v.port < np) s.in.push_back(s.out[v.port]);
        else s.in.push_back(TypeView{});
      }
      if (p.takes_over != kNoNode) continue;
      std::span<const TypeView> in(s.in.data() + s.in_at[i], p.inputs.size());
      if (s.constant[i]) {
        constant_result(g, c, p, in, s.owned[i]);
        s.out[i] = s.owned[i];
      } else {
        s.out[i] = new_node_type(g, c, p, in, s.constant, s.owned[i]);
      }
    }
    s.in_at[np] = s.in.size();
  }

  static std::uint64_t next_serial() {
    static std::atomic<std::uint64_t> n{0};
    return ++n;
  }

  // The target's facts about `op`, cached per thread for this gate (its serial, not its
  // address, tells gates apart: a later gate may reuse a freed one's address).
  const KernelFacts& kernel_facts(OpType op) const {
    thread_local std::uint64_t owner = 0;
    thread_local std::vector<KernelFacts> facts;
    if (owner != serial_) {
      facts.clear();
      owner = serial_;
    }
    const std::size_t i = op.index();
    if (i >= facts.size()) facts.resize(i + 1);
    KernelFacts& k = facts[i];
    if (!k.resolved) {
      const TargetProfile& t = m_->target();
      std::string_view name = op.name();
      k.has = t.has_op(name);
      k.support = k.has ? t.find(name) : nullptr;
      k.typed_inputs = k.support ? k.support->typed_inputs() : 0;
      k.resolved = true;
    }
    return k;
  }

  // Every use of n is by one of `nodes`.
  static bool uses_only(const Graph& g, NodeId n, const std::vector<NodeId>& nodes) {
    for (const Use& u : g.uses(n))
      if (std::find(nodes.begin(), nodes.end(), u.node) == nodes.end()) return false;
    return true;
  }

  // Whether every node the rewrite removes is of an op in `form` (empty: any rewrite).
  static bool replaces_measured_form(const Graph& g, const GateCandidate& c, Scratch& s,
                                     const std::vector<std::string>& form) {
    if (form.empty()) return true;
    removed_nodes(g, c, s);
    for (NodeId n : s.removed) {
      std::string_view op = g.node(n).op.name();
      if (std::find(form.begin(), form.end(), op) == form.end()) return false;
    }
    return true;
  }

  // The nodes a rewrite removes (into s.removed): its roots, the matched interior nodes
  // used only inside the match (one that keeps a use outside, on_external_use: duplicate,
  // stays and saves nothing), and, transitively, producers left without users (the rest of
  // a decomposed layer norm above the matched tail), which dead-code removal takes. A node
  // the new nodes read, a graph output, an input or a constant is never removed.
  static void removed_nodes(const Graph& g, const GateCandidate& c, Scratch& s) {
    std::vector<NodeId>& matched = s.matched;
    std::vector<NodeId>& out = s.removed;
    matched.clear();
    out.clear();
    for (NodeId n : c.matched)
      if (n != kNoNode) matched.push_back(n);
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
    static const OpType k_input = OpType::intern("Input");
    for (std::size_t i = 0; i < out.size(); ++i)
      for (ValueRef v : g.node(out[i]).inputs) {
        if (!v.valid() || std::find(out.begin(), out.end(), v.node) != out.end()) continue;
        OpType op = g.node(v.node).op;
        if (op == k_input || is_constant_op(op) || g.has_graph_output(v.node) || read_by_new(v.node)) continue;
        if (uses_only(g, v.node, out)) out.push_back(v.node);
      }
  }

  std::shared_ptr<const CostModel> m_;
  bool use_cost_;
  bool details_;
  std::uint64_t serial_;
};

}  // namespace

std::shared_ptr<const RewriteGate> make_target_gate(std::shared_ptr<const CostModel> model, bool use_cost,
                                                    bool details) {
  return std::make_shared<TargetGate>(std::move(model), use_cost, details);
}

}  // namespace graphfuse
