#include "match/const_check.h"

#include <cmath>

#include "graph/const_facts.h"

namespace graphfuse::match {

namespace {

bool close(double actual, double written) {
  if (std::isnan(actual) || std::isnan(written)) return false;
  if (actual == written) return true;  // infinities
  return std::fabs(actual - written) <= kConstRtol * std::fabs(written) + kConstAtol;
}

}  // namespace

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
