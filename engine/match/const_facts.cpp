#include "match/const_facts.h"

#include <cmath>
#include <cstring>

namespace graphfuse::match {

namespace {

template <class T>
T load(const Tensor& t, std::int64_t k) {
  T v;
  std::memcpy(&v, t.data->data() + static_cast<std::size_t>(k) * sizeof(T), sizeof(T));
  return v;
}

double half_to_double(std::uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

bool close(double actual, double written) {
  if (std::isnan(actual) || std::isnan(written)) return false;
  if (actual == written) return true;  // infinities
  return std::fabs(actual - written) <= kConstRtol * std::fabs(written) + kConstAtol;
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
    case DType::Float16: return half_to_double(load<std::uint16_t>(t, k));
    case DType::BFloat16: {
      std::uint32_t bits = static_cast<std::uint32_t>(load<std::uint16_t>(t, k)) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return static_cast<double>(f);
    }
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

bool const_matches(const Graph& g, ValueRef v, const ConstCheck& c) {
  if (!is_constant(g, v) || v.port != 0) return false;
  if (c.boolean) {  // `true` / `false` match bool tensors only, never the numbers 1 and 0
    const Tensor* t = g.node(v.node).attrs.get_if<Tensor>("value");
    if (!t || t->dtype != DType::Bool) return false;
  }
  if (const Tensor* t = g.node(v.node).attrs.get_if<Tensor>("value")) {
    // Streamed element by element: a candidate may be a large weight tensor, and the
    // first element that differs settles it.
    std::int64_t n = t->num_elements();
    if (!t->has_data() || n == 0 || t->data->size() < static_cast<std::size_t>(n) * dtype_size(t->dtype)) return false;
    if (c.has_tensor && t->shape != c.tensor.shape) return false;
    const bool ints = is_int_type(t->dtype);
    for (std::int64_t k = 0; k < n; ++k) {
      double want = c.value;
      if (c.has_tensor) {
        auto w = tensor_element(c.tensor, k);
        if (!w) return false;
        want = *w;
      }
      if (ints) {
        if (static_cast<double>(*int_element(*t, k)) != want) return false;
      } else {
        auto d = tensor_element(*t, k);
        if (!d || !close(*d, want)) return false;
      }
    }
    return true;
  }
  auto d = const_data(g, v);  // ONNX Constant's value_float(s) / value_int(s): small
  if (!d || d->size() == 0) return false;
  if (c.has_tensor) {
    if (d->shape != c.tensor.shape || static_cast<std::int64_t>(d->size()) != c.tensor.num_elements()) return false;
    for (std::size_t k = 0; k < d->size(); ++k) {
      auto w = tensor_element(c.tensor, static_cast<std::int64_t>(k));
      if (!w) return false;
      if (d->is_int ? static_cast<double>(d->ints[k]) != *w : !close(d->floats[k], *w)) return false;
    }
    return true;
  }
  for (std::size_t k = 0; k < d->size(); ++k)
    if (d->is_int ? static_cast<double>(d->ints[k]) != c.value : !close(d->floats[k], c.value)) return false;
  return true;
}

}  // namespace graphfuse::match
