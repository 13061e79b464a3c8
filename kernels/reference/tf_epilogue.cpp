// The epilogue of TF's fused ops: fused_ops = [BiasAdd] [+ Add] [+ one activation].
#include <cmath>

#include "reference/tf_ops.h"

namespace graphfuse::kernels {

float elu(float x, float alpha) {
  return x > 0.0f ? x : static_cast<float>(alpha * std::expm1(static_cast<double>(x)));
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
    } else if (a == "LeakyRelu") {
      // TF's LeakyRelu default alpha is 0.2 (the remapper always copies it anyway).
      e.act = {Activation::LeakyRelu, attr_float(c.attrs, "leakyrelu_alpha", 0.2f)};
    } else {
      check(a == "Relu" || a == "Relu6" || a == "Tanh" || a == "Sigmoid",
            "unsupported fused activation '" + a + "' (expected Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid)");
      e.act = parse_activation(a);
    }
  }
  if (i < ops->size())
    fail("unsupported fused_ops: '" + (*ops)[i] +
         "' after the activation (expected BiasAdd [, Add] [, activation])");
  const std::int64_t args = e.add ? 2 : 1;
  check(attr_int(c.attrs, "num_args", args) == args,
        "num_args must be " + std::to_string(args) + " for these fused_ops");
  check(c.inputs.size() == product_inputs + static_cast<std::size_t>(args),
        "expected " + std::to_string(product_inputs + args) + " inputs for these fused_ops, got " +
            std::to_string(c.inputs.size()));
  return e;
}

}  // namespace graphfuse::kernels
