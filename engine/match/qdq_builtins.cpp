// A node inside a quantized unit is one a runtime fuses into an integer kernel; a float
// fusion cutting through it would prevent that (issue 44; docs/quantization.md). The
// quantized rules themselves ask the second half alone: a DequantizeLinear -> MatMul whose
// output no QuantizeLinear reads becomes MatMulIntegerToFloat, one whose output is
// requantized becomes QLinearMatMul.
#include "match/qdq_builtins.h"

#include <algorithm>
#include <iterator>

namespace graphfuse::match {

namespace {
bool live(const Graph& g, ValueRef v) { return v.valid() && g.alive(v.node); }
}  // namespace

bool reads_dequantize(const Graph& g, ValueRef v) {
  if (!live(g, v)) return false;
  for (ValueRef in : g.node(v.node).inputs)
    if (in.valid() && g.op(in.node).local_name() == "DequantizeLinear") return true;
  return false;
}

bool feeds_quantize(const Graph& g, ValueRef v) {
  // Data-movement ops a per-tensor QuantizeLinear moves above (rules/onnx/qdq_forms.yaml's
  // onnx_q_above_data_movement, ONNX Runtime's QDQ propagation): a value that reaches a Q
  // through a chain of them, each read by nothing else, is requantized all the same.
  static constexpr std::string_view kMovers[] = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten"};
  for (int depth = 0; live(g, v) && depth < 16; ++depth) {
    const auto uses = g.consumers(v);
    for (const Use& u : uses)
      if (g.op(u.node).local_name() == "QuantizeLinear") return true;
    if (uses.size() != 1 || uses[0].slot != 0) return false;
    const NodeId n = uses[0].node;
    const std::string_view op = g.op(n).name();
    if (std::find(std::begin(kMovers), std::end(kMovers), op) == std::end(kMovers)) return false;
    if (g.node(n).outputs.size() != 1 || g.is_output(ValueRef{n, 0})) return false;
    v = ValueRef{n, 0};
  }
  return false;
}

bool in_qdq_unit(const Graph& g, ValueRef v) {
  if (!live(g, v)) return false;
  if (reads_dequantize(g, v)) return true;
  for (const Use& u : g.uses(v.node))
    if (g.op(u.node).local_name() == "QuantizeLinear") return true;
  return false;
}

bool feeds(const Graph& g, ValueRef v, std::string_view op) {
  if (!live(g, v)) return false;
  for (const Use& u : g.consumers(v))
    if (g.op(u.node).name() == op) return true;
  return false;
}

}  // namespace graphfuse::match
