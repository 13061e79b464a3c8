#include "graph/const_facts.h"

#include <cmath>
#include <cstring>

#include "graphfuse/float16.h"

namespace graphfuse {

namespace {

template <class T>
T load(const Tensor& t, std::int64_t k) {
  T v;
  std::memcpy(&v, t.data->data() + static_cast<std::size_t>(k) * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

bool is_int_type(DType t) {
  switch (t) {
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
    case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64:
    case DType::Bool:
      return true;
    default:
      return false;
  }
}

std::optional<std::int64_t> int_element(const Tensor& t, std::int64_t k) {
  switch (t.dtype) {
    case DType::Int8: return load<std::int8_t>(t, k);
    case DType::Int16: return load<std::int16_t>(t, k);
    case DType::Int32: return load<std::int32_t>(t, k);
    case DType::Int64: return load<std::int64_t>(t, k);
    case DType::UInt8: case DType::Bool: return load<std::uint8_t>(t, k);
    case DType::UInt16: return load<std::uint16_t>(t, k);
    case DType::UInt32: return load<std::uint32_t>(t, k);
    case DType::UInt64: return static_cast<std::int64_t>(load<std::uint64_t>(t, k));
    default: return std::nullopt;
  }
}

std::optional<double> tensor_element(const Tensor& t, std::int64_t k) {
  if (!t.has_data() || k < 0 || k >= t.num_elements()) return std::nullopt;
  if (t.data->size() < static_cast<std::size_t>(k + 1) * dtype_size(t.dtype)) return std::nullopt;
  switch (t.dtype) {
    case DType::Float32: return static_cast<double>(load<float>(t, k));
    case DType::Float64: return load<double>(t, k);
    case DType::Float16: return static_cast<double>(half_to_float(load<std::uint16_t>(t, k)));
    case DType::BFloat16: return static_cast<double>(bf16_to_float(load<std::uint16_t>(t, k)));
    default: {
      auto i = int_element(t, k);
      if (!i) return std::nullopt;
      return static_cast<double>(*i);
    }
  }
}

std::optional<ConstData> const_data(const Graph& g, ValueRef v) {
  if (!is_constant(g, v) || v.port != 0) return std::nullopt;
  const Attributes& a = g.node(v.node).attrs;
  ConstData out;
  if (const Tensor* t = a.get_if<Tensor>("value")) {
    if (!t->has_data() || t->data->size() < static_cast<std::size_t>(t->num_elements()) * dtype_size(t->dtype))
      return std::nullopt;
    out.shape = t->shape;
    out.is_int = is_int_type(t->dtype);
    for (std::int64_t k = 0; k < t->num_elements(); ++k) {
      if (out.is_int) {
        out.ints.push_back(*int_element(*t, k));
      } else {
        auto d = tensor_element(*t, k);
        if (!d) return std::nullopt;
        out.floats.push_back(*d);
      }
    }
    return out;
  }
  // ONNX Constant's scalar and list forms.
  if (const float* f = a.get_if<float>("value_float")) return ConstData{false, {}, {*f}, {}};
  if (const std::int64_t* i = a.get_if<std::int64_t>("value_int")) return ConstData{true, {*i}, {}, {}};
  if (const auto* fs = a.get_if<std::vector<float>>("value_floats"))
    return ConstData{false, {}, std::vector<double>(fs->begin(), fs->end()), {static_cast<std::int64_t>(fs->size())}};
  if (const auto* is = a.get_if<std::vector<std::int64_t>>("value_ints"))
    return ConstData{true, *is, {}, {static_cast<std::int64_t>(is->size())}};
  return std::nullopt;
}

ValueType known_type(const Graph& g, ValueRef v) {
  if (!v.valid() || !g.alive(v.node)) return {};
  const Node& n = g.node(v.node);
  ValueType vt = v.port < n.outputs.size() ? n.outputs[v.port].type : ValueType{};
  if (vt.shape_known && vt.dtype != DType::Undefined) return vt;
  if (!is_constant(g, v) || v.port != 0) return vt;
  if (const Tensor* t = n.attrs.get_if<Tensor>("value")) {
    if (vt.dtype == DType::Undefined) vt.dtype = t->dtype;
    if (!vt.shape_known) {
      vt.shape = t->shape;
      vt.shape_known = true;
    }
  } else if (const auto* s = n.attrs.get_if<std::vector<std::int64_t>>("shape"); s && !vt.shape_known) {
    vt.shape = *s;  // a TF-style Const that carries only its shape
    vt.shape_known = true;
  }
  return vt;
}

}  // namespace graphfuse
