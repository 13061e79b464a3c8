// Helpers shared by the kernel implementations: buffers, attributes, shapes, errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/attribute.h"
#include "graphfuse/error.h"
#include "graphfuse/kernels/kernel.h"

namespace graphfuse::kernels {

using Shape = std::vector<std::int64_t>;

/// Product of dims (1 for a scalar).
std::int64_t numel(const Shape& s);
/// Product of dims, checked: throws Error naming `what` and the shape when a dim is
/// negative or the product overflows int64 (a hostile file can claim any shape).
std::int64_t checked_numel(const Shape& s, std::string_view what = "tensor");
/// The largest tensor, in bytes, the kernels allocate: GRAPHFUSE_MAX_TENSOR_BYTES when set
/// (fuzzers and sanitizer runs lower it), else the machine's physical memory. A shape
/// beyond it is an Error before any allocation, instead of std::bad_alloc or the OOM killer.
std::size_t max_tensor_bytes();
/// Throws Error unless a tensor of `dtype` / `shape` is within max_tensor_bytes().
void check_tensor_size(DType dtype, const Shape& shape, std::string_view what = "tensor");
/// "[1, 3, 224, 224]".
std::string shape_str(const Shape& s);

/// An inference BatchNormalization as y = x * mul + add per channel, from its scale, bias,
/// mean and variance (each `channels` long): the one formula the fast norm kernel and the
/// executor's fused Concat -> norm epilogue share, so fusing changes no bit.
void batch_norm_factors(const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
                        std::int64_t channels, float* mul, float* add);
/// Throws Error unless an epilogue's per-channel affine (if any) has `channels` entries: a
/// fused BatchNormalization whose parameters do not fit the tensor it normalizes.
void check_epilogue_channels(const Epilogue& e, std::int64_t channels);

/// A fresh tensor of `dtype`/`shape` with a zero-filled buffer the caller may write
/// through mut<T>() (the buffer is created mutable, so writing through it is defined).
Tensor alloc(DType dtype, Shape shape);
inline Tensor alloc_f32(Shape shape) { return alloc(DType::Float32, std::move(shape)); }
/// Like alloc, but a recycled buffer keeps whatever it held: only for kernels that write
/// every output element. Debug builds (no NDEBUG) fill it with 0xFF bytes (NaN as float32).
Tensor alloc_unfilled(DType dtype, Shape shape);
template <class T>
T* mut(Tensor& t) {
  return reinterpret_cast<T*>(const_cast<char*>(t.data->data()));
}
/// A tensor viewing `t`'s bytes under another shape (Reshape, Flatten, Squeeze: no copy).
Tensor reshaped(const Tensor& t, Shape shape);

/// Checked typed access: throws Error naming `what` when the dtype differs or data is missing.
const float* f32(const Tensor& t, std::string_view what);
/// The elements of an int64 or int32 tensor as int64 (shape inputs, axes, indices).
std::vector<std::int64_t> int_values(const Tensor& t, std::string_view what);
/// Scalar float from a float32/int64 tensor of one element.
float scalar_f32(const Tensor& t, std::string_view what);

/// Throws Error(message).
[[noreturn]] void fail(const std::string& message);
/// Throws Error(message) unless cond.
inline void check(bool cond, const std::string& message) {
  if (!cond) fail(message);
}

// Attribute getters: accept the nearest types (YAML may give 1 for 1.0, bools for ints).
std::int64_t attr_int(const Attributes& a, std::string_view name, std::int64_t def);
float attr_float(const Attributes& a, std::string_view name, float def);
std::string attr_string(const Attributes& a, std::string_view name, std::string_view def);
/// Empty when absent.
std::vector<std::int64_t> attr_ints(const Attributes& a, std::string_view name);
std::vector<float> attr_floats(const Attributes& a, std::string_view name);
bool has_attr(const Attributes& a, std::string_view name);

/// axis in [-rank, rank) -> [0, rank); throws Error otherwise, and always for rank 0: a
/// scalar has no axis (allowing 0 there let Split/Concat/Slice/Gather read shape[0] of an
/// empty shape). Ops that accept scalars handle rank 0 before asking for an axis.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank);
/// Numpy-style broadcast of two shapes; throws Error naming both.
Shape broadcast_shapes(const Shape& a, const Shape& b);
/// Row-major strides of `shape`, aligned right to a broadcast target of rank `rank`,
/// with 0 for broadcast (size-1 or missing) dims.
std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& target);

/// Registration entry points, one per kernel family (called by registry()).
void register_reference_conv(KernelRegistry& r);
void register_reference_elementwise(KernelRegistry& r);
void register_reference_matmul(KernelRegistry& r);
void register_reference_norm(KernelRegistry& r);
void register_reference_transformer_norm(KernelRegistry& r);
void register_reference_pool(KernelRegistry& r);
void register_reference_shape(KernelRegistry& r);
void register_reference_cast(KernelRegistry& r);  // reference/cast.cpp, called by register_reference_shape
void register_reference_index(KernelRegistry& r);  // reference/index_ops.cpp, likewise
void register_reference_reduce(KernelRegistry& r);
void register_reference_pad_resize(KernelRegistry& r);
void register_reference_tf_norm(KernelRegistry& r);
void register_reference_quant(KernelRegistry& r);
void register_reference_generate(KernelRegistry& r);  // reference/generate_ops.cpp
void register_reference_attention(KernelRegistry& r);
void register_reference_quant_ms(KernelRegistry& r);
void register_fast_conv(KernelRegistry& r);
void register_fast_matmul(KernelRegistry& r);
void register_fast_pool(KernelRegistry& r);
void register_fast_elementwise(KernelRegistry& r);
void register_fast_norm(KernelRegistry& r);
void register_fast_attention(KernelRegistry& r);
void register_fast_layout_ops(KernelRegistry& r);  // fast/layout_ops.cpp: Concat, Pad in NHWC
void register_fast_quant(KernelRegistry& r);       // fast/qlinear_conv.cpp: QLinearConv
void register_fast_qlinear_binary(KernelRegistry& r);  // fast/qlinear_binary.cpp: QLinearAdd, QLinearMul
void register_fast_qlinear_lookup(KernelRegistry& r);  // fast/qlinear_lookup.cpp: QLinearSigmoid, QLinearLeakyRelu
void register_fast_qlinear_matmul(KernelRegistry& r);  // fast/qlinear_matmul.cpp: QLinearMatMul
void register_fast_quantize_linear(KernelRegistry& r);  // fast/quantize_linear.cpp: QuantizeLinear, DequantizeLinear
void register_fast_qlinear_pool(KernelRegistry& r);  // fast/qlinear_pool.cpp: QLinearGlobalAveragePool
void register_fast_qgemm(KernelRegistry& r);  // fast/qgemm.cpp: QGemm
void register_fast_qlinear_concat(KernelRegistry& r);  // fast/qlinear_concat.cpp: QLinearConcat

}  // namespace graphfuse::kernels
