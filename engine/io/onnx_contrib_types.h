// Internal to io: output types of the ONNX Runtime contrib ops that rules/onnx emits.
#pragma once

#include <cstddef>
#include <string_view>
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

/// How many outputs ONNX Runtime requires a node of this op to declare, used or not (its
/// schema's non-optional outputs): 2 for com.microsoft.EmbedLayerNormalization, whose
/// mask_index ONNX Runtime rejects the node without ("output index 1 is out of range");
/// 1 for every other op. Export names such outputs even when nothing reads them.
std::size_t contrib_required_outputs(std::string_view domain, std::string_view op);

}  // namespace graphfuse::onnx_io
