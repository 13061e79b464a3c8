// The cost model's inner loop, shared by CostModel::estimate and the gate: facts about an
// op decided once per op type (not by comparing its name on every estimate), types read
// as views (not copied), and one node's estimate from them.
#pragma once

#include <span>

#include "graphfuse/cost.h"

namespace graphfuse::cost {

/// What the model needs to know about an op, from its name alone.
struct OpFacts {
  CostClass cls = CostClass::Eltwise;
  KernelKind kind = KernelKind::Eltwise;  ///< Eltwise, Transpose or Math for the memory-bound class
  bool onnx_layout = false;               ///< channels in dim 1 (ONNX convolutions)
  bool nhwc_only = false;                 ///< com.microsoft.NhwcConv
  bool depthwise = false;                 ///< the name says depthwise
};

/// The facts of `op` from its name.
OpFacts op_facts(std::string_view op);
/// The same for an interned op, cached per thread (OpType::name takes a lock).
const OpFacts& op_facts(OpType op);

/// The type of `v` as value_type() gives it, as a view into the graph (valid while the
/// node and its attributes are).
TypeView type_view(const Graph& g, ValueRef v);

/// One node's estimate: `inputs` as the node reads them (an absent one not present),
/// `all_const`: every input is a constant (the node is folded and free).
NodeCost estimate_node(const CostModel& m, const OpFacts& f, const Attributes& attrs, std::span<const TypeView> inputs,
                       bool all_const, const TypeView& output);

/// Node n of g, estimated without copying a type.
NodeCost estimate_node(const CostModel& m, const Graph& g, NodeId n);

/// True when estimate_node(m, g, n) would say `known` false because n's output shape is not
/// known (a node that costs something, with an input that is not a constant): decided from
/// the output and the inputs' ops alone, without the estimate.
bool output_unknown(const Graph& g, NodeId n);

}  // namespace graphfuse::cost
