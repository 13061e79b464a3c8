// The fast set's com.microsoft.QLinearConcat(Y_scale, Y_zero_point, X1, X1_scale, X1_zero_point,
// ...) {axis}: each output element is the requantized value of one input element, so every
// input gets a 256-entry table, made by running the reference kernel once on all byte values
// (its own results, so its integers by construction, and its parameter checks), and the
// concatenation copies through the tables.
#include <cstdint>
#include <string>
#include <vector>

#include "core/util.h"
#include "fast/byte_values.h"

namespace graphfuse::kernels {

namespace {

std::vector<Tensor> qlinear_concat(const KernelCall& c) {
  const KernelFn& reference = *registry(KernelSet::Reference).find("com.microsoft.QLinearConcat");
  if (c.inputs.size() < 5 || (c.inputs.size() - 2) % 3 != 0) return reference(c);
  const std::size_t k = (c.inputs.size() - 2) / 3;
  std::vector<const Tensor*> xs;
  for (std::size_t i = 0; i < k; ++i) {
    const Tensor* x = c.input(2 + 3 * i);
    if (!x || !x->has_data() || (x->dtype != DType::UInt8 && x->dtype != DType::Int8)) return reference(c);
    xs.push_back(x);
  }
  const auto rank = static_cast<std::int64_t>(xs[0]->shape.size());
  std::int64_t axis = attr_int(c.attrs, "axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) return reference(c);
  if (axis < 0) axis += rank;
  Shape shape = xs[0]->shape;
  shape[static_cast<std::size_t>(axis)] = 0;
  for (const Tensor* x : xs) {
    if (static_cast<std::int64_t>(x->shape.size()) != rank) return reference(c);
    for (std::int64_t d = 0; d < rank; ++d)
      if (d != axis && x->shape[static_cast<std::size_t>(d)] != xs[0]->shape[static_cast<std::size_t>(d)])
        return reference(c);
    shape[static_cast<std::size_t>(axis)] += x->shape[static_cast<std::size_t>(axis)];
  }
  // The tables: the reference kernel on every byte value of each input, concatenated on axis 0.
  std::vector<Tensor> all(k);
  Attributes table_attrs;
  table_attrs.set("axis", AttrValue(std::int64_t{0}));
  KernelCall table_call(c.node_id, c.op, table_attrs);
  table_call.inputs = c.inputs;
  for (std::size_t i = 0; i < k; ++i) {
    all[i] = fast::every_byte_value(xs[i]->dtype);
    table_call.inputs[2 + 3 * i] = &all[i];
  }
  const Tensor table = reference(table_call).at(0);
  const auto* t = reinterpret_cast<const std::uint8_t*>(table.bytes().data());
  Tensor y = alloc_unfilled(table.dtype, shape);
  auto* out = mut<std::uint8_t>(y);
  std::int64_t outer = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<std::size_t>(d)];
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::size_t i = 0; i < k; ++i) {
      const std::int64_t inner = outer == 0 ? 0 : xs[i]->num_elements() / outer;
      const auto* in = reinterpret_cast<const std::uint8_t*>(xs[i]->bytes().data()) + o * inner;
      const std::uint8_t* ti = t + 256 * i;
      for (std::int64_t e = 0; e < inner; ++e) *out++ = ti[in[e]];
    }
  return {y};
}

}  // namespace

void register_fast_qlinear_concat(KernelRegistry& r) { r.add("com.microsoft.QLinearConcat", qlinear_concat); }

}  // namespace graphfuse::kernels
