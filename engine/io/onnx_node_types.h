// Internal to io: the types of nodes rewrites create in an ONNX graph (graphfuse/type_inference.h).
#pragma once

#include <memory>
#include <string_view>

#include "graphfuse/type_inference.h"

namespace graphfuse::onnx_io {

/// libonnx's per-op shape inference (the schema inference functions that import's
/// whole-model inference runs) for one node at a time, for graphs that import ONNX's
/// default opset; null for other graphs. Registered with register_type_inference by
/// engine/io/onnx_format.cpp.
std::unique_ptr<const TypeInference> make_onnx_type_inference(const Graph& g);

/// Ops whose libonnx inference (convPoolShapeInference) indexes the data input's
/// per-dimension attributes with the weight's dimensions and reads past them when the
/// weight has the higher rank (a crash, not an error): the weight's input index, or -1.
int conv_weight_input(std::string_view domain, std::string_view op);

}  // namespace graphfuse::onnx_io
