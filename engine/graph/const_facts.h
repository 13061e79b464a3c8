// Facts of a graph's constants: a constant's elements, a tensor's element, a value's type
// completed from its constant. Rule conditions, the rewriter and the ONNX type inference read them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse {

// A constant's elements, read once: exact integers for integer and bool tensors (shape
// tensors must survive int64), doubles for floating types.
struct ConstData {
  bool is_int = false;
  std::vector<std::int64_t> ints;
  std::vector<double> floats;
  std::vector<std::int64_t> shape;
  std::size_t size() const { return is_int ? ints.size() : floats.size(); }
};

/// The elements of constant v (a Const/Constant's tensor, or ONNX Constant's scalar and
/// list forms), or nullopt when v is no constant or its data is short or unreadable.
std::optional<ConstData> const_data(const Graph& g, ValueRef v);

/// True for the integer element types and Bool (read exactly, as int64).
bool is_int_type(DType t);

/// Element k of an integer or Bool tensor, exactly; nullopt for other element types.
std::optional<std::int64_t> int_element(const Tensor& t, std::int64_t k);

/// Element k of a tensor with data as a double (float, int and bool element types);
/// nullopt for types without a numeric reading.
std::optional<double> tensor_element(const Tensor& t, std::int64_t k);

/// What is known of a value's type: the producer's OutputInfo type, completed from a
/// constant tensor (or a TF-style Const `shape` attribute) when there is one.
ValueType known_type(const Graph& g, ValueRef v);

}  // namespace graphfuse
