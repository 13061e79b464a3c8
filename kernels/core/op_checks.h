// The checks every kernel call passes before its kernel runs (KernelRegistry::add wraps
// each kernel in them), so a kernel may rely on them instead of re-checking.
#pragma once

#include <string_view>
#include <vector>

#include "graphfuse/kernels/kernel.h"

namespace graphfuse::kernels {

/// What an op requires of its inputs and attributes beyond what every op requires. One
/// table (op_checks.cpp) holds them for both kernel sets, keyed by op name.
struct OpContract {
  /// Input slots [0, min_rank_inputs) (all inputs when -1) must have rank >= 1: the op
  /// indexes an axis of them (Concat, Split, Gather, ...), which a scalar does not have.
  int min_rank_inputs = 0;
  /// Integer attributes (or lists) whose every entry must be > 0: strides, dilations,
  /// kernel_shape, group. A 0 there is a division by zero in the pad and size arithmetic.
  std::vector<std::string_view> positive;
  /// Integer attributes (or lists) whose every entry must be >= 0: pads.
  std::vector<std::string_view> non_negative;
  /// Op-specific shape relations the table cannot say; throws Error.
  void (*extra)(const KernelCall&) = nullptr;
};

/// The contract of `op`, or null when it has none beyond the common checks.
const OpContract* contract_for(std::string_view op);

/// Throws Error (a plain message; the executor adds the node and position) when the call
/// violates what every op requires (each present input: no negative dim, an element count
/// that fits int64 and within max_tensor_bytes(), data holding at least that many
/// elements) or `contract` (may be null).
void preflight(const KernelCall& c, const OpContract* contract);

}  // namespace graphfuse::kernels
