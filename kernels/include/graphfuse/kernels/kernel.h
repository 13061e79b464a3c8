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
#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels {

/// Which implementation of each op runs: the plain reference loops, or oneDNN and our vectorized loops.
enum class KernelSet { Reference, Fast };

/// "reference" / "fast".
std::string_view kernel_set_name(KernelSet s);
/// Inverse of kernel_set_name; throws Error listing the valid names.
KernelSet kernel_set_from_name(std::string_view name);

/// Physical order of a 4-D activation whose logical shape is NCHW: Plain = row-major in
/// that order, ChannelsLast = the bytes are NHWC. Only the fast set's executor produces
/// ChannelsLast values, and only for kernels that declare they accept them.
enum class Layout : std::uint8_t { Plain, ChannelsLast };

/// What the executor's plan asks a kernel to apply to its output 0 before returning it
/// (KernelCall::epilogue), in place of the nodes that alone read that output:
/// y = act(y * mul[c] + add[c]), c the channel (dim 1). The per-channel affine is a fused
/// inference BatchNormalization (present when `mul` is not empty); act may be None.
struct Epilogue {
  std::vector<float> mul, add;
  ActivationSpec act;
};

/// Which epilogues a kernel applies (KernelRegistry::set_epilogue_support).
enum class EpilogueSupport : std::uint8_t {
  None,
  Relu,             ///< a Relu, no affine (BatchNormalization's one-pass loop)
  PiecewiseLinear,  ///< Relu, LeakyRelu, Clip, HardSigmoid or HardSwish, no affine (oneDNN post-ops)
  ChannelAffine,    ///< the affine, with or without a Relu (Concat: DenseNet's Concat -> norm -> Relu)
};

/// Whether a kernel with this support applies e.
bool accepts(EpilogueSupport support, const Epilogue& e);

/// y (float32, plain layout, channels on dim 1) with e applied: the scalar definition the
/// kernels that take epilogues agree with (ActivationSpec::apply for the activation).
Tensor apply_epilogue(const Tensor& y, const Epilogue& e);

/// Which layouts a kernel accepts (the executor converts inputs to fit).
enum class LayoutSupport : std::uint8_t {
  PlainOnly,     ///< every input Plain (the default)
  ChannelsLast,  ///< input 0 and a residual input may be ChannelsLast; sets out_layout
  Elementwise,   ///< works on bytes: same-shape 4-D inputs in one layout, output alike
  ChannelsLastAnyType,  ///< input 0 (float32, uint8 or int8) may be ChannelsLast, the rest Plain; sets out_layout
};

/// Everything a kernel sees of one node. Inputs are borrowed for the call only.
struct KernelCall {
  KernelCall(std::string_view node, std::string_view op_name, const Attributes& attributes,
             std::size_t outputs = 1)
      : node_id(node), op(op_name), attrs(attributes), num_outputs(outputs) {}

  std::string_view node_id;  ///< for error messages
  std::string_view op;       ///< the full op name ("Conv", "com.microsoft.FusedConv")
  const Attributes& attrs;
  /// One entry per input slot; null for an absent optional input.
  std::vector<const Tensor*> inputs;
  /// Parallel to inputs: true when the slot is fed by a Const/Constant node, so a fast
  /// kernel may cache work derived from it (reordered weights) across runs.
  std::vector<bool> input_is_const;
  std::size_t num_outputs = 1;
  /// Parallel to inputs when not empty: each input's physical layout (else all Plain).
  std::vector<Layout> layouts;
  /// For LayoutSupport::ChannelsLast kernels: produce ChannelsLast output if possible.
  bool prefer_channels_last = false;
  /// Set by the kernel: the physical layout of its 4-D outputs.
  mutable Layout out_layout = Layout::Plain;
  /// Set by the executor's plan, only for kernels whose EpilogueSupport accepts it: what to
  /// apply to output 0 before returning it (the fused nodes', not this one's).
  const Epilogue* epilogue = nullptr;

  /// Input i, or null when absent / out of range.
  const Tensor* input(std::size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  /// Input i; throws Error("missing input i") when absent.
  const Tensor& required(std::size_t i) const;
  bool is_const(std::size_t i) const { return i < input_is_const.size() && input_is_const[i]; }
  Layout layout(std::size_t i) const { return i < layouts.size() ? layouts[i] : Layout::Plain; }
};

/// A kernel computes all outputs of a node (output k of the node is element k). It
/// throws graphfuse::Error with a plain message; the executor prefixes node and op.
using KernelFn = std::function<std::vector<Tensor>(const KernelCall&)>;

/// Op name -> kernel. Lookups by OpType name; domain-qualified names are distinct ops.
class KernelRegistry {
 public:
  /// Registers (or replaces) the kernel for `op`.
  void add(std::string op, KernelFn fn, LayoutSupport support = LayoutSupport::PlainOnly);
  /// The kernel for `op`, or null.
  const KernelFn* find(std::string_view op) const;
  /// What layouts `op`'s kernel accepts (PlainOnly for unknown ops).
  LayoutSupport layout_support(std::string_view op) const;
  /// Declares that `op`'s registered kernel honours KernelCall::epilogue for these
  /// activations (a later add() of `op` resets it to None).
  void set_epilogue_support(std::string_view op, EpilogueSupport support);
  /// Which epilogues `op`'s kernel applies (None for unknown ops).
  EpilogueSupport epilogue_support(std::string_view op) const;
  bool has(std::string_view op) const { return find(op) != nullptr; }
  /// Registered op names, sorted.
  std::vector<std::string> ops() const;
  /// How many add() calls so far, and the ops whose kernel came from a later call than
  /// the first `calls` (sorted): what a second set of registrations replaced or added.
  std::size_t calls() const { return calls_; }
  std::vector<std::string> ops_added_after(std::size_t calls) const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Entry {
    KernelFn fn;
    LayoutSupport support;
    std::size_t call = 0;  // which add() registered it
    EpilogueSupport epilogue = EpilogueSupport::None;
  };
  std::unordered_map<std::string, Entry, Hash, std::equal_to<>> map_;
  std::size_t calls_ = 0;
};

/// The frozen registry of a kernel set. Fast = every reference kernel, with the ops
/// that have a fast implementation replaced; built once, then shared read-only.
const KernelRegistry& registry(KernelSet set);

/// The ops the fast set runs with a kernel of its own (oneDNN or SIMD) rather than the
/// reference one, sorted: what `graphfuse backend-test --list-kernels` reports as "fast".
std::vector<std::string> fast_kernel_ops();

/// Runs one op outside any graph (tests, constant folding). An input with dtype
/// Undefined stands for an absent optional input. Throws Error
/// "op 'X': message" on bad input and "no kernel for op 'X'" for unknown ops.
std::vector<Tensor> run_op(KernelSet set, std::string_view op, const std::vector<Tensor>& inputs,
                           const Attributes& attrs = {}, std::size_t num_outputs = 1);

}  // namespace graphfuse::kernels
