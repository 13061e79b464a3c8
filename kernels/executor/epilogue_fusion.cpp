// Which nodes the fast executor runs inside their producer (epilogue_fusion.h).
#include "executor/epilogue_fusion.h"

#include <string>

#include "core/conv_ops.h"

namespace graphfuse::kernels {

namespace {

// A producer with an activation attribute of its own (FusedConv, TF's fused ops) already
// applies one; a second would need a second post-op the kernels do not chain.
bool applies_activation(const Node& n) {
  if (!n.attrs.has("activation")) return false;
  try {
    return parse_activation(attr_string(n.attrs, "activation", "")).kind != Activation::None;
  } catch (const Error&) {
    return true;  // an unknown name: its kernel reports it
  }
}

// A producer the fusions may extend: one output, read by one node only, not a graph output,
// no activation of its own, not in training mode.
bool fusable_producer(const Graph& g, NodeId producer) {
  const Node& pn = g.node(producer);
  const std::int64_t* training = pn.attrs.get_if<std::int64_t>("training_mode");
  return pn.outputs.size() == 1 && !(training && *training != 0) && !applies_activation(pn) &&
         g.use_count(producer) == 1 && !g.has_graph_output(producer);
}

}  // namespace

std::vector<EpilogueFusion> find_epilogue_fusions(const Graph& g) {
  std::vector<EpilogueFusion> out;
  for (NodeId id : g.topological_order()) {
    const Node& rn = g.node(id);
    if (rn.inputs.empty() || rn.outputs.size() != 1 || !rn.inputs[0].valid() || rn.inputs[0].port != 0) continue;
    const NodeId producer = rn.inputs[0].node;
    const ActivationSpec act = rn.inputs.size() == 1 ? unary_activation(rn.op.name(), rn.attrs) : ActivationSpec{};
    const std::int64_t* training = rn.attrs.get_if<std::int64_t>("training_mode");
    const bool norm = rn.op.name() == "BatchNormalization" && rn.inputs.size() == 5 && !(training && *training != 0) &&
                      g.node(producer).op.name() == "Concat";
    if (act.kind == Activation::None && !norm) continue;
    if (!fusable_producer(g, producer)) continue;
    out.push_back({producer, id, norm ? ActivationSpec{} : act});
  }
  return out;
}

}  // namespace graphfuse::kernels
