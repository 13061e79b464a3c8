// TF-style convolutions: Conv2D, graphfuse's FusedConv2D_BiasAdd[_Act] family (what
// rules/tf produces) and TF's _FusedConv2D with the fused_ops the grappler remapper emits
// (BiasAdd, then optionally Add (a residual input), then optionally Relu, Relu6, Elu,
// LeakyRelu, Tanh or Sigmoid). Bias, residual and activation go into the convolution's own
// epilogue (ConvParams); Elu, which the epilogue lacks, is one pass afterwards.
// Registered once per set (core/registry.cpp), so that each set chooses how outputs are
// allocated (the fast set: its recycled, unfilled pool).
#include <array>

#include "reference/tf_ops.h"

namespace graphfuse::kernels {

namespace {

// The activation of a FusedConv2D_BiasAdd* node: its "activation" attribute, else the
// op-name suffix after "BiasAdd_", else the second entry of a narrow "fused_ops".
ActivationSpec family_activation(const KernelCall& c) {
  const float alpha = attr_float(c.attrs, "leakyrelu_alpha", 0.2f);
  auto with_alpha = [&](ActivationSpec a) {
    if (a.kind == Activation::LeakyRelu) a.alpha = alpha;
    return a;
  };
  if (has_attr(c.attrs, "activation"))
    return with_alpha(parse_activation(attr_string(c.attrs, "activation", ""),
                                       attr_floats(c.attrs, "activation_params")));
  if (auto fused_ops = c.attrs.get_if<std::vector<std::string>>("fused_ops")) {
    check(!fused_ops->empty() && (*fused_ops)[0] == "BiasAdd",
          "FusedConv2D supports fused_ops [BiasAdd] or [BiasAdd, activation]");
    check(fused_ops->size() <= 2, "FusedConv2D supports at most one activation");
    return with_alpha(fused_ops->size() == 2 ? parse_activation((*fused_ops)[1]) : ActivationSpec{});
  }
  const std::string_view op = c.op;
  const auto pos = op.find("BiasAdd_");
  return with_alpha(pos == std::string_view::npos ? ActivationSpec{} : parse_activation(op.substr(pos + 8)));
}

// Checks the bias and residual, allocates y and runs the convolution (plus Elu).
Tensor run_tf_conv(ConvImpl conv, OutputAlloc alloc, const KernelCall& c, ConvParams p,
                   const Tensor& x, const Tensor& w, const Tensor* b, const Tensor* z, bool elu_after) {
  if (b && b->shape != Shape{p.c_out})
    fail("bias must have shape [" + std::to_string(p.c_out) + "], has " + shape_str(b->shape));
  p.has_bias = b != nullptr;
  p.has_sum = z != nullptr;
  Tensor y = alloc(p.output_shape());
  // TF requires the residual to have the output's shape (no broadcasting).
  if (z && z->shape != y.shape)
    fail("the Add operand must have the output shape " + shape_str(y.shape) + ", has " + shape_str(z->shape));
  conv(p, f32(x, "input"), f32(w, "filter"), b ? f32(*b, "bias") : nullptr, z ? f32(*z, "Add operand") : nullptr,
       mut<float>(y), c.is_const(1) ? std::shared_ptr<const void>(w.data) : nullptr);
  if (elu_after) {
    float* yp = mut<float>(y);
    for (std::int64_t i = 0; i < y.num_elements(); ++i) yp[i] = elu(yp[i]);
  }
  return y;
}

}  // namespace

void register_tf_conv(KernelRegistry& r, ConvImpl conv, OutputAlloc alloc) {
  r.add("Conv2D", [conv, alloc](const KernelCall& c) {
    const Tensor& x = c.required(0);
    const Tensor& w = c.required(1);
    const ConvParams p = conv_params_tf(c.attrs, x.shape, w.shape);
    return std::vector<Tensor>{run_tf_conv(conv, alloc, c, p, x, w, nullptr, nullptr, false)};
  });
  static constexpr std::array<const char*, 12> kFamily{
      "FusedConv2D", "FusedConv2D_BiasAdd", "FusedConv2D_BiasAdd_ReLU", "FusedConv2D_BiasAdd_Relu",
      "FusedConv2D_BiasAdd_Relu6", "FusedConv2D_BiasAdd_ReLU6", "FusedConv2D_BiasAdd_Sigmoid",
      "FusedConv2D_BiasAdd_Tanh", "FusedConv2D_BiasAdd_LeakyRelu", "FusedConv2D_BiasAdd_HardSwish",
      "FusedConv2D_BiasAdd_Clip", "FusedConv2D_BiasAdd_HardSigmoid"};
  for (const char* name : kFamily)
    r.add(name, [conv, alloc](const KernelCall& c) {
      const Tensor& x = c.required(0);
      const Tensor& w = c.required(1);
      ConvParams p = conv_params_tf(c.attrs, x.shape, w.shape);
      p.act = family_activation(c);
      return std::vector<Tensor>{run_tf_conv(conv, alloc, c, p, x, w, &c.required(2), nullptr, false)};
    });
  r.add("_FusedConv2D", [conv, alloc](const KernelCall& c) {
    const TfEpilogue e = parse_tf_epilogue(c, 2);
    const Tensor& x = c.required(0);
    const Tensor& w = c.required(1);
    ConvParams p = conv_params_tf(c.attrs, x.shape, w.shape);
    p.act = e.act;
    const Tensor* z = e.add ? &c.required(3) : nullptr;
    return std::vector<Tensor>{run_tf_conv(conv, alloc, c, p, x, w, &c.required(2), z, e.elu)};
  });
}

}  // namespace graphfuse::kernels
