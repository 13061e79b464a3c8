// Epilogue fusion in the fast executor's plan: a node that alone reads the only output of
// another runs inside that node's kernel (KernelCall::epilogue), one pass over the tensor
// instead of two. The graph is not changed; only the fast kernel set's plan is, and only
// where the producer's kernel declares the epilogue (EpilogueSupport):
// - a unary activation: DenseNet's BatchNormalization -> Relu before each convolution
//   (which no rule can fold: the norm reads a Concat), Conv -> Relu / LeakyRelu in graphs no
//   rule has fused;
// - an inference BatchNormalization after a Concat (DenseNet's Concat -> norm -> Relu): the
//   concatenation is written normalized, and the concatenated tensor never exists.
#pragma once

#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/kernels/kernel.h"

namespace graphfuse::kernels {

struct EpilogueFusion {
  NodeId producer;  ///< runs with the epilogue applied to its output
  NodeId reader;    ///< its only reader; takes the producer's output as its own
  /// An activation reader: what it computes. Kind None for a BatchNormalization reader,
  /// whose affine the executor makes from its constant inputs (core/util.h batch_norm_factors).
  ActivationSpec act;
};

/// In topological order of the readers: each single-activation node (core/conv_ops.h
/// unary_activation; one input, from output 0 of a single-output node), and each inference BatchNormalization reading a Concat, whose
/// producer has it as its only reader, is not a graph output and applies no activation of
/// its own (no "activation" attribute other than empty or None), nor runs in training mode.
std::vector<EpilogueFusion> find_epilogue_fusions(const Graph& g);

}  // namespace graphfuse::kernels
