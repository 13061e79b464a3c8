// The roofline cost model: an estimated time per node from shapes and a target's
// figures, and the RewriteGate that applies a rewrite only where the target has a
// kernel for what it creates and the estimate says it pays (docs/cost-model.md).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/target.h"

namespace graphfuse {

/// Which roofline a node is placed on.
enum class CostClass { Free, Conv, MatMul, Eltwise };

/// Which efficiency curve of the profile a node's kernel follows: kernels of one roofline
/// class differ widely (a depthwise or 1x1 convolution reaches a fraction of a 3x3's FLOP
/// rate; a Transpose or a Sigmoid pass a fraction of a Relu's bandwidth). A kind without a
/// curve uses its class's ("conv" or "eltwise").
enum class KernelKind { Conv, Conv1x1, DepthwiseConv, MatMul, Eltwise, Transpose, Math };

/// The profile key of a kind's curve: "conv", "conv1x1", "dwconv", "matmul", "eltwise",
/// "transpose", "math".
const char* kernel_kind_key(KernelKind k);

/// One node's estimate.
struct NodeCost {
  CostClass cls = CostClass::Eltwise;
  KernelKind kind = KernelKind::Eltwise;
  double flops = 0;
  double bytes = 0;        ///< bytes read and written
  double us = 0;           ///< max(compute, memory) + kernel overhead, microseconds
  bool known = true;       ///< false when a shape it needs is unknown (us is then a guess)
};

/// What the model needs of a node: its op, attributes, and its inputs' and output's
/// types (null = unknown). `const_inputs` says which inputs are constants: a node
/// whose inputs are all constants is folded before it runs and costs nothing.
struct CostQuery {
  std::string_view op;
  const Attributes* attrs = nullptr;
  std::vector<const ValueType*> inputs;
  std::vector<bool> const_inputs;
  const ValueType* output = nullptr;
};

class CostModel {
 public:
  explicit CostModel(TargetProfile target);
  const TargetProfile& target() const { return t_; }

  /// Time of one node (see docs/cost-model.md for the formula).
  NodeCost estimate(const CostQuery& q) const;
  /// Time of node n of g.
  NodeCost estimate(const Graph& g, NodeId n) const;
  /// Sum over g's nodes (Input and Const nodes are free).
  double graph_us(const Graph& g) const;

  /// Efficiency (fraction of peak) of a kernel kind at a size, from the profile's curves
  /// (interpolated in log size; the class's curve when the kind has none; 1 without any).
  double efficiency(KernelKind kind, double size) const;

 private:
  TargetProfile t_;
  /// Each kind's curve, its class's when it has none (null: no curve): resolved once,
  /// not per estimate.
  std::array<const std::vector<EfficiencyPoint>*, 7> curves_{};
};

/// Const or Constant: folded, free. Compares interned ops (OpType::name takes a lock, and
/// the gate asks this for every input of every candidate).
bool is_constant_op(OpType op);

/// The shape of `v` as far as it is known: its output type, else for a constant the
/// tensor's or the `shape` attribute's (dtype, shape and whether it is known; no dim names).
ValueType value_type(const Graph& g, ValueRef v);

/// A RewriteGate for `model`'s target: declines a rewrite that creates an op the target
/// lacks ("no_kernel: ..."), and, when `use_cost`, one whose estimated saving is below the
/// target's margin ("no_gain"); orders the rest by saving (microseconds). Without
/// `details` the verdicts carry no GateVerdict::detail sentence (only explain shows it).
std::shared_ptr<const RewriteGate> make_target_gate(std::shared_ptr<const CostModel> model, bool use_cost = true,
                                                    bool details = true);

}  // namespace graphfuse
