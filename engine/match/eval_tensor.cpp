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

}  // namespace graphfuse::match
