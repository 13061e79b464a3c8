// Relu fusion in the executor's plan: a BatchNormalization whose only reader is a Relu runs
// as the fast set's _BatchNormalizationRelu, one pass over the activation instead of two
// (DenseNet's BN -> Relu before every convolution, which no rule can fold: the norm reads a
// Concat). The graph is not changed; only the fast kernel set's plan is.
#pragma once

#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::kernels {

struct ReluFusion {
  NodeId producer;  ///< the BatchNormalization: runs with the Relu applied
  NodeId relu;      ///< its only reader; takes the producer's output as its own
};

/// Each Relu whose input is output 0 of a single-output BatchNormalization (inference: no
/// training_mode) that nothing else reads and that is not a graph output.
std::vector<ReluFusion> find_relu_fusions(const Graph& g);

}  // namespace graphfuse::kernels
