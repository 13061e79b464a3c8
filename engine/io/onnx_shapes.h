// ONNX shape inference at import: the types ONNX can infer for values a file leaves untyped.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace graphfuse::onnx_io {

/// Graph property (strings): the names of values whose type came from shape inference at
/// import rather than from the file. Export writes no value_info for them, so an unchanged
/// model round-trips byte for byte.
inline constexpr std::string_view kInferredValues = "onnx.inferred_values";
/// Graph property (string), set only when ONNX's shape inference failed on the model: why.
/// Not exported (the file never had it).
inline constexpr std::string_view kInferenceError = "onnx.shape_inference_error";

/// A value name and the type ONNX's shape inference gave it.
using InferredType = std::pair<std::string, onnx::TypeProto>;

/// Runs onnx::shape_inference::InferShapes on `model` (data propagation on, so Shape ->
/// Gather -> Concat -> Reshape chains resolve, unless a node has no libonnx schema: then
/// off, because libonnx's data propagation crashes on a Shape of an untyped value) and returns, in graph order, the types it
/// inferred for values the file declares no type for (not a typed graph input, output or
/// value_info). `model` is left as it was: its input, output and value_info lists are
/// restored. Inference is best effort: a node it cannot type (an op without a schema, such
/// as com.microsoft ones) leaves its outputs untyped; if inference itself throws, nothing is
/// returned and `failure` (when given) gets the reason.
std::vector<InferredType> infer_value_types(onnx::ModelProto& model, std::string* failure = nullptr);

/// True when graphfuse's own symbolic pass (onnx_sym_infer.h) types this model as ONNX's
/// inference would, so import can skip libonnx and the schema registry it builds first
/// (~15 ms, most of a small model's load): every node an ONNX-domain op from the list the
/// pass covers in full (CNN ops, elementwise, shape arithmetic), no auto_pad, no subgraph,
/// and every graph input a typed tensor of known rank. tests/unit/onnx_shapes_test.cpp
/// checks both give the same types on every model at hand.
bool own_inference_suffices(const onnx::ModelProto& model);
/// An ONNX-domain op own_inference_suffices() accepts (its outputs typed by the pass alone),
/// with a number of inputs (absent optional ones included) and outputs its schema allows.
bool own_pass_covers(std::string_view op, std::size_t inputs, std::size_t outputs);

}  // namespace graphfuse::onnx_io
