// TF MatMul (transpose_a / transpose_b attributes) and _FusedMatMul (MatMul + fused_ops),
// computed by the set's com.microsoft.FusedMatMul (transA / transB), so the fast set's
// oneDNN product serves TF graphs too; the epilogue is one pass over the product.
#include "reference/tf_ops.h"

namespace graphfuse::kernels {

namespace {

// The 2-D product op(a) x op(b) of a TF MatMul-like call (inputs 0 and 1).
Tensor tf_product(const KernelFn& fused_matmul, const KernelCall& c) {
  const Tensor& a = c.required(0);
  const Tensor& b = c.required(1);
  check(a.shape.size() == 2 && b.shape.size() == 2,
        "TF MatMul operands must be matrices, got " + shape_str(a.shape) + " x " + shape_str(b.shape));
  Attributes at;
  at.set("transA", attr_int(c.attrs, "transpose_a", 0));
  at.set("transB", attr_int(c.attrs, "transpose_b", 0));
  KernelCall inner(c.node_id, "com.microsoft.FusedMatMul", at, 1);
  inner.inputs = {&a, &b};
  inner.input_is_const = {c.is_const(0), c.is_const(1)};
  return fused_matmul(inner).at(0);
}

}  // namespace

void register_tf_matmul(KernelRegistry& r) {
  const KernelFn* matmul = r.find("MatMul");
  const KernelFn* fused = r.find("com.microsoft.FusedMatMul");
  check(matmul && fused, "register_tf_matmul needs the matmul ops registered first");

  // One MatMul op name serves both: ONNX's (no such attributes, batched) and TF's.
  r.add("MatMul", [onnx = *matmul, fm = *fused](const KernelCall& c) {
    if (!has_attr(c.attrs, "transpose_a") && !has_attr(c.attrs, "transpose_b")) return onnx(c);
    return std::vector<Tensor>{tf_product(fm, c)};
  }, r.layout_support("MatMul"));

  // _FusedMatMul(a, b, bias [, addend]) {transpose_a, transpose_b, fused_ops, leakyrelu_alpha}.
  r.add("_FusedMatMul", [fm = *fused](const KernelCall& c) {
    const TfEpilogue e = parse_tf_epilogue(c, 2);
    Tensor y = tf_product(fm, c);
    const std::int64_t rows = y.shape[0], cols = y.shape[1];
    const Tensor& bias = c.required(2);
    check(bias.shape == Shape{cols}, "bias must have shape [" + std::to_string(cols) + "], has " +
                                         shape_str(bias.shape));
    const float* bp = f32(bias, "bias");
    const float* zp = nullptr;
    if (e.add) {
      const Tensor& z = c.required(3);
      check(z.shape == y.shape, "the Add operand must have the product's shape " + shape_str(y.shape) +
                                    ", has " + shape_str(z.shape));
      zp = f32(z, "Add operand");
    }
    float* yp = mut<float>(y);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const std::int64_t k = i * cols + j;
        float v = yp[k] + bp[j];
        if (zp) v += zp[k];
        yp[k] = e.elu ? elu(v) : e.act.apply(v);
      }
    return std::vector<Tensor>{e.prelu ? prelu(y, c.required(3)) : y};
  });
}

}  // namespace graphfuse::kernels
