// The fast set's element-wise quantized unary ops (com.microsoft.QLinearSigmoid,
// QLinearLeakyRelu) as a 256-entry table: an 8-bit input has 256 possible values, so the
// reference kernel runs once on all of them and each element is a lookup. The table is the
// reference kernel's own output, so the results are its integers by construction, and
// its checks (and error messages) apply unchanged. ONNX Runtime's CPU kernels use tables
// too, built with their own float math.
#include <cstdint>
#include <string>

#include "core/util.h"
#include "fast/byte_values.h"
#include "fast/layout.h"

namespace graphfuse::kernels {

namespace {

KernelFn lookup(std::string op) {
  return [op](const KernelCall& c) -> std::vector<Tensor> {
    const KernelFn& reference = *registry(KernelSet::Reference).find(op);
    const Tensor* x = c.input(0);
    if (!x || !x->has_data() || (x->dtype != DType::UInt8 && x->dtype != DType::Int8)) return fast::run_plain(reference, c);
    // Entry b of the table is the output for the input whose byte is b (uint8 b, or int8
    // with the same bits).
    const Tensor values = fast::every_byte_value(x->dtype);
    KernelCall table_call(c.node_id, c.op, c.attrs, c.num_outputs);
    table_call.inputs = c.inputs;
    table_call.inputs[0] = &values;
    const Tensor table = reference(table_call).at(0);
    const auto* t = reinterpret_cast<const std::uint8_t*>(table.bytes().data());
    const auto* in = reinterpret_cast<const std::uint8_t*>(x->bytes().data());
    Tensor y = alloc_unfilled(table.dtype, x->shape);
    auto* out = mut<std::uint8_t>(y);
    const std::int64_t n = x->num_elements();
    for (std::int64_t i = 0; i < n; ++i) out[i] = t[in[i]];
    // Element for element: the output has the input's layout.
    c.out_layout = c.layout(0);
    return {y};
  };
}

}  // namespace

void register_fast_qlinear_lookup(KernelRegistry& r) {
  for (const char* op : {"com.microsoft.QLinearSigmoid", "com.microsoft.QLinearLeakyRelu"}) r.add(op, lookup(op), LayoutSupport::Elementwise);
}

}  // namespace graphfuse::kernels
