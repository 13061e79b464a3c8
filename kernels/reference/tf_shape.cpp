// TF data movement whose operands differ from the ONNX ops of the same job: Transpose takes
// its perm as an input, ConcatV2 its axis as the last input, SplitV sizes and axis as inputs,
// Pad its paddings as a [rank, 2] matrix of (before, after) pairs.
// Each reads its operands and hands the work to the set's ONNX kernel.
#include "reference/tf_ops.h"

namespace graphfuse::kernels {

namespace {

// Calls `fn` on `inputs` with `attrs`, as node `c` (same id and outputs, for error messages).
std::vector<Tensor> delegate(const KernelFn& fn, const KernelCall& c, std::string_view op,
                             std::vector<const Tensor*> inputs, const Attributes& attrs) {
  KernelCall inner(c.node_id, op, attrs, c.num_outputs);
  inner.inputs = std::move(inputs);
  return fn(inner);
}

std::int64_t scalar_int(const Tensor& t, std::string_view what) {
  const auto v = int_values(t, what);
  check(v.size() == 1, std::string(what) + " must have one element, has " + shape_str(t.shape));
  return v[0];
}

}  // namespace

void register_tf_shape(KernelRegistry& r) {
  const KernelFn* transpose = r.find("Transpose");
  const KernelFn* concat = r.find("Concat");
  const KernelFn* split = r.find("Split");
  const KernelFn* pad = r.find("Pad");
  check(transpose && concat && split && pad, "register_tf_shape needs the shape and pad ops registered first");

  // Pad(x, paddings): TF's paddings are [rank, 2] (before, after per dimension); ONNX's pads
  // are one vector, all befores then all afters. The rank-2 operand tells the two apart.
  r.add("Pad", [onnx = *pad](const KernelCall& c) {
    const Tensor* p = c.input(1);
    if (!p || p->shape.size() != 2 || c.inputs.size() != 2) return onnx(c);
    const Tensor& x = c.required(0);
    check(p->shape == Shape{static_cast<std::int64_t>(x.shape.size()), 2},
          "TF Pad paddings must be [rank, 2] = [" + std::to_string(x.shape.size()) + ", 2], are " + shape_str(p->shape));
    const auto v = int_values(*p, "paddings");
    const std::size_t rank = x.shape.size();
    Tensor pads = alloc(DType::Int64, Shape{static_cast<std::int64_t>(2 * rank)});
    auto* out = mut<std::int64_t>(pads);
    for (std::size_t d = 0; d < rank; ++d) {
      out[d] = v[2 * d];
      out[rank + d] = v[2 * d + 1];
    }
    return delegate(onnx, c, "Pad", {&x, &pads}, c.attrs);
  });

  // Transpose(x, perm): TF passes the permutation as a tensor; ONNX as the perm attribute.
  r.add("Transpose", [onnx = *transpose](const KernelCall& c) {
    const Tensor* perm = c.input(1);
    if (!perm) return onnx(c);
    check(!has_attr(c.attrs, "perm"), "Transpose has both a perm input and a perm attribute");
    Attributes a = c.attrs;
    a.set("perm", int_values(*perm, "perm"));
    return delegate(onnx, c, "Transpose", {&c.required(0)}, a);
  }, r.layout_support("Transpose"));

  // ConcatV2(values..., axis).
  r.add("ConcatV2", [onnx = *concat](const KernelCall& c) {
    check(c.inputs.size() >= 2, "ConcatV2 needs at least one value and the axis");
    Attributes a = c.attrs;
    a.set("axis", scalar_int(c.required(c.inputs.size() - 1), "axis"));
    std::vector<const Tensor*> values(c.inputs.begin(), c.inputs.end() - 1);
    for (std::size_t i = 0; i < values.size(); ++i) c.required(i);
    return delegate(onnx, c, "Concat", values, a);
  });

  // SplitV(value, size_splits, axis) {num_split}: one size may be -1 (the rest of the axis).
  r.add("SplitV", [onnx = *split](const KernelCall& c) {
    const Tensor& x = c.required(0);
    auto sizes = int_values(c.required(1), "size_splits");
    const std::int64_t axis =
        normalize_axis(scalar_int(c.required(2), "axis"), static_cast<std::int64_t>(x.shape.size()));
    const std::int64_t n = attr_int(c.attrs, "num_split", static_cast<std::int64_t>(sizes.size()));
    check(n == static_cast<std::int64_t>(sizes.size()) && sizes.size() == c.num_outputs,
          "num_split " + std::to_string(n) + ", size_splits " + shape_str(sizes) + " and " +
              std::to_string(c.num_outputs) + " outputs must agree");
    std::int64_t known = 0, infer = -1;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1) {
        check(infer < 0, "size_splits " + shape_str(sizes) + " has more than one -1");
        infer = static_cast<std::int64_t>(i);
      } else {
        check(sizes[i] >= 0, "size_splits " + shape_str(sizes) + " has a negative size");
        known += sizes[i];
      }
    }
    if (infer >= 0) {
      check(known <= x.shape[axis], "size_splits " + shape_str(sizes) + " exceed the axis " +
                                        std::to_string(x.shape[axis]));
      sizes[infer] = x.shape[axis] - known;
    }
    Attributes a;
    a.set("axis", axis);
    const Tensor split_sizes = Tensor::from_ints({static_cast<std::int64_t>(sizes.size())}, sizes);
    return delegate(onnx, c, "Split", {&x, &split_sizes}, a);
  });
}

}  // namespace graphfuse::kernels
