// TF-style convolutions: Conv2D, graphfuse's FusedConv2D_BiasAdd[_Act] family (what
// rules/tf produces) and TF's _FusedConv2D with the fused_ops the grappler remapper emits
// (BiasAdd, then optionally Add (a residual input), then optionally Relu, Relu6, Elu,
// LeakyRelu, Tanh or Sigmoid). Bias, residual and activation go into the convolution's own
// epilogue (ConvParams); Elu, which the epilogue lacks, is one pass afterwards.
// Registered once per set (core/registry.cpp), so that each set chooses how outputs are
// allocated (the fast set: its recycled, unfilled pool). Conv2D also takes data_format NCHW
// (as Transpose -> NHWC -> Transpose); the fused ops are NHWC only, as TF's CPU kernels are.
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

// x [d0, d1, d2, d3] -> y with y[i0, i1, i2, i3] = x at the index `perm` picks (a 4-D
// float Transpose, for the NCHW Conv2D below).
Tensor transpose4(const Tensor& x, const std::array<std::size_t, 4>& perm) {
  const float* xp = f32(x, "input");
  Shape out(4);
  for (std::size_t i = 0; i < 4; ++i) out[i] = x.shape[perm[i]];
  std::array<std::int64_t, 4> in_stride{};
  in_stride[3] = 1;
  for (std::size_t d = 3; d > 0; --d) in_stride[d - 1] = in_stride[d] * x.shape[d];
  std::array<std::int64_t, 4> s{};
  for (std::size_t i = 0; i < 4; ++i) s[i] = in_stride[perm[i]];
  Tensor y = alloc_f32(out);
  float* yp = mut<float>(y);
  std::int64_t k = 0;
  for (std::int64_t a = 0; a < out[0]; ++a)
    for (std::int64_t b = 0; b < out[1]; ++b)
      for (std::int64_t c = 0; c < out[2]; ++c)
        for (std::int64_t d = 0; d < out[3]; ++d) yp[k++] = xp[a * s[0] + b * s[1] + c * s[2] + d * s[3]];
  return y;
}

// A 4-vector attribute in NCHW order re-laid as NHWC: v[perm[i]] for perm [0, 2, 3, 1]
// (explicit_paddings: pairs per dim, the same move on pairs).
void relay_nchw_attr(Attributes& a, const char* name, std::size_t group) {
  auto v = attr_ints(a, name);
  if (v.size() != 4 * group) return;  // absent, or [h, w]: the same in either layout
  std::vector<std::int64_t> out;
  for (std::size_t d : {0, 2, 3, 1})
    for (std::size_t k = 0; k < group; ++k) out.push_back(v[d * group + k]);
  a.set(name, out);
}

// Conv2D in TF's NCHW data_format, which TF's CPU kernels (and graphfuse's) do not have: run
// as Transpose -> NHWC Conv2D -> Transpose, the same computation rules/tf/layout.yaml makes
// explicit in the graph. The reference semantics for `graphfuse verify` of an NCHW graph.
Tensor run_conv2d_nchw(ConvImpl conv, OutputAlloc alloc, const KernelCall& c, const Tensor& x, const Tensor& w) {
  if (x.shape.size() != 4) fail("Conv2D NCHW needs a 4-D input, has " + shape_str(x.shape));
  Attributes nhwc = c.attrs;
  nhwc.set("data_format", std::string("NHWC"));
  relay_nchw_attr(nhwc, "strides", 1);
  relay_nchw_attr(nhwc, "dilations", 1);
  relay_nchw_attr(nhwc, "explicit_paddings", 2);
  const Tensor xt = transpose4(x, {0, 2, 3, 1});
  const ConvParams p = conv_params_tf(nhwc, xt.shape, w.shape);
  return transpose4(run_tf_conv(conv, alloc, c, p, xt, w, nullptr, nullptr, false), {0, 3, 1, 2});
}

