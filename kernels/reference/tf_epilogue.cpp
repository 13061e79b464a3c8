// The epilogue of TF's fused ops: fused_ops = [BiasAdd] [+ Add] [+ one activation], or
// TF.js's [BiasAdd, Prelu] with the alpha as one more argument.
#include <cmath>

#include "core/broadcast.h"
#include "reference/tf_ops.h"

namespace graphfuse::kernels {

float elu(float x, float alpha) {
  return x > 0.0f ? x : static_cast<float>(alpha * std::expm1(static_cast<double>(x)));
}

Tensor prelu(const Tensor& x, const Tensor& alpha) {
  const float* xp = f32(x, "input");
  const float* ap = f32(alpha, "alpha");
  check(broadcast_shapes(x.shape, alpha.shape) == x.shape,
        "Prelu alpha " + shape_str(alpha.shape) + " must broadcast into the input " + shape_str(x.shape));
  Tensor y = alloc_f32(x.shape);
  broadcast_apply(xp, x.shape, ap, alpha.shape, mut<float>(y), x.shape, 0, numel(x.shape),
                  [](float u, float a) { return u >= 0.0f ? u : a * u; });
  return y;
}

TfEpilogue parse_tf_epilogue(const KernelCall& c, std::size_t product_inputs) {
  const auto* ops = c.attrs.get_if<std::vector<std::string>>("fused_ops");
  check(ops != nullptr && !ops->empty() && (*ops)[0] == "BiasAdd",
        "fused_ops must start with BiasAdd (BiasAdd [, Add] [, activation])");
  TfEpilogue e;
  std::size_t i = 1;
  if (i < ops->size() && (*ops)[i] == "Add") {
    e.add = true;
    ++i;
  }
  if (i < ops->size()) {
    const std::string& a = (*ops)[i++];
    if (a == "Elu") {
      e.elu = true;
    } else if (a == "Prelu") {
      check(!e.add, "fused_ops BiasAdd, Add, Prelu: TF.js's Prelu takes no residual Add");
      e.prelu = true;
    } else if (a == "LeakyRelu") {
      // TF's LeakyRelu default alpha is 0.2 (the remapper always copies it anyway).
      e.act = {Activation::LeakyRelu, attr_float(c.attrs, "leakyrelu_alpha", 0.2f)};
    } else {
      check(a == "Relu" || a == "Relu6" || a == "Tanh" || a == "Sigmoid",
            "unsupported fused activation '" + a + "' (expected Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid, Prelu)");
      e.act = parse_activation(a);
    }
  }
  if (i < ops->size())
    fail("unsupported fused_ops: '" + (*ops)[i] +
         "' after the activation (expected BiasAdd [, Add] [, activation])");
  const std::int64_t args = e.add || e.prelu ? 2 : 1;
  check(attr_int(c.attrs, "num_args", args) == args,
        "num_args must be " + std::to_string(args) + " for these fused_ops");
  check(c.inputs.size() == product_inputs + static_cast<std::size_t>(args),
        "expected " + std::to_string(product_inputs + args) + " inputs for these fused_ops, got " +
            std::to_string(c.inputs.size()));
  return e;
}

}  // namespace graphfuse::kernels
