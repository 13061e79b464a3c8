// Activation fusion in the fast executor's plan: a unary activation whose input is the only
// output of a node it alone reads runs inside that node's kernel (KernelCall::epilogue), one
// pass over the activation instead of two: DenseNet's BatchNormalization -> Relu before each
// convolution (which no rule can fold: the norm reads a Concat), and Conv -> Relu / Clip /
// LeakyRelu in graphs no rule has fused. The graph is not changed; only the fast kernel set's
// plan is, and only where the producer's kernel declares the activation (EpilogueSupport).
#pragma once

#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/kernels/conv.h"
#include "graphfuse/kernels/kernel.h"

namespace graphfuse::kernels {

struct EpilogueFusion {
  NodeId producer;    ///< runs with the activation applied to its output
  NodeId activation;  ///< its only reader; takes the producer's output as its own
  ActivationSpec spec;
};

/// Whether a kernel with this support applies that activation as an epilogue.
bool accepts(EpilogueSupport support, Activation kind);

/// The activation a node computes, by op and attributes: Relu, Sigmoid, Tanh, LeakyRelu,
/// HardSigmoid, HardSwish; kind None for anything else (Clip's bounds are inputs: rules
/// fuse it into FusedConv instead).
ActivationSpec activation_of(const Node& n);

/// Each activation node (one input, from output 0 of a single-output node) whose producer
/// has it as its only reader, is not a graph output and applies no activation of its own
/// (no "activation" attribute other than empty or None), nor runs in training mode.
std::vector<EpilogueFusion> find_epilogue_fusions(const Graph& g);

}  // namespace graphfuse::kernels
