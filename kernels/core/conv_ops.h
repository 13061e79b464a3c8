// Node-level convolution kernels shared by both kernel sets (attribute parsing, shapes).
#pragma once

#include "core/util.h"
#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels {

/// A raw convolution implementation: reference::conv2d or fast::conv2d. w_owner owns the
/// weight bytes when they are constant (null otherwise), so derived data may be cached.
using ConvImpl = void (*)(const ConvParams&, const float* x, const float* w, const float* b,
                          const float* z, float* y, std::shared_ptr<const void> w_owner);
/// How a kernel set allocates a float32 output: alloc_f32 (zero-filled) for the reference
/// set, fast::alloc_output_f32 (recycled, not filled: its kernels write every element).
using OutputAlloc = Tensor (*)(Shape shape);
/// A raw bias-add / activation implementation (reference or fast).
using BiasAddImpl = void (*)(const float* x, const float* b, float* y, std::int64_t outer,
                             std::int64_t c, std::int64_t inner);
using ActivationImpl = void (*)(const ActivationSpec& act, const float* x, float* y,
                                std::int64_t n);

/// Registers Conv and com.microsoft.FusedConv computing through `impl` into outputs from
/// `alloc` (TF's Conv2D family is register_tf_conv's, reference/tf_ops.h). With
/// channels_last, they declare LayoutSupport::ChannelsLast (impl must honour ConvParams'
/// layout flags).
void register_conv_ops(KernelRegistry& r, ConvImpl impl, OutputAlloc alloc, bool channels_last);
/// The activation an attribute-only single-activation op computes: Relu / ReLU, Relu6 /
/// ReLU6, Sigmoid, Tanh, HardSwish, LeakyRelu and HardSigmoid, with ONNX's defaults for absent
/// attributes; kind None for any other op (Clip reads its bounds from inputs). What the
/// registered activation kernels and the executor's epilogue fusion both compute.
ActivationSpec unary_activation(std::string_view op, const Attributes& attrs);

/// Registers BiasAdd and the single-activation ops (Relu, ReLU, Sigmoid, Tanh, LeakyRelu,
/// HardSigmoid, HardSwish, Clip, Relu6) through the given implementations.
/// With elementwise_layouts the activation ops declare LayoutSupport::Elementwise.
void register_epilogue_ops(KernelRegistry& r, BiasAddImpl bias, ActivationImpl act,
                           bool elementwise_layouts);

}  // namespace graphfuse::kernels
