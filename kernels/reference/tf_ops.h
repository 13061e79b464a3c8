// TensorFlow ops the rules/tf library matches and produces, registered into either kernel set.
#pragma once

#include "core/conv_ops.h"
#include "core/util.h"

namespace graphfuse::kernels {

/// What a TF fused op (_FusedConv2D, _FusedMatMul) applies after its product, read from
/// `fused_ops`: BiasAdd, then optionally Add (a residual input of the output's shape),
/// then optionally one activation.
struct TfEpilogue {
  bool add = false;           ///< "Add": one more input, added after the bias
  bool elu = false;           ///< Elu is not an ActivationSpec kind: applied separately
  bool prelu = false;         ///< "Prelu" (TF.js): one more input, alpha, applied separately
  ActivationSpec act;         ///< Relu, Relu6 (Clip 0..6), Tanh, Sigmoid, LeakyRelu
};

/// Parses `fused_ops` (and `leakyrelu_alpha`, TF's default 0.2; `num_args`, which must
/// count the bias and the residual) of a TF fused op with `inputs` inputs. Throws Error
/// naming what is unsupported.
TfEpilogue parse_tf_epilogue(const KernelCall& c, std::size_t product_inputs);

/// TF.js's Prelu: x where x >= 0, alpha * x elsewhere; alpha broadcasts into x's shape.
Tensor prelu(const Tensor& x, const Tensor& alpha);

/// TF's Elu: x for x > 0, exp(x) - 1 otherwise (ONNX's alpha scales the negative side).
float elu(float x, float alpha = 1.0f);

/// AddV2, Elu, Prelu: elementwise math under TF names.
void register_tf_math(KernelRegistry& r);
/// Transpose with its perm as input 1 (TF), ConcatV2 (axis last), SplitV (sizes, axis).
/// Wraps the set's Transpose, so call after the shape ops are registered.
void register_tf_shape(KernelRegistry& r);
/// MatMul's transpose_a / transpose_b (TF attributes) and _FusedMatMul, through the set's
/// own MatMul kernel: call after the set's matmul kernels are registered.
void register_tf_matmul(KernelRegistry& r);
/// Conv2D, the FusedConv2D_BiasAdd[_Act] family and _FusedConv2D with TF's full fused_ops
/// (BiasAdd [, Add] [, activation incl. Elu]) through `conv` (reference or fast conv2d),
/// the only registration of these names. Outputs come from
/// `alloc`; every path writes each output element (the convolution, then the Elu pass).
void register_tf_conv(KernelRegistry& r, ConvImpl conv, OutputAlloc alloc);

}  // namespace graphfuse::kernels
