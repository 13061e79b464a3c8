// Elementwise TF ops that have no ONNX twin of the same name: AddV2, Elu and Prelu.
#include "reference/tf_ops.h"

namespace graphfuse::kernels {

void register_tf_math(KernelRegistry& r) {
  // AddV2 is Add (TF's V2 only changed gradient handling): the set's own broadcasting Add.
  const KernelFn* add = r.find("Add");
  check(add != nullptr, "register_tf_math needs Add registered first");
  // The Add kernels read their op name, so the call is passed on renamed, layouts and all.
  r.add("AddV2", [onnx = *add](const KernelCall& c) {
    KernelCall inner(c.node_id, "Add", c.attrs, c.num_outputs);
    inner.inputs = c.inputs;
    inner.input_is_const = c.input_is_const;
    inner.layouts = c.layouts;
    inner.prefer_channels_last = c.prefer_channels_last;
    auto out = onnx(inner);
    c.out_layout = inner.out_layout;
    return out;
  }, r.layout_support("Add"));
  // Elu (TF: alpha 1; ONNX's Elu has the same name and an alpha attribute, default 1).
  r.add("Elu", [](const KernelCall& c) {
    const Tensor& x = c.required(0);
    const float alpha = attr_float(c.attrs, "alpha", 1.0f);
    const float* xp = f32(x, "input");
    Tensor y = alloc_f32(x.shape);
    float* yp = mut<float>(y);
    for (std::int64_t i = 0; i < x.num_elements(); ++i) yp[i] = elu(xp[i], alpha);
    return std::vector<Tensor>{y};
  });
  // Prelu(x, alpha) (TF.js's op; ONNX's is PRelu).
  r.add("Prelu", [](const KernelCall& c) { return std::vector<Tensor>{prelu(c.required(0), c.required(1))}; });
}

}  // namespace graphfuse::kernels
