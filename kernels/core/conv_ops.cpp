// Node-level convolution and epilogue kernels: attributes -> ConvParams -> an implementation.
#include "core/conv_ops.h"

namespace graphfuse::kernels {

namespace {

Tensor run_conv(ConvImpl impl, OutputAlloc alloc, const ConvParams& p, const KernelCall& c,
                const Tensor& x, const Tensor& w, const Tensor* b, const Tensor* z) {
  // Messages are built only on failure: formatting shapes for every call showed in profiles.
  if (b && b->shape != Shape{p.c_out})
    fail("bias must have shape [" + std::to_string(p.c_out) + "], has " + shape_str(b->shape));
  Tensor y = alloc(p.output_shape());
  if (z && z->shape != y.shape)
    fail("sum input Z must have the output shape " + shape_str(y.shape) + ", has " + shape_str(z->shape));
  impl(p, f32(x, "input X"), f32(w, "weights W"), b ? f32(*b, "bias B") : nullptr,
       z ? f32(*z, "sum input Z") : nullptr, mut<float>(y),
       c.is_const(1) ? std::shared_ptr<const void>(w.data) : nullptr);
  return y;
}

// ONNX Conv and com.microsoft.FusedConv: X, W, B?, Z?.
std::vector<Tensor> onnx_conv(ConvImpl impl, OutputAlloc alloc, const KernelCall& c, bool fused) {
  const Tensor& x = c.required(0);
  const Tensor& w = c.required(1);
  ConvParams p = conv_params_onnx(c.attrs, x.shape, w.shape);
  const Tensor* b = c.input(2);
  const Tensor* z = fused ? c.input(3) : nullptr;
  p.has_bias = b != nullptr;
  p.has_sum = z != nullptr;
  // The executor only sends ChannelsLast inputs to kernels registered for them.
  p.src_channels_last = c.layout(0) == Layout::ChannelsLast;
  p.dst_channels_last = c.prefer_channels_last;
  c.out_layout = p.dst_channels_last ? Layout::ChannelsLast : Layout::Plain;
  if (z) check(c.layout(3) == c.out_layout, "sum input Z must be in the output's layout");
  if (fused)
    p.act = parse_activation(attr_string(c.attrs, "activation", ""),
                             attr_floats(c.attrs, "activation_params"));
  if (c.epilogue) {
    // The plan fuses an activation (no affine: EpilogueSupport::PiecewiseLinear) only into a
    // convolution without one of its own.
    check(p.act.kind == Activation::None && c.epilogue->mul.empty(), "a fused activation and an epilogue together");
    p.act = c.epilogue->act;
  }
  return {run_conv(impl, alloc, p, c, x, w, b, z)};
}

}  // namespace

void register_conv_ops(KernelRegistry& r, ConvImpl impl, OutputAlloc alloc, bool channels_last) {
  const LayoutSupport ls = channels_last ? LayoutSupport::ChannelsLast : LayoutSupport::PlainOnly;
  r.add("Conv", [impl, alloc](const KernelCall& c) { return onnx_conv(impl, alloc, c, false); }, ls);
  r.add("com.microsoft.FusedConv", [impl, alloc](const KernelCall& c) { return onnx_conv(impl, alloc, c, true); },
        ls);
  // TF's Conv2D and its fused forms are registered by reference/tf_conv.cpp, which each
  // kernel set calls last so that it chooses how outputs are allocated.
}

namespace {

std::vector<Tensor> bias_add_op(BiasAddImpl impl, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const Tensor& b = c.required(1);
  const std::string fmt = attr_string(c.attrs, "data_format", "NHWC");
  check(!x.shape.empty(), "BiasAdd input must have rank >= 1");
  // Channels are last (NHWC, the TF default) or dim 1 (NCHW).
  const std::size_t axis = fmt == "NCHW" ? 1 : x.shape.size() - 1;
  check(fmt == "NHWC" || fmt == "NCHW", "unknown data_format '" + fmt + "'");
  check(axis < x.shape.size(), "BiasAdd NCHW input must have rank >= 2");
  const std::int64_t ch = x.shape[axis];
  check(b.shape == Shape{ch}, "bias must have shape [" + std::to_string(ch) + "], has " +
                                  shape_str(b.shape));
  std::int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < axis; ++i) outer *= x.shape[i];
  for (std::size_t i = axis + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  Tensor y = alloc_f32(x.shape);
  impl(f32(x, "input"), f32(b, "bias"), mut<float>(y), outer, ch, inner);
  return {y};
}

std::vector<Tensor> activation_op(ActivationImpl impl, const ActivationSpec& a, const KernelCall& c) {
  const Tensor& x = c.required(0);
  c.out_layout = c.layout(0);  // elementwise: the bytes keep their order
  Tensor y = alloc_f32(x.shape);
  impl(a, f32(x, "input"), mut<float>(y), x.num_elements());
  return {y};
}

// ONNX Clip: min/max as optional inputs (opset >= 11) or attributes (opset 6).
ActivationSpec clip_spec(const KernelCall& c) {
  ActivationSpec a = parse_activation("Clip");
  a.alpha = attr_float(c.attrs, "min", a.alpha);
  a.beta = attr_float(c.attrs, "max", a.beta);
  if (const Tensor* lo = c.input(1)) a.alpha = scalar_f32(*lo, "min");
  if (const Tensor* hi = c.input(2)) a.beta = scalar_f32(*hi, "max");
  return a;
}

}  // namespace

ActivationSpec unary_activation(std::string_view op, const Attributes& attrs) {
  if (op == "Relu" || op == "ReLU") return {Activation::Relu};
  if (op == "Relu6" || op == "ReLU6") return {Activation::Clip, 0.0f, 6.0f};
  if (op == "Sigmoid") return {Activation::Sigmoid};
  if (op == "Tanh") return {Activation::Tanh};
  if (op == "HardSwish") return {Activation::HardSwish};
  // ONNX's default alpha (0.01); TF graphs that rely on TF's 0.2 must say so.
  if (op == "LeakyRelu") return {Activation::LeakyRelu, attr_float(attrs, "alpha", 0.01f)};
  if (op == "HardSigmoid")
    return {Activation::HardSigmoid, attr_float(attrs, "alpha", 0.2f), attr_float(attrs, "beta", 0.5f)};
  return {};
}

void register_epilogue_ops(KernelRegistry& r, BiasAddImpl bias, ActivationImpl act,
                           bool elementwise_layouts) {
  const LayoutSupport ls = elementwise_layouts ? LayoutSupport::Elementwise : LayoutSupport::PlainOnly;
  r.add("BiasAdd", [bias](const KernelCall& c) { return bias_add_op(bias, c); });
  for (const char* op : {"Relu", "ReLU", "Relu6", "ReLU6", "Sigmoid", "Tanh", "HardSwish", "LeakyRelu", "HardSigmoid"})
    r.add(op, [act, op](const KernelCall& c) { return activation_op(act, unary_activation(op, c.attrs), c); }, ls);
  r.add("Clip", [act](const KernelCall& c) { return activation_op(act, clip_spec(c), c); }, ls);
}

}  // namespace graphfuse::kernels
