// Which activation nodes the fast executor runs inside their producer (epilogue_fusion.h).
#include "executor/epilogue_fusion.h"

#include <string>

#include "core/util.h"

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

}  // namespace

bool accepts(EpilogueSupport support, Activation kind) {
  switch (support) {
    case EpilogueSupport::None: return false;
    case EpilogueSupport::Relu: return kind == Activation::Relu;
    case EpilogueSupport::PiecewiseLinear:
      return kind == Activation::Relu || kind == Activation::LeakyRelu || kind == Activation::Clip ||
             kind == Activation::HardSigmoid || kind == Activation::HardSwish;
  }
  return false;
}

ActivationSpec activation_of(const Node& n) {
  const std::string_view op = n.op.name();
  if (op == "Relu") return {Activation::Relu};
  if (op == "Sigmoid") return {Activation::Sigmoid};
  if (op == "Tanh") return {Activation::Tanh};
  if (op == "HardSwish") return {Activation::HardSwish};
  // ONNX's defaults, as the standalone kernels read them (kernels/core/conv_ops.cpp).
  if (op == "LeakyRelu") return {Activation::LeakyRelu, attr_float(n.attrs, "alpha", 0.01f)};
  if (op == "HardSigmoid")
    return {Activation::HardSigmoid, attr_float(n.attrs, "alpha", 0.2f), attr_float(n.attrs, "beta", 0.5f)};
  return {};
}

std::vector<EpilogueFusion> find_epilogue_fusions(const Graph& g) {
  std::vector<EpilogueFusion> out;
  for (NodeId id : g.topological_order()) {
    const Node& an = g.node(id);
    const ActivationSpec spec = activation_of(an);
    if (spec.kind == Activation::None || an.inputs.size() != 1 || an.outputs.size() != 1 ||
        !an.inputs[0].valid() || an.inputs[0].port != 0)
      continue;
    const NodeId producer = an.inputs[0].node;
    const Node& pn = g.node(producer);
    const std::int64_t* training = pn.attrs.get_if<std::int64_t>("training_mode");
    if (pn.outputs.size() != 1 || (training && *training != 0) || applies_activation(pn) ||
        g.use_count(producer) != 1 || g.has_graph_output(producer))
      continue;
    out.push_back({producer, id, spec});
  }
  return out;
}

}  // namespace graphfuse::kernels
