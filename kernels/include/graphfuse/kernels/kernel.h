// The kernel interface: one call per node, a registry keyed by op name, two kernel sets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graphfuse/attribute.h"
#include "graphfuse/graph.h"

namespace graphfuse::kernels {

/// Which implementation of each op runs: the plain reference loops, or oneDNN/TBB.
enum class KernelSet { Reference, Fast };

/// "reference" / "fast".
std::string_view kernel_set_name(KernelSet s);
/// Inverse of kernel_set_name; throws Error listing the valid names.
KernelSet kernel_set_from_name(std::string_view name);

/// Everything a kernel sees of one node. Inputs are borrowed for the call only.
struct KernelCall {
  std::string_view node_id;  ///< for error messages
  std::string_view op;       ///< the full op name ("Conv", "com.microsoft.FusedConv")
  const Attributes& attrs;
  /// One entry per input slot; null for an absent optional input.
  std::vector<const Tensor*> inputs;
  /// Parallel to inputs: true when the slot is fed by a Const/Constant node, so a fast
  /// kernel may cache work derived from it (reordered weights) across runs.
  std::vector<bool> input_is_const;
  std::size_t num_outputs = 1;

  /// Input i, or null when absent / out of range.
  const Tensor* input(std::size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  /// Input i; throws Error("missing input i") when absent.
  const Tensor& required(std::size_t i) const;
  bool is_const(std::size_t i) const { return i < input_is_const.size() && input_is_const[i]; }
};

/// A kernel computes all outputs of a node (output k of the node is element k). It
/// throws graphfuse::Error with a plain message; the executor prefixes node and op.
using KernelFn = std::function<std::vector<Tensor>(const KernelCall&)>;

/// Op name -> kernel. Lookups by OpType name; domain-qualified names are distinct ops.
class KernelRegistry {
 public:
  /// Registers (or replaces) the kernel for `op`.
  void add(std::string op, KernelFn fn);
  /// The kernel for `op`, or null.
  const KernelFn* find(std::string_view op) const;
  bool has(std::string_view op) const { return find(op) != nullptr; }
  /// Registered op names, sorted.
  std::vector<std::string> ops() const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, KernelFn, Hash, std::equal_to<>> map_;
};

/// The frozen registry of a kernel set. Fast = every reference kernel, with the ops
/// that have a fast implementation replaced; built once, then shared read-only.
const KernelRegistry& registry(KernelSet set);

/// Runs one op outside any graph (tests, constant folding). An input with dtype
/// Undefined stands for an absent optional input. Throws Error
/// "op 'X': message" on bad input and "no kernel for op 'X'" for unknown ops.
std::vector<Tensor> run_op(KernelSet set, std::string_view op, const std::vector<Tensor>& inputs,
                           const Attributes& attrs = {}, std::size_t num_outputs = 1);

}  // namespace graphfuse::kernels
