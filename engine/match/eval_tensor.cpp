// Builtins over a constant tensor's bytes: slice, join, lower_triangular. The bytes are
// copied as they are, so a result keeps the constant's dtype (float16 caches stay float16)
// and compares exactly.
#include "match/eval_tensor.h"

#include <cstring>
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

// Whether element e of a tensor of dtype dt is nonzero; floats by value (-0.0 is zero).
bool nonzero(DType dt, const char* e, std::size_t es) {
  if (dt == DType::Float32) {
    float f;
    std::memcpy(&f, e, sizeof f);
    return f != 0.0f;
  }
  if (dt == DType::Float64) {
    double d;
    std::memcpy(&d, e, sizeof d);
    return d != 0.0;
  }
  if (dt == DType::Float16 || dt == DType::BFloat16) {
    std::uint16_t h;
    std::memcpy(&h, e, sizeof h);
    return (h & 0x7fffu) != 0;
  }
  for (std::size_t b = 0; b < es; ++b)
    if (e[b] != 0) return true;
  return false;
}

std::optional<AttrValue> constant_lower_triangular(const Tensor& t) {
  const std::size_t es = dtype_size(t.dtype);
  const std::int64_t n = t.num_elements();
  if (t.shape.size() < 2 || es == 0 || n < 0 || t.data->size() < static_cast<std::size_t>(n) * es)
    return std::nullopt;
  const std::int64_t rows = t.shape[t.shape.size() - 2], cols = t.shape.back();
  const char* p = t.data->data();
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t j = k % cols, i = (k / cols) % rows;
    if (nonzero(t.dtype, p + static_cast<std::size_t>(k) * es, es) != (j <= i)) return false;
  }
  return true;
}

// The constant int64 elements of v, or nullopt.
std::optional<std::vector<std::int64_t>> int_values(const Graph& g, ValueRef v) {
  const Tensor* t = constant_tensor(g, v);
  if (!t || !t->has_data() || t->dtype != DType::Int64) return std::nullopt;
  const std::int64_t n = t->num_elements();
  if (n < 0 || t->data->size() < static_cast<std::size_t>(n) * sizeof(std::int64_t)) return std::nullopt;
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  std::memcpy(out.data(), t->data->data(), out.size() * sizeof(std::int64_t));
  return out;
}

}  // namespace

std::optional<AttrValue> lower_triangular(const Graph& g, ValueRef x) {
  // Through a chain of top-left windows down to the constant (bounded: a chain is short).
  for (int depth = 0; depth < 8; ++depth) {
    if (!x.valid() || !g.alive(x.node)) return std::nullopt;
    if (const Tensor* t = constant_tensor(g, x)) {
      if (!t->has_data()) return std::nullopt;
      return constant_lower_triangular(*t);
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

}  // namespace graphfuse::match
