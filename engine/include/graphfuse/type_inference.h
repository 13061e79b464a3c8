// Types for the values rewrites create: a graph format's own per-node type inference.
#pragma once

#include <memory>

#include "graphfuse/graph.h"

namespace graphfuse {

/// Infers a node's output types from its op, attributes and inputs (their types, and the
/// values of constant inputs), the way the graph's format defines its ops. The rewriter asks
/// it for every node a rewrite creates, so that constraints such as `same_shape(z, conv)`
/// see shapes on values the input file never had; a format without one leaves created
/// values untyped. Deterministic: the types depend on the node and its inputs only.
class TypeInference {
 public:
  virtual ~TypeInference() = default;
  /// Sets the types of n's outputs that have none (dtype undefined and shape unknown) where
  /// they can be inferred; leaves the rest, and typed outputs, as they are. Reads n and the
  /// producers of its inputs; may note what it inferred in g's properties (the ONNX one
  /// lists the values, as import does), so calls on one graph must not overlap.
  virtual void infer(Graph& g, NodeId n) const = 0;
};

/// Returns the inference for graphs of one format, or null when `g` is not of it (an ONNX
/// graph is one that imports ONNX's default opset).
using TypeInferenceFactory = std::unique_ptr<const TypeInference> (*)(const Graph& g);

/// Installs a format's factory; the ONNX library installs libonnx's per-op shape inference
/// at static initialization. Returns true so it can initialize a static.
bool register_type_inference(TypeInferenceFactory factory);

/// The inference of the first registered format that claims `g`, or null.
std::unique_ptr<const TypeInference> type_inference_for(const Graph& g);

}  // namespace graphfuse
