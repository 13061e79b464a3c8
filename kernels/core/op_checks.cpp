// Preflight checks: what every kernel call must satisfy, and each op's contract, in one
// table for both kernel sets. Kernels compute with shapes and attributes from files anyone
// can write; a rank-0 input to an op that indexes an axis, or a stride of 0 in SAME
// padding, used to be a SIGSEGV or SIGFPE inside the kernel. Checked here, they are an
// Error the executor turns into "file:line:col: error: node 'x' (Op): ...".
// Messages are built only when a check fails (`if (!ok) fail(...)`, not `check(ok, msg)`):
// these run before every kernel call.
#include "core/op_checks.h"

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "core/util.h"

namespace graphfuse::kernels {

namespace {

// The conv and pool family: window geometry that the pad/size arithmetic divides by.
// Function-local, as the table: a registry built during static initialization must not
// see it unconstructed.
const OpContract& windowed() {
  static const OpContract c{0, {"strides", "dilations", "kernel_shape", "group"}, {"pads", "explicit_paddings"}};
  return c;
}

// Normalizations divide by the normalized length: it must not be 0.
void skip_layer_norm(const KernelCall& c) {
  const Tensor& x = c.required(0);
  if (x.shape.size() < 2) fail("SkipLayerNormalization input must have rank >= 2, has " + shape_str(x.shape));
  if (x.shape.back() <= 0)
    fail("SkipLayerNormalization hidden size (the input's last dim) is 0 in " + shape_str(x.shape) +
         "; it must be at least 1");
}

void skip_simplified_layer_norm(const KernelCall& c) {
  const Tensor& x = c.required(0);
  if (x.shape.size() < 2)
    fail("SkipSimplifiedLayerNormalization input must have rank >= 2, has " + shape_str(x.shape));
  if (x.shape.back() <= 0)
    fail("SkipSimplifiedLayerNormalization hidden size (the input's last dim) is 0 in " + shape_str(x.shape) +
         "; it must be at least 1");
}

void layer_norm(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", -1), rank);
  for (std::int64_t d = axis; d < rank; ++d)
    if (x.shape[d] <= 0)
      fail("LayerNormalization normalized size (dims " + std::to_string(axis) + " to the last of " +
           shape_str(x.shape) + ") is 0; it must be at least 1");
}

// Global pooling reduces the whole H x W plane to one value: there is none for an empty
// plane (the sets disagreed: -inf, 0, or a oneDNN error).
void global_pool(const KernelCall& c) {
  const Tensor& x = c.required(0);
  if (x.shape.size() == 4 && (x.shape[2] <= 0 || x.shape[3] <= 0))
    fail("global pooling of an empty plane: input " + shape_str(x.shape) + " has H or W = 0");
}

// ConcatV2(values..., axis): every value is concatenated along an axis.
void concat_v2(const KernelCall& c) {
  for (std::size_t i = 0; i + 1 < c.inputs.size(); ++i)
    if (const Tensor* t = c.inputs[i])
      if (t->shape.empty()) fail("input " + std::to_string(i) + " is rank 0 (a scalar); ConcatV2 needs rank >= 1");
}

const std::unordered_map<std::string_view, OpContract>& table() {
  static const std::unordered_map<std::string_view, OpContract> t = {
      // Ops that index an axis of their data input(s).
      {"Concat", {-1, {}, {}}},
      {"ConcatV2", {0, {}, {}, concat_v2}},
      {"Split", {1, {}, {}}},
      {"SplitV", {1, {}, {}}},
      {"Gather", {1, {}, {}}},
      {"Softmax", {1, {}, {}}},
      {"BatchNormalization", {1, {}, {}}},
      {"BiasAdd", {1, {}, {}}},
      {"LayerNormalization", {1, {}, {}, layer_norm}},
      {"com.microsoft.SkipLayerNormalization", {0, {}, {}, skip_layer_norm}},
      {"SimplifiedLayerNormalization", {1, {}, {}, layer_norm}},
      {"com.microsoft.SkipSimplifiedLayerNormalization", {0, {}, {}, skip_simplified_layer_norm}},
      // Attention: a head count of 0 divides the hidden size by zero.
      {"com.microsoft.Attention", {2, {"num_heads"}, {}}},
      {"com.microsoft.MultiHeadAttention", {3, {"num_heads"}, {}}},
      {"com.microsoft.GroupQueryAttention", {1, {"num_heads", "kv_num_heads"}, {}}},
      {"com.microsoft.RotaryEmbedding", {1, {}, {"num_heads", "rotary_embedding_dim"}}},
      // Windowed ops.
      {"Conv", windowed()},
      {"com.microsoft.FusedConv", windowed()},
      {"Conv2D", windowed()},
      {"_FusedConv2D", windowed()},
      {"MaxPool", windowed()},
      {"AveragePool", windowed()},
      {"GlobalAveragePool", {0, {}, {}, global_pool}},
      {"GlobalMaxPool", {0, {}, {}, global_pool}},
  };
  return t;
}

std::string input_what(std::size_t i) { return "input " + std::to_string(i); }

void check_ints(const Attributes& a, std::string_view name, bool strictly_positive) {
  const AttrValue* v = a.find(name);
  if (!v) return;
  std::vector<std::int64_t> vals;
  if (auto p = std::get_if<std::int64_t>(v)) vals = {*p};
  else if (auto q = std::get_if<std::vector<std::int64_t>>(v)) vals = *q;
  else return;  // wrongly typed: the op's own attribute reader names the type
  // The upper bound keeps the window arithmetic (input + pads - dilated kernel, index =
  // out * stride - pad + k * dilation) far from int64 overflow, and oneDNN's dims in range.
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  for (auto x : vals)
    if ((strictly_positive ? x <= 0 : x < 0) || x > kMax)
      fail("attribute '" + std::string(name) + "' = " + shape_str(vals) + " must be " +
           (strictly_positive ? "positive" : "non-negative") + " and at most " + std::to_string(kMax) +
           " in every entry");
}

}  // namespace

const OpContract* contract_for(std::string_view op) {
  const auto& t = table();
  if (auto it = t.find(op); it != t.end()) return &it->second;
  // FusedConv2D, FusedConv2D_BiasAdd and every FusedConv2D_BiasAdd_<Act>.
  if (op.starts_with("FusedConv2D")) return &windowed();
  return nullptr;
}

void preflight(const KernelCall& c, const OpContract* contract) {
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Tensor* t = c.inputs[i];
    if (!t) continue;
    // Shapes from files are unchecked: a negative or overflowing shape must not reach
    // the size arithmetic, and data shorter than its shape must not be read past.
    const std::int64_t n = checked_numel(t->shape, input_what(i));
    if (t->has_data()) {
      const std::size_t es = dtype_size(t->dtype);
      if (es > 0 && t->data->size() / es < static_cast<std::uint64_t>(n))
        fail(input_what(i) + " of shape " + shape_str(t->shape) + " holds " + std::to_string(t->data->size()) +
             " bytes, fewer than its shape needs");
    }
  }
  if (!contract) return;
  const std::size_t ranked = contract->min_rank_inputs < 0 ? c.inputs.size()
                                                           : static_cast<std::size_t>(contract->min_rank_inputs);
  for (std::size_t i = 0; i < ranked && i < c.inputs.size(); ++i)
    if (const Tensor* t = c.inputs[i])
      if (t->shape.empty())
        fail(input_what(i) + " is rank 0 (a scalar); " + std::string(c.op) + " needs rank >= 1 (it indexes an axis)");
  for (std::string_view a : contract->positive) check_ints(c.attrs, a, true);
  for (std::string_view a : contract->non_negative) check_ints(c.attrs, a, false);
  if (contract->extra) contract->extra(c);
}

}  // namespace graphfuse::kernels
