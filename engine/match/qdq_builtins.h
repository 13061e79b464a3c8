// Builtins that let rule conditions see quantized (QDQ) units and a value's readers:
// in_qdq_unit(x), feeds_quantize(x), feeds(x, op). See docs/rules.md and docs/quantization.md.
#pragma once

#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse::match {

/// Whether v's node reads the output of a DequantizeLinear (any domain).
bool reads_dequantize(const Graph& g, ValueRef v);

/// Whether v is requantized: a QuantizeLinear (any domain) reads it, directly or through a
/// chain of Reshape / Transpose / Squeeze / Unsqueeze / Flatten nodes that nothing else reads.
bool feeds_quantize(const Graph& g, ValueRef v);

/// Whether v's node is inside a quantized unit: it reads a DequantizeLinear or one of its
/// outputs feeds a QuantizeLinear.
bool in_qdq_unit(const Graph& g, ValueRef v);

/// Whether a node of op `op` reads the value v ("Add", "com.microsoft.Gelu": the op's full
/// name, as patterns write it).
bool feeds(const Graph& g, ValueRef v, std::string_view op);

}  // namespace graphfuse::match
