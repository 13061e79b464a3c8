// Ops exporters emit to build tensors from shapes and masks (ViT's class token: Shape ->
// ConstantOfShape -> Equal -> Where -> Expand), with full ONNX semantics for every element
// type they accept: ConstantOfShape, Expand, Where, Equal. Any element type is moved as bytes;
// Equal compares values per type.
#include <cstdint>
#include <cstring>
#include <string>

#include "core/util.h"

namespace graphfuse::kernels {

namespace {

std::size_t element_bytes(const Tensor& t, std::string_view what) {
  const std::size_t s = dtype_size(t.dtype);
  check(s > 0, std::string(what) + ": element type " + std::string(dtype_name(t.dtype)) + " is not supported");
  check(t.has_data(), std::string(what) + " has no data");
  return s;
}

// Calls f(i, offsets) for every output element i of `out` (row-major), with each source's
// element offset under numpy broadcasting (strides from broadcast_strides).
template <std::size_t K, class F>
void for_each_broadcast(const Shape& out, const std::vector<std::int64_t> (&strides)[K], F f) {
  const std::size_t rank = out.size();
  const std::int64_t n = numel(out);
  std::vector<std::int64_t> idx(rank, 0);
  std::int64_t off[K] = {};
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (std::size_t d = rank; d-- > 0;) {
      for (std::size_t k = 0; k < K; ++k) off[k] += strides[k][d];
      if (++idx[d] < out[d]) break;
      for (std::size_t k = 0; k < K; ++k) off[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

// ConstantOfShape(shape): a tensor of that shape filled with `value` (a one-element tensor of
// any numeric or bool type; float32 0 when absent). An empty shape gives a scalar.
std::vector<Tensor> constant_of_shape(const KernelCall& c) {
  const Tensor& s = c.required(0);
  check(s.dtype == DType::Int64, "ConstantOfShape's input must be int64, is " + std::string(dtype_name(s.dtype)));
  check(s.shape.size() <= 1, "ConstantOfShape's input must be 1-D, has shape " + shape_str(s.shape));
  const Shape shape = int_values(s, "shape");
  for (std::int64_t d : shape) check(d >= 0, "ConstantOfShape: negative dimension in " + shape_str(shape));
  Tensor value = Tensor::from_floats({1}, {0.0f});
  if (const Tensor* v = c.attrs.get_if<Tensor>("value")) {
    check(v->num_elements() == 1, "ConstantOfShape's value must have one element, has " +
                                      std::to_string(v->num_elements()));
    value = *v;
  }
  const std::size_t es = element_bytes(value, "ConstantOfShape's value");
  check_tensor_size(value.dtype, shape, "ConstantOfShape output");
  Tensor y = alloc(value.dtype, shape);
  char* dst = mut<char>(y);
  const char* src = value.data->data();
  const std::int64_t n = numel(shape);
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es, src, es);
  return {y};
}

// Expand(input, shape): input broadcast with `shape` both ways (numpy rules; a 1 in `shape`
// keeps the input's dim, so the result may be larger than `shape`).
std::vector<Tensor> expand(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const Tensor& s = c.required(1);
  check(s.dtype == DType::Int64, "Expand's shape must be int64, is " + std::string(dtype_name(s.dtype)));
  check(s.shape.size() <= 1, "Expand's shape must be 1-D, has shape " + shape_str(s.shape));
  const Shape target = int_values(s, "shape");
  for (std::int64_t d : target) check(d >= 0, "Expand: negative dimension in " + shape_str(target));
  const Shape out = broadcast_shapes(x.shape, target);
  const std::size_t es = element_bytes(x, "Expand's input");
  check_tensor_size(x.dtype, out, "Expand output");
  Tensor y = alloc(x.dtype, out);
  const char* src = x.data->data();
  char* dst = mut<char>(y);
  const std::vector<std::int64_t> strides[1] = {broadcast_strides(x.shape, out)};
  for_each_broadcast(out, strides, [&](std::int64_t i, const std::int64_t* off) {
    std::memcpy(dst + i * es, src + off[0] * es, es);
  });
  return {y};
}

// Where(condition, X, Y): X where the condition is true, else Y, all three broadcast.
std::vector<Tensor> where(const KernelCall& c) {
  const Tensor& cond = c.required(0);
  const Tensor& x = c.required(1);
  const Tensor& yv = c.required(2);
  check(cond.dtype == DType::Bool, "Where's condition must be bool, is " + std::string(dtype_name(cond.dtype)));
  check(x.dtype == yv.dtype, "Where's X and Y differ in type (" + std::string(dtype_name(x.dtype)) + ", " +
                                 std::string(dtype_name(yv.dtype)) + ")");
  check(cond.has_data(), "Where's condition has no data");
  const std::size_t es = element_bytes(x, "Where's X");
  element_bytes(yv, "Where's Y");
  const Shape out = broadcast_shapes(broadcast_shapes(cond.shape, x.shape), yv.shape);
  check_tensor_size(x.dtype, out, "Where output");
  Tensor y = alloc(x.dtype, out);
  const char* pc = cond.data->data();
  const char* px = x.data->data();
  const char* py = yv.data->data();
  char* dst = mut<char>(y);
  const std::vector<std::int64_t> strides[3] = {broadcast_strides(cond.shape, out), broadcast_strides(x.shape, out),
                                                broadcast_strides(yv.shape, out)};
  for_each_broadcast(out, strides, [&](std::int64_t i, const std::int64_t* off) {
    const char* from = pc[off[0]] != 0 ? px + off[1] * es : py + off[2] * es;
    std::memcpy(dst + i * es, from, es);
  });
  return {y};
}

// Half-precision equality from the bits: NaN equals nothing, +0 equals -0.
template <std::uint16_t kExp, std::uint16_t kMant>
bool half_equal(std::uint16_t a, std::uint16_t b) {
  auto is_nan = [](std::uint16_t v) { return (v & kExp) == kExp && (v & kMant) != 0; };
  if (is_nan(a) || is_nan(b)) return false;
  return a == b || ((a | b) & 0x7fff) == 0;
}

template <class T, class Eq>
void equal_as(const Tensor& a, const Tensor& b, Tensor& y, const Shape& out, Eq eq) {
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  char* dst = mut<char>(y);
  const std::vector<std::int64_t> strides[2] = {broadcast_strides(a.shape, out), broadcast_strides(b.shape, out)};
  for_each_broadcast(out, strides, [&](std::int64_t i, const std::int64_t* off) {
    dst[i] = eq(pa[off[0]], pb[off[1]]) ? 1 : 0;
  });
}

// Equal(A, B) -> bool, broadcast. Floats compare as IEEE values (NaN != NaN, 0 == -0).
std::vector<Tensor> equal(const KernelCall& c) {
  const Tensor& a = c.required(0);
  const Tensor& b = c.required(1);
  check(a.dtype == b.dtype, "Equal's inputs differ in type (" + std::string(dtype_name(a.dtype)) + ", " +
                                std::string(dtype_name(b.dtype)) + ")");
  element_bytes(a, "Equal's A");
  element_bytes(b, "Equal's B");
  const Shape out = broadcast_shapes(a.shape, b.shape);
  check_tensor_size(DType::Bool, out, "Equal output");
  Tensor y = alloc(DType::Bool, out);
  auto same = [](auto u, auto v) { return u == v; };
  switch (a.dtype) {
    case DType::Float32: equal_as<float>(a, b, y, out, same); break;
    case DType::Float64: equal_as<double>(a, b, y, out, same); break;
    case DType::Int8: equal_as<std::int8_t>(a, b, y, out, same); break;
    case DType::Int16: equal_as<std::int16_t>(a, b, y, out, same); break;
    case DType::Int32: equal_as<std::int32_t>(a, b, y, out, same); break;
    case DType::Int64: equal_as<std::int64_t>(a, b, y, out, same); break;
    case DType::UInt8: equal_as<std::uint8_t>(a, b, y, out, same); break;
    case DType::UInt16: equal_as<std::uint16_t>(a, b, y, out, same); break;
    case DType::UInt32: equal_as<std::uint32_t>(a, b, y, out, same); break;
    case DType::UInt64: equal_as<std::uint64_t>(a, b, y, out, same); break;
    case DType::Bool:
      equal_as<std::uint8_t>(a, b, y, out, [](std::uint8_t u, std::uint8_t v) { return (u != 0) == (v != 0); });
      break;
    case DType::Float16: equal_as<std::uint16_t>(a, b, y, out, half_equal<0x7c00, 0x03ff>); break;
    case DType::BFloat16: equal_as<std::uint16_t>(a, b, y, out, half_equal<0x7f80, 0x007f>); break;
    default: fail("Equal on " + std::string(dtype_name(a.dtype)) + " is not supported");
  }
  return {y};
}

}  // namespace

void register_reference_generate(KernelRegistry& r) {
  r.add("ConstantOfShape", constant_of_shape);
  r.add("Expand", expand);
  r.add("Where", where);
  r.add("Equal", equal);
}

}  // namespace graphfuse::kernels
