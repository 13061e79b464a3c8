// Which Relu nodes the fast executor runs inside their BatchNormalization (relu_fusion.h).
#include "executor/relu_fusion.h"

namespace graphfuse::kernels {

std::vector<ReluFusion> find_relu_fusions(const Graph& g) {
  std::vector<ReluFusion> out;
  for (NodeId relu : g.topological_order()) {
    const Node& rn = g.node(relu);
    if (rn.op.name() != "Relu" || rn.inputs.size() != 1 || rn.outputs.size() != 1 || !rn.inputs[0].valid() ||
        rn.inputs[0].port != 0)
      continue;
    const NodeId bn = rn.inputs[0].node;
    const Node& bnn = g.node(bn);
    const std::int64_t* training = bnn.attrs.get_if<std::int64_t>("training_mode");
    if (bnn.op.name() != "BatchNormalization" || bnn.outputs.size() != 1 || (training && *training != 0) ||
        g.use_count(bn) != 1 || g.has_graph_output(bn))
      continue;
    out.push_back({bn, relu});
  }
  return out;
}

}  // namespace graphfuse::kernels
