// Internal to io: output types of the ONNX Runtime contrib ops that rules/onnx emits.
#pragma once

#include <cstddef>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::onnx_io {

/// Types the untyped outputs of node `id` when it is one of ONNX Runtime's transformer
/// ops that libonnx has no schema for (SimplifiedLayerNormalization, which ONNX Runtime
/// registers in the ONNX domain; com.microsoft's SkipLayerNormalization,
/// SkipSimplifiedLayerNormalization, EmbedLayerNormalization and the GELU family), from
/// its inputs' types, as ONNX Runtime's own inference for these ops does, so rules after
/// the one that made the node see its shapes (the next layer's residual reads output 3 of
/// a SkipLayerNormalization). Returns false for any other op (the caller then asks
/// libonnx); true when the op is one of these, typed or not (an input of unknown type
/// leaves the outputs untyped). The outputs it typed are appended to `typed`.
bool infer_contrib_types(Graph& g, NodeId id, std::vector<std::size_t>& typed);

}  // namespace graphfuse::onnx_io
