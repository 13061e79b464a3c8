// Builtins over a constant tensor's bytes: slice, join, lower_triangular, max_value. The bytes are
// copied as they are, so a result keeps the constant's dtype (float16 caches stay float16)
// and compares exactly.
#include "match/eval_tensor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "graph/const_facts.h"

namespace graphfuse::match {

std::optional<AttrValue> slice_constant(const Graph& g, ValueRef x, std::int64_t axis, std::int64_t start,
                                        std::int64_t end, std::int64_t step) {
  const Tensor* t = constant_tensor(g, x);
  if (!t || !t->has_data() || t->shape.empty() || step < 1) return std::nullopt;
  const std::size_t es = dtype_size(t->dtype);
  const std::int64_t n = t->num_elements();
  if (es == 0 || n <= 0 || t->data->size() < static_cast<std::size_t>(n) * es) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(t->shape.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const std::int64_t len = t->shape[static_cast<std::size_t>(axis)];
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0 || end > len || start >= end) return std::nullopt;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= t->shape[static_cast<std::size_t>(d)];
  for (std::int64_t d = axis + 1; d < rank; ++d) inner *= t->shape[static_cast<std::size_t>(d)];
  const std::int64_t taken = (end - start + step - 1) / step;
  Tensor out;
  out.dtype = t->dtype;
  out.shape = t->shape;
  out.shape[static_cast<std::size_t>(axis)] = taken;
  auto bytes = std::make_shared<std::string>();
  const std::size_t chunk = static_cast<std::size_t>(inner) * es;
  bytes->reserve(static_cast<std::size_t>(outer * taken) * chunk);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = start; i < end; i += step)
      bytes->append(t->data->data() + static_cast<std::size_t>((o * len + i) * inner) * es, chunk);
  out.data = std::move(bytes);
  return out;
}

std::optional<AttrValue> join_constants(const Graph& g, const std::vector<ValueRef>& xs, std::int64_t axis) {
  std::vector<const Tensor*> ts;
  for (ValueRef x : xs) {
    const Tensor* t = constant_tensor(g, x);
    if (!t || !t->has_data() || t->shape.empty()) return std::nullopt;
    const std::int64_t n = t->num_elements();
    if (n < 0 || t->data->size() < static_cast<std::size_t>(n) * dtype_size(t->dtype)) return std::nullopt;
    if (!ts.empty() && (t->dtype != ts[0]->dtype || t->shape.size() != ts[0]->shape.size())) return std::nullopt;
    ts.push_back(t);
  }
  if (ts.empty()) return std::nullopt;
  const std::size_t es = dtype_size(ts[0]->dtype);
  const auto rank = static_cast<std::int64_t>(ts[0]->shape.size());
  if (axis < 0) axis += rank;
  if (es == 0 || axis < 0 || axis >= rank) return std::nullopt;
  const auto ax = static_cast<std::size_t>(axis);
  Tensor out;
  out.dtype = ts[0]->dtype;
  out.shape = ts[0]->shape;
  out.shape[ax] = 0;
  for (const Tensor* t : ts) {
    for (std::size_t d = 0; d < out.shape.size(); ++d)
      if (d != ax && t->shape[d] != ts[0]->shape[d]) return std::nullopt;
    out.shape[ax] += t->shape[ax];
  }
  // Row-major: every outer index takes each tensor's block of shape[ax] * inner elements in turn.
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < ax; ++d) outer *= out.shape[d];
  for (std::size_t d = ax + 1; d < out.shape.size(); ++d) inner *= out.shape[d];
  auto bytes = std::make_shared<std::string>();
  bytes->reserve(static_cast<std::size_t>(outer * out.shape[ax] * inner) * es);
  for (std::int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : ts) {
      const std::size_t chunk = static_cast<std::size_t>(t->shape[ax] * inner) * es;
      bytes->append(t->data->data() + static_cast<std::size_t>(o) * chunk, chunk);
    }
  out.data = std::move(bytes);
  return out;
}

