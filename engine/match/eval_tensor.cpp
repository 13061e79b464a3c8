// Builtins over a constant tensor's bytes: slice. The bytes are copied as they are, so the
// result keeps the constant's dtype (float16 caches stay float16) and compares exactly.
#include "match/eval_tensor.h"

#include <string>

namespace graphfuse::match {

std::optional<AttrValue> slice_constant(const Graph& g, ValueRef x, std::int64_t axis, std::int64_t start,
                                        std::int64_t end) {
  const Tensor* t = constant_tensor(g, x);
  if (!t || !t->has_data() || t->shape.empty()) return std::nullopt;
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
  Tensor out;
  out.dtype = t->dtype;
  out.shape = t->shape;
  out.shape[static_cast<std::size_t>(axis)] = end - start;
  auto bytes = std::make_shared<std::string>();
  const std::size_t chunk = static_cast<std::size_t>((end - start) * inner) * es;
  bytes->reserve(static_cast<std::size_t>(outer) * chunk);
  for (std::int64_t o = 0; o < outer; ++o)
    bytes->append(t->data->data() + static_cast<std::size_t>((o * len + start) * inner) * es, chunk);
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

}  // namespace graphfuse::match
