// TF's _FusedConv2D with the fused_ops grappler's remapper emits: BiasAdd, then optionally
// Add (a residual input), then optionally an activation (Relu, Relu6, Elu, LeakyRelu, Tanh,
// Sigmoid). Bias, residual and activation go into the convolution's own epilogue
// (ConvParams); Elu, which the epilogue lacks, is one pass afterwards.
#include "reference/tf_ops.h"

namespace graphfuse::kernels {

void register_tf_conv(KernelRegistry& r, ConvImpl conv) {
  r.add("_FusedConv2D", [conv](const KernelCall& c) {
    const TfEpilogue e = parse_tf_epilogue(c, 2);
    const Tensor& x = c.required(0);
    const Tensor& w = c.required(1);
    ConvParams p = conv_params_tf(c.attrs, x.shape, w.shape);
    const Tensor& b = c.required(2);
    check(b.shape == Shape{p.c_out}, "bias must have shape [" + std::to_string(p.c_out) + "], has " +
                                         shape_str(b.shape));
    p.has_bias = true;
    p.act = e.act;
    Tensor y = alloc_f32(p.output_shape());
    const float* zp = nullptr;
    if (e.add) {
      // TF requires the residual to have the output's shape (no broadcasting).
      const Tensor& z = c.required(3);
      check(z.shape == y.shape, "the Add operand must have the output shape " + shape_str(y.shape) +
                                    ", has " + shape_str(z.shape));
      zp = f32(z, "Add operand");
      p.has_sum = true;
    }
    conv(p, f32(x, "input"), f32(w, "filter"), f32(b, "bias"), zp, mut<float>(y),
         c.is_const(1) ? std::shared_ptr<const void>(w.data) : nullptr);
    if (e.elu) {
      float* yp = mut<float>(y);
      for (std::int64_t i = 0; i < y.num_elements(); ++i) yp[i] = elu(yp[i]);
    }
    return std::vector<Tensor>{y};
  });
}

}  // namespace graphfuse::kernels
