// Convolution and its epilogue (bias, residual sum, activation) on raw float buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "graphfuse/attribute.h"

namespace graphfuse::kernels {

/// The activations a fused kernel can apply to its output (ONNX Runtime's FusedConv set,
/// plus the TF-style names through parse_activation).
enum class Activation { None, Relu, Clip, Sigmoid, Tanh, LeakyRelu, HardSigmoid, HardSwish };

/// An activation with its parameters: LeakyRelu alpha; Clip min=alpha max=beta;
/// HardSigmoid y = max(0, min(1, alpha*x + beta)).
struct ActivationSpec {
  Activation kind = Activation::None;
  float alpha = 0.0f;
  float beta = 0.0f;
  /// The scalar definition every kernel must agree with.
  float apply(float x) const;
};

/// Parses an activation name ("Relu"/"ReLU", "Relu6", "Clip", "Sigmoid", "Tanh",
/// "LeakyRelu", "HardSigmoid", "HardSwish", "" or "None") with ONNX Runtime's
/// activation_params order; missing params take the ONNX defaults. Throws Error.
ActivationSpec parse_activation(std::string_view name, const std::vector<float>& params = {});

/// Memory layouts: ONNX (activations NCHW, weights OIHW = [Cout, Cin/group, KH, KW]) or
/// TF (activations NHWC, weights HWIO = [KH, KW, Cin/group, Cout]).
enum class ConvLayout { NchwOihw, NhwcHwio };

/// A fully resolved 2-D convolution: y = act(conv(x, w) + b + z).
struct ConvParams {
  ConvLayout layout = ConvLayout::NchwOihw;
  std::int64_t n = 1, c_in = 0, h = 0, w = 0;  ///< input
  std::int64_t c_out = 0, kh = 1, kw = 1;      ///< filter
  std::int64_t group = 1;
  std::int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  std::int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  std::int64_t out_h = 0, out_w = 0;  ///< set by finalize()
  bool has_bias = false;              ///< b: [Cout]
  bool has_sum = false;               ///< z: same shape as y, added before the activation
  ActivationSpec act;
  /// NCHW layout only (fast kernels only): x, and y/z, are physically NHWC.
  bool src_channels_last = false, dst_channels_last = false;

  /// Computes out_h/out_w and checks consistency; throws Error on bad geometry.
  void finalize();
  std::vector<std::int64_t> input_shape() const;
  std::vector<std::int64_t> weight_shape() const;
  std::vector<std::int64_t> output_shape() const;
  /// Multiply-adds counted twice (the usual convention for GFLOP/s).
  double flops() const;
};

/// Explicit pads (begin, end) for auto_pad SAME_UPPER (TF "SAME") or SAME_LOWER.
std::pair<std::int64_t, std::int64_t> same_pads(std::int64_t in, std::int64_t k, std::int64_t stride,
                                                std::int64_t dilation, bool upper);

/// ConvParams of an ONNX Conv / FusedConv node (auto_pad, pads, strides, dilations, group,
/// kernel_shape checked against the weights). Activation and bias flags are left unset.
ConvParams conv_params_onnx(const Attributes& attrs, const std::vector<std::int64_t>& x_shape,
                            const std::vector<std::int64_t>& w_shape);
/// ConvParams of a TF-style Conv2D (NHWC input, HWIO filter; strides/dilations as [h, w] or
/// NHWC 4-vectors; padding "SAME"/"VALID"; optional "group" extension for depthwise).
ConvParams conv_params_tf(const Attributes& attrs, const std::vector<std::int64_t>& x_shape,
                          const std::vector<std::int64_t>& w_shape);

namespace reference {
/// Direct convolution, one output element at a time. b and z may be null when the
/// params say they are absent.
void conv2d(const ConvParams& p, const float* x, const float* w, const float* b, const float* z,
            float* y);
/// y = x + b along the channel axis: channel-last (x is [rows, c]) or channel-first
/// (x is [outer, c, inner]).
void bias_add(const float* x, const float* b, float* y, std::int64_t outer, std::int64_t c,
              std::int64_t inner);
/// y[i] = act(x[i]).
void activation(const ActivationSpec& act, const float* x, float* y, std::int64_t n);
}  // namespace reference

namespace fast {
/// One oneDNN convolution primitive with bias and post-ops (sum for z, eltwise for the
/// activation) fused: the epilogue runs on the output while it is in cache. Primitives
/// are cached per shape. When `weights_owner` is given (the object owning w's bytes, for
/// constant weights), the weights reordered into oneDNN's blocked layout are cached too,
/// valid for as long as that owner lives at the same address.
void conv2d(const ConvParams& p, const float* x, const float* w, const float* b, const float* z,
            float* y, std::shared_ptr<const void> weights_owner = nullptr);
/// Parallel versions of the reference epilogue pieces.
void bias_add(const float* x, const float* b, float* y, std::int64_t outer, std::int64_t c,
              std::int64_t inner);
void activation(const ActivationSpec& act, const float* x, float* y, std::int64_t n);
}  // namespace fast

}  // namespace graphfuse::kernels
