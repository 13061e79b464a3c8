// The two frozen kernel sets, reference and fast, assembled from every folder's
// registrations: the one place that knows both sets, so kernels/core (the registry the
// kernels register into) imports neither.
#include "core/util.h"
#include "fast/buffers.h"
#include "reference/tf_ops.h"

namespace graphfuse::kernels {

namespace {
// The reference kernels of every op, without the TF ones (see build_reference).
KernelRegistry build_reference_base() {
  KernelRegistry r;
  register_reference_conv(r);
  register_reference_elementwise(r);
  register_reference_matmul(r);
  register_reference_norm(r);
  register_reference_transformer_norm(r);
  register_reference_pool(r);
  register_reference_shape(r);
  register_reference_reduce(r);
  register_reference_pad_resize(r);
  register_reference_tf_norm(r);
  register_reference_quant(r);
  register_reference_generate(r);
  register_reference_attention(r);
  register_reference_quant_ms(r);
  return r;
}

// The TF ops reuse or wrap what a set registered under ONNX names (Add, Transpose, Concat,
// Split, MatMul, FusedMatMul) and replace the conv family's narrower _FusedConv2D, so they
// are registered last, once per set, over that set's kernels. `alloc` makes the conv
// outputs: the fast set's convolutions write every element, so they skip the zero fill.
void register_tf(KernelRegistry& r, ConvImpl conv, OutputAlloc alloc) {
  register_tf_math(r);
  register_tf_shape(r);
  register_tf_matmul(r);
  register_tf_conv(r, conv, alloc);
}

void reference_conv(const ConvParams& p, const float* x, const float* w, const float* b,
                    const float* z, float* y, std::shared_ptr<const void>) {
  reference::conv2d(p, x, w, b, z, y);
}

KernelRegistry build_reference() {
  KernelRegistry r = build_reference_base();
  register_tf(r, reference_conv, alloc_f32);
  return r;
}

// What the fast set replaces in the reference base (some fast kernels wrap the reference
// kernel they look up for the cases they leave to it).
void register_fast_kernels(KernelRegistry& r) {
  register_fast_conv(r);
  register_fast_matmul(r);
  register_fast_pool(r);
  register_fast_elementwise(r);
  register_fast_norm(r);
  register_fast_attention(r);
  register_fast_layout_ops(r);
  register_fast_quant(r);
  register_fast_qlinear_binary(r);
  register_fast_qlinear_lookup(r);
  register_fast_qlinear_matmul(r);
  register_fast_quantize_linear(r);
  register_fast_qlinear_pool(r);
  register_fast_qgemm(r);
  register_fast_qlinear_concat(r);
}

KernelRegistry build_fast() {
  // Start from the reference set so every op runs; fast kernels replace what they cover.
  KernelRegistry r = build_reference_base();
  register_fast_kernels(r);
  register_tf(r, fast::conv2d, fast::alloc_output_f32);
  return r;
}
}  // namespace

std::vector<std::string> fast_kernel_ops() {
  // The fast registrations over the reference base (some wrap a reference kernel they
  // look up), then what they replaced.
  KernelRegistry r = build_reference_base();
  const std::size_t base = r.calls();
  register_fast_kernels(r);
  return r.ops_added_after(base);
}

const KernelRegistry& registry(KernelSet set) {
  // Function-local statics: built once, thread-safe, read-only afterwards.
  static const KernelRegistry reference = build_reference();
  static const KernelRegistry fast = build_fast();
  return set == KernelSet::Fast ? fast : reference;
}

}  // namespace graphfuse::kernels