namespace {
// The int64 elements of constant v, or nullopt (not a constant, or not of an integer type).
std::optional<std::vector<std::int64_t>> int_values(const Graph& g, ValueRef v) {
  auto c = const_data(g, v);
  if (!c || !c->is_int) return std::nullopt;
  return std::move(c->ints);
}
}  // namespace

std::optional<AttrValue> lower_triangular(const Graph& g, ValueRef x) {
  // Through a chain of top-left windows down to the constant (bounded: a chain is short).
  for (int depth = 0; depth < 8; ++depth) {
    if (!x.valid() || !g.alive(x.node)) return std::nullopt;
    if (is_constant(g, x)) {
      // Every dtype read by value (const_data): -0.0 is zero, NaN is not.
      auto c = const_data(g, x);
      if (!c || c->shape.size() < 2) return std::nullopt;
      const std::int64_t rows = c->shape[c->shape.size() - 2], cols = c->shape.back();
      for (std::size_t k = 0; k < c->size(); ++k) {
        const auto i = static_cast<std::int64_t>(k) / cols % rows, j = static_cast<std::int64_t>(k) % cols;
        const bool nonzero = c->is_int ? c->ints[k] != 0 : c->floats[k] != 0.0;
        if (nonzero != (j <= i)) return false;
      }
      return true;
    }
    const Node& node = g.node(x.node);
    if (g.op(x.node).name() != "Slice" || node.inputs.size() < 3) return std::nullopt;
    const ValueRef data = node.inputs[0];
    const ValueType dt = known_type(g, data);
    if (!dt.shape_known || dt.shape.size() < 2) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(dt.shape.size());
    auto starts = int_values(g, node.inputs[1]);
    if (!starts) return std::nullopt;
    std::vector<std::int64_t> axes;
    if (node.inputs.size() > 3 && node.inputs[3].valid()) {
      auto a = int_values(g, node.inputs[3]);
      if (!a) return std::nullopt;
      axes = *a;
    } else {
      for (std::int64_t a = 0; a < static_cast<std::int64_t>(starts->size()); ++a) axes.push_back(a);
    }
    std::vector<std::int64_t> steps(starts->size(), 1);
    if (node.inputs.size() > 4 && node.inputs[4].valid()) {
      auto s = int_values(g, node.inputs[4]);
      if (!s) return std::nullopt;
      steps = *s;
    }
    if (axes.size() != starts->size() || steps.size() != starts->size()) return std::nullopt;
    for (std::size_t k = 0; k < axes.size(); ++k) {
      const std::int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (a >= rank - 2 && ((*starts)[k] != 0 || steps[k] != 1)) return std::nullopt;
    }
    x = data;
  }
  return std::nullopt;
}

std::optional<AttrValue> max_value(const Graph& g, ValueRef x) {
  if (!x.valid() || !g.alive(x.node)) return std::nullopt;
  if (is_constant(g, x)) {
    auto c = const_data(g, x);
    if (!c || c->size() == 0) return std::nullopt;
    if (c->is_int) return *std::max_element(c->ints.begin(), c->ints.end());
    double m = -std::numeric_limits<double>::infinity();
    for (double v : c->floats) {
      if (std::isnan(v)) return std::nullopt;
      m = std::max(m, v);
    }
    return static_cast<float>(m);
  }
  if (g.op(x.node).name() != "ConstantOfShape") return std::nullopt;
  const Tensor* fill = g.node(x.node).attrs.get_if<Tensor>("value");
  if (!fill) return 0.0f;  // ONNX's default fill: a float32 0
  if (fill->num_elements() != 1) return std::nullopt;
  if (is_int_type(fill->dtype)) {
    auto i = int_element(*fill, 0);
    if (!i) return std::nullopt;
    return *i;
  }
  auto f = tensor_element(*fill, 0);
  if (!f || std::isnan(*f)) return std::nullopt;
  return static_cast<float>(*f);
}

}  // namespace graphfuse::match
