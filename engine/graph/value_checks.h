// Internal: the checks every graph reader applies to tensors and value types, in one place,
// so that what one reader accepts every writer can write and every other reader reads back
// (docs/limits.md). Each returns "" when the value is fine, else what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphfuse/attribute.h"
#include "graphfuse/graph.h"

namespace graphfuse::checks {

/// Nodes a graph may have (2^28, about 268 million): node ids are 32-bit, and at the
/// ~230 bytes a node takes in memory this is ~60 GB, more than any machine we run on.
constexpr std::size_t kMaxNodes = std::size_t{1} << 28;

/// Elements a tensor's shape may describe (with or without data): 2^40. A shape-only
/// constant is materialized by the executor, so its shape is a promise of memory.
constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 40;

/// An element type graphfuse knows by name (Undefined is not one).
std::string dtype_problem(DType t);
/// Dimensions >= 0, at most kMaxTensorElements elements in all.
std::string tensor_shape_problem(const std::vector<std::int64_t>& shape);
/// A value type: dtype known or Undefined, dims >= -1 (-1 unknown), dim_params empty or one
/// per dimension, no dims when the rank is unknown.
std::string value_type_problem(const ValueType& t);
/// A graph input must be an Input node or a Const (ONNX: an initializer declared as an
/// input, a default value); any other node would be declared twice in an ONNX file (as an
/// input and as the node's output) and is not expressible in .graph text.
std::string graph_input_op_problem(std::string_view id, std::string_view op);
/// graph_input_op_problem for node n of g.
std::string graph_input_problem(const Graph& g, NodeId n);

}  // namespace graphfuse::checks
