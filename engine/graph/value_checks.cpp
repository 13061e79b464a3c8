// The value checks shared by every graph reader (see value_checks.h).
#include "graph/value_checks.h"

#include "graphfuse/graph.h"

namespace graphfuse::checks {

std::string dtype_problem(DType t) {
  // Tensors need an element type the text formats can name (`tensor(float32, ...)`).
  if (t != DType::Undefined && dtype_name(t) == "undefined")
    return "unknown tensor element type number " + std::to_string(static_cast<std::int64_t>(t));
  return {};
}

std::string tensor_shape_problem(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (auto d : shape) {
    if (d < 0) return "tensor dimensions must not be negative";
    if (d != 0 && count > kMaxTensorElements / d) return "tensor shape is too large";
    count *= d;
  }
  return {};
}

std::string value_type_problem(const ValueType& t) {
  // Types may carry ONNX element types graphfuse has no name for (complex64 ...), written
  // as their number; the number is an int32 in ONNX.
  if (static_cast<std::int64_t>(t.dtype) < 0) return "element type number must not be negative";
  if (!t.shape_known && (!t.shape.empty() || !t.dim_params.empty()))
    return "a type of unknown rank has dimensions";
  for (auto d : t.shape)
    if (d < -1) return "dimension " + std::to_string(d) + " (a dimension is >= 0, or -1 when unknown)";
  if (!t.dim_params.empty() && t.dim_params.size() != t.shape.size())
    return "symbolic dimension names do not match the rank";
  return {};
}

std::string graph_input_op_problem(std::string_view id, std::string_view op) {
  if (op == ops::kInput || op == ops::kConst) return {};
  return "graph input '" + std::string(id) + "' is a " + std::string(op) +
         " node; a graph input must be an Input node (or a Const, a default value)";
}

std::string graph_input_problem(const Graph& g, NodeId n) {
  return graph_input_op_problem(g.node(n).id, g.node(n).op.name());
}

}  // namespace graphfuse::checks