// A depthwise filter [H, W, C, M] is the grouped Conv2D filter [H, W, 1, C * M] over the
// same bytes (output channel c * M + m reads input channel c only), so the convolution
// runs as C groups of one input channel each.
Tensor depthwise_as_grouped(const Tensor& w) {
  if (w.shape.size() != 4) fail("a depthwise filter is 4-D [H, W, C, M], has " + shape_str(w.shape));
  if (w.shape[2] <= 0 || w.shape[3] <= 0 || w.shape[2] > (std::int64_t{1} << 31) || w.shape[3] > (std::int64_t{1} << 31))
    fail("a depthwise filter needs 1 to 2^31 channels and multipliers, has " + shape_str(w.shape));
  Tensor g = w;
  g.shape = {w.shape[0], w.shape[1], 1, w.shape[2] * w.shape[3]};
  return g;
}

Tensor run_depthwise(ConvImpl conv, OutputAlloc alloc, const KernelCall& c, const Tensor& x, const Tensor& w,
                     const Tensor* b, const TfEpilogue* e) {
  if (x.shape.size() != 4 || w.shape.size() != 4 || x.shape[3] != w.shape[2])
    fail("a depthwise convolution needs an NHWC input whose channels are the filter's third dimension (input " +
         shape_str(x.shape) + ", filter " + shape_str(w.shape) + ")");
  // The grouped convolution a depthwise one becomes has kernels (oneDNN's) that refuse
  // windows the reference would run; refuse them in both sets alike, naming the attribute.
  for (const char* name : {"strides", "dilations"})
    for (std::int64_t v : attr_ints(c.attrs, name))
      if (v < 1 || v > (std::int64_t{1} << 24))
        fail(std::string(name) + " of a depthwise convolution must be 1 to 2^24, has " + std::to_string(v));
  const Tensor wg = depthwise_as_grouped(w);
  if (!e) {
    if (attr_string(c.attrs, "data_format", "NHWC") == "NCHW") return run_conv2d_nchw(conv, alloc, c, x, wg);
    return run_tf_conv(conv, alloc, c, conv_params_tf(c.attrs, x.shape, wg.shape), x, wg, nullptr, nullptr, false);
  }
  if (attr_string(c.attrs, "data_format", "NHWC") != "NHWC") fail("FusedDepthwiseConv2dNative is NHWC only");
  ConvParams p = conv_params_tf(c.attrs, x.shape, wg.shape);
  p.act = e->act;
  if (e->add) fail("FusedDepthwiseConv2dNative takes no residual Add");
  Tensor y = run_tf_conv(conv, alloc, c, p, x, wg, b, nullptr, e->elu);
  return e->prelu ? prelu(y, c.required(3)) : y;
}

}  // namespace

void register_tf_conv(KernelRegistry& r, ConvImpl conv, OutputAlloc alloc) {
  r.add("DepthwiseConv2dNative", [conv, alloc](const KernelCall& c) {
    return std::vector<Tensor>{run_depthwise(conv, alloc, c, c.required(0), c.required(1), nullptr, nullptr)};
  });
  // TF.js's converter's fused depthwise convolution (TensorFlow's is _FusedDepthwiseConv2dNative).
  r.add("FusedDepthwiseConv2dNative", [conv, alloc](const KernelCall& c) {
    const TfEpilogue e = parse_tf_epilogue(c, 2);
    return std::vector<Tensor>{run_depthwise(conv, alloc, c, c.required(0), c.required(1), &c.required(2), &e)};
  });
  r.add("Conv2D", [conv, alloc](const KernelCall& c) {
    const Tensor& x = c.required(0);
    const Tensor& w = c.required(1);
    if (attr_string(c.attrs, "data_format", "NHWC") == "NCHW")
      return std::vector<Tensor>{run_conv2d_nchw(conv, alloc, c, x, w)};
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
    Tensor y = run_tf_conv(conv, alloc, c, p, x, w, &c.required(2), z, e.elu);
    return std::vector<Tensor>{e.prelu ? prelu(y, c.required(3)) : y};
  });
}

}  // namespace graphfuse::kernels
