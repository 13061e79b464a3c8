// Data-movement ops (any dtype): Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat,
// Slice, Gather, Shape, Size, Constant (Cast: cast.cpp). Views share bytes; the rest copy elements.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/util.h"

namespace graphfuse::kernels {

namespace {

std::size_t elem_size(const Tensor& t) {
  const std::size_t s = dtype_size(t.dtype);
  check(s > 0, "unsupported element type " + std::string(dtype_name(t.dtype)));
  check(t.has_data(), "input has no data");
  return s;
}

// y[i] = x[base + sum(idx[d] * stride[d])] over the multi-index idx of `out`: the one
// loop behind Transpose and Slice. Typed per element size so the copy is a move, not a
// memcpy call per element.
template <class E>
void strided_copy_as(const char* src, char* dst, const Shape& out, const std::vector<std::int64_t>& stride,
                     std::int64_t base) {
  const auto* x = reinterpret_cast<const E*>(src);
  auto* y = reinterpret_cast<E*>(dst);
  const std::size_t rank = out.size();
  std::vector<std::int64_t> idx(rank, 0);
  std::int64_t off = base;
  const std::int64_t n = numel(out);
  if (rank > 1 && stride[rank - 1] == 1 && out[rank - 1] > 1 && n > 0) {
    // Contiguous innermost runs (a Slice's rows, a Transpose that keeps the last axis): one
    // block copy per run instead of per-element index stepping.
    const std::int64_t run = out[rank - 1];
    const auto bytes = static_cast<std::size_t>(run) * sizeof(E);
    for (std::int64_t i = 0; i < n; i += run) {
      std::memcpy(y + i, x + off, bytes);
      for (std::size_t d = rank - 1; d-- > 0;) {
        off += stride[d];
        if (++idx[d] < out[d]) break;
        off -= stride[d] * out[d];
        idx[d] = 0;
      }
    }
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    y[i] = x[off];
    for (std::size_t d = rank; d-- > 0;) {
      off += stride[d];
      if (++idx[d] < out[d]) break;
      off -= stride[d] * out[d];
      idx[d] = 0;
    }
  }
}

void strided_copy(std::size_t es, const char* src, char* dst, const Shape& out,
                  const std::vector<std::int64_t>& stride, std::int64_t base) {
  switch (es) {
    case 1: return strided_copy_as<std::uint8_t>(src, dst, out, stride, base);
    case 2: return strided_copy_as<std::uint16_t>(src, dst, out, stride, base);
    case 4: return strided_copy_as<std::uint32_t>(src, dst, out, stride, base);
    case 8: return strided_copy_as<std::uint64_t>(src, dst, out, stride, base);
  }
  fail("unsupported element size " + std::to_string(es));
}

// Axes from the optional input `slot` (opset >= 13) or the "axes" attribute.
std::vector<std::int64_t> axes_of(const KernelCall& c, std::size_t slot) {
  if (const Tensor* t = c.input(slot)) return int_values(*t, "axes");
  return attr_ints(c.attrs, "axes");
}

std::vector<Tensor> reshape(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto spec = int_values(c.required(1), "shape");
  const bool allowzero = attr_int(c.attrs, "allowzero", 0) != 0;
  Shape out(spec.size());
  std::int64_t known = 1, infer = -1;
  for (std::size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == -1) {
      check(infer < 0, "Reshape shape has more than one -1");
      infer = static_cast<std::int64_t>(i);
      continue;
    }
    // 0 copies the input's dim (unless allowzero), -1 is inferred from the rest.
    out[i] = spec[i] == 0 && !allowzero ? (i < x.shape.size() ? x.shape[i] : -2) : spec[i];
    check(out[i] >= 0, "Reshape shape " + shape_str(spec) + " is invalid for input " +
                           shape_str(x.shape));
    if (out[i] != 0 && known > std::numeric_limits<std::int64_t>::max() / out[i])
      fail("Reshape shape " + shape_str(spec) + " has more elements than int64 can count");
    known *= out[i];
  }
  if (infer >= 0) {
    check(known > 0 && x.num_elements() % known == 0,
          "cannot reshape " + shape_str(x.shape) + " to " + shape_str(spec));
    out[infer] = x.num_elements() / known;
  }
  return {reshaped(x, out)};
}

std::vector<Tensor> flatten(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  // axis is in [-rank, rank]: a negative one counts from the rank (-1 = rank - 1), unlike
  // the insertion axes of Unsqueeze.
  std::int64_t axis = attr_int(c.attrs, "axis", 1);
  check(axis >= -rank && axis <= rank, "Flatten axis " + std::to_string(axis) + " is out of range for rank " +
                                           std::to_string(rank));
  if (axis < 0) axis += rank;
  const std::int64_t outer = numel(Shape(x.shape.begin(), x.shape.begin() + axis));
  return {reshaped(x, {outer, x.num_elements() / std::max<std::int64_t>(outer, 1)})};
}

std::vector<Tensor> squeeze(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  auto axes = axes_of(c, 1);
  std::vector<bool> drop(x.shape.size(), false);
  for (auto a : axes) {
    const auto ax = normalize_axis(a, rank);
    check(x.shape[ax] == 1, "cannot squeeze axis " + std::to_string(a) + " of " +
                                shape_str(x.shape));
    drop[ax] = true;
  }
  Shape out;
  for (std::int64_t d = 0; d < rank; ++d)
    if (axes.empty() ? x.shape[d] != 1 : !drop[d]) out.push_back(x.shape[d]);
  return {reshaped(x, out)};
}

std::vector<Tensor> unsqueeze(const KernelCall& c) {
  const Tensor& x = c.required(0);
  auto axes = axes_of(c, 1);
  const auto out_rank = static_cast<std::int64_t>(x.shape.size() + axes.size());
  std::vector<bool> ins(out_rank, false);
  for (auto a : axes) {
    const auto ax = normalize_axis(a, out_rank);
    check(!ins[ax], "duplicate axis in Unsqueeze");
    ins[ax] = true;
  }
  Shape out;
  std::size_t k = 0;
  for (std::int64_t d = 0; d < out_rank; ++d) out.push_back(ins[d] ? 1 : x.shape[k++]);
  return {reshaped(x, out)};
}

std::vector<Tensor> transpose(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const std::size_t rank = x.shape.size(), es = elem_size(x);
  auto perm = attr_ints(c.attrs, "perm");
  if (perm.empty()) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  check(perm.size() == rank, "perm must have one entry per input dim");
  std::vector<std::int64_t> in_strides(rank, 1);
  for (std::size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * x.shape[d];
  Shape out(rank);
  std::vector<std::int64_t> src_stride(rank);
  std::vector<bool> seen(rank, false);
  for (std::size_t d = 0; d < rank; ++d) {
    const auto p = normalize_axis(perm[d], static_cast<std::int64_t>(rank));
    check(!seen[p], "perm is not a permutation");
    seen[p] = true;
    out[d] = x.shape[p];
    src_stride[d] = in_strides[p];
  }
  Tensor y = alloc_unfilled(x.dtype, out);  // every element is written below
  strided_copy(es, x.data->data(), mut<char>(y), out, src_stride, 0);
  return {y};
}

std::vector<Tensor> concat(const KernelCall& c) {
  const Tensor& first = c.required(0);
  const auto rank = static_cast<std::int64_t>(first.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", 0), rank);
  const std::size_t es = elem_size(first);
  Shape out = first.shape;
  out[axis] = 0;
  std::vector<const Tensor*> parts;
  for (const Tensor* t : c.inputs) {
    if (!t) continue;
    check(t->dtype == first.dtype && t->shape.size() == first.shape.size(),
          "Concat inputs must share dtype and rank");
    for (std::int64_t d = 0; d < rank; ++d)
      check(d == axis || t->shape[d] == first.shape[d],
            "Concat input " + shape_str(t->shape) + " does not match " + shape_str(first.shape));
    elem_size(*t);
    out[axis] += t->shape[axis];
    parts.push_back(t);
  }
  Tensor y = alloc_unfilled(first.dtype, out);  // every element is written below
  const std::int64_t outer = numel(Shape(out.begin(), out.begin() + axis));
  const std::int64_t inner = numel(Shape(out.begin() + axis + 1, out.end()));
  char* dst = mut<char>(y);
  for (std::int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : parts) {
      const std::size_t chunk = static_cast<std::size_t>(t->shape[axis] * inner) * es;
      std::memcpy(dst, t->data->data() + o * chunk, chunk);
      dst += chunk;
    }
  return {y};
}

// Split: sizes from the second input (opset 13), the "split" attribute (older), or equal
// parts for every output (the last one smaller when the axis does not divide evenly).
std::vector<Tensor> split(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", 0), rank);
  const std::size_t es = elem_size(x);
  const std::int64_t dim = x.shape[axis];
  auto sizes = c.input(1) ? int_values(*c.input(1), "split") : attr_ints(c.attrs, "split");
  const auto parts = static_cast<std::int64_t>(sizes.empty() ? c.num_outputs : sizes.size());
  check(parts >= 1, "Split needs at least one output");
  if (sizes.empty()) {
    const std::int64_t each = (dim + parts - 1) / parts;
    for (std::int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<std::int64_t>(0, std::min(each, dim - i * each)));
  }
  // Each size in [0, dim] before summing: sizes from a file could wrap the sum around to dim.
  std::int64_t total = 0;
  for (auto v : sizes) {
    if (v < 0 || v > dim || total > dim - v)
      fail("split sizes " + shape_str(sizes) + " do not add up to " + std::to_string(dim));
    total += v;
  }
  check(total == dim, "split sizes " + shape_str(sizes) + " do not add up to " + std::to_string(dim));
  const std::int64_t outer = numel(Shape(x.shape.begin(), x.shape.begin() + axis));
  const std::int64_t inner = numel(Shape(x.shape.begin() + axis + 1, x.shape.end()));
  std::vector<Tensor> out;
  std::int64_t start = 0;
  for (auto len : sizes) {
    Shape s = x.shape;
    s[axis] = len;
    Tensor y = alloc_unfilled(x.dtype, s);  // every element is written below
    const std::size_t chunk = static_cast<std::size_t>(len * inner) * es;
    for (std::int64_t o = 0; o < outer; ++o)
      std::memcpy(mut<char>(y) + o * chunk, x.data->data() + ((o * dim + start) * inner) * es, chunk);
    out.push_back(y);
    start += len;
  }
  return out;
}

// Slice (opset >= 10: starts, ends, axes?, steps? inputs; opset 1: attributes).
std::vector<Tensor> slice(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::size_t es = elem_size(x);
  const bool inputs = c.input(1) != nullptr;
  auto starts = inputs ? int_values(c.required(1), "starts") : attr_ints(c.attrs, "starts");
  auto ends = inputs ? int_values(c.required(2), "ends") : attr_ints(c.attrs, "ends");
  auto axes = inputs ? (c.input(3) ? int_values(*c.input(3), "axes") : std::vector<std::int64_t>{})
                     : attr_ints(c.attrs, "axes");
  auto steps = c.input(4) ? int_values(*c.input(4), "steps") : std::vector<std::int64_t>{};
  check(starts.size() == ends.size(), "starts and ends differ in length");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  check(axes.size() == starts.size() && steps.size() == starts.size(),
        "axes and steps must match starts in length");
  std::vector<std::int64_t> begin(rank, 0), step(rank, 1);
  Shape out = x.shape;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto ax = normalize_axis(axes[i], rank);
    const std::int64_t dim = x.shape[ax];
    check(steps[i] != 0, "Slice step must not be 0");
    // A step past the dim selects the same single element as dim + 1 does; clamping keeps
    // the size arithmetic below (e - s + st - 1, -st) clear of int64 overflow.
    const std::int64_t st = std::clamp(steps[i], -(dim + 1), dim + 1);
    auto clampv = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    // Positive steps clamp to [0, dim], negative ones to [-1, dim-1] (ONNX rules).
    const std::int64_t s = st > 0 ? clampv(starts[i], 0, dim) : clampv(starts[i], 0, dim - 1);
    const std::int64_t e = st > 0 ? clampv(ends[i], 0, dim) : clampv(ends[i], -1, dim - 1);
    begin[ax] = s;
    step[ax] = st;
    out[ax] = st > 0 ? std::max<std::int64_t>(0, (e - s + st - 1) / st)
                     : std::max<std::int64_t>(0, (s - e - st - 1) / -st);
  }
  std::vector<std::int64_t> in_strides(rank, 1);
  for (std::int64_t d = rank - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * x.shape[d];
  std::int64_t base = 0;
  std::vector<std::int64_t> stride(rank);
  for (std::int64_t d = 0; d < rank; ++d) {
    base += begin[d] * in_strides[d];
    stride[d] = step[d] * in_strides[d];
  }
  Tensor y = alloc_unfilled(x.dtype, out);  // every element is written below
  strided_copy(es, x.data->data(), mut<char>(y), out, stride, base);
  return {y};
}

std::vector<Tensor> gather(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const Tensor& ind = c.required(1);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", 0), rank);
  const std::size_t es = elem_size(x);
  const auto idx = int_values(ind, "indices");
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), ind.shape.begin(), ind.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  const std::int64_t outer = numel(Shape(x.shape.begin(), x.shape.begin() + axis));
  const std::int64_t inner = numel(Shape(x.shape.begin() + axis + 1, x.shape.end()));
  const std::int64_t dim = x.shape[axis];
  Tensor y = alloc_unfilled(x.dtype, out);  // every element is written below
  char* dst = mut<char>(y);
  const std::size_t chunk = static_cast<std::size_t>(inner) * es;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j : idx) {
      check(j >= -dim && j < dim, "Gather index " + std::to_string(j) + " out of range");
      if (j < 0) j += dim;
      std::memcpy(dst, x.data->data() + ((o * dim + j) * inner) * es, chunk);
      dst += chunk;
    }
  return {y};
}

// Shape (opset 15 start/end); only the input's shape is read, not its data.
std::vector<Tensor> shape_of(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  auto clampd = [&](std::int64_t v) { return std::clamp(v < 0 ? v + rank : v, std::int64_t{0}, rank); };
  const std::int64_t s = clampd(attr_int(c.attrs, "start", 0));
  const std::int64_t e = clampd(attr_int(c.attrs, "end", rank));
  std::vector<std::int64_t> dims(x.shape.begin() + s, x.shape.begin() + std::max(s, e));
  return {Tensor::from_ints({static_cast<std::int64_t>(dims.size())}, dims)};
}

// Size: the element count of the input as an int64 scalar; only the shape is read.
std::vector<Tensor> size_of(const KernelCall& c) {
  return {Tensor::from_ints({}, {checked_numel(c.required(0).shape, "Size input")})};
}

std::vector<Tensor> constant(const KernelCall& c) {
  if (auto t = c.attrs.get_if<Tensor>("value")) {
    check(t->has_data(), "Constant value has no data");
    return {*t};
  }
  if (auto f = c.attrs.get_if<float>("value_float")) return {Tensor::from_floats({}, {*f})};
  if (auto f = c.attrs.get_if<std::vector<float>>("value_floats"))
    return {Tensor::from_floats({static_cast<std::int64_t>(f->size())}, *f)};
  if (auto i = c.attrs.get_if<std::int64_t>("value_int")) return {Tensor::from_ints({}, {*i})};
  if (auto i = c.attrs.get_if<std::vector<std::int64_t>>("value_ints"))
    return {Tensor::from_ints({static_cast<std::int64_t>(i->size())}, *i)};
  fail("Constant needs a value, value_float(s) or value_int(s) attribute");
}

}  // namespace

void register_reference_shape(KernelRegistry& r) {
  r.add("Reshape", reshape);
  r.add("Flatten", flatten);
  r.add("Squeeze", squeeze);
  r.add("Unsqueeze", unsqueeze);
  r.add("Transpose", transpose);
  r.add("Concat", concat);
  r.add("Slice", slice);
  r.add("Split", split);
  r.add("Gather", gather);
  r.add("Shape", shape_of);
  r.add("Size", size_of);
  register_reference_cast(r);
  register_reference_index(r);
  r.add("Constant", constant);
}

}  // namespace graphfuse::kernels
