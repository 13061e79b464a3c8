// Cast between every numeric ONNX element type and bool (float8 and string refused).
// float16 / bfloat16 go through float32, as ONNX Runtime's converters do; casting TO
// bfloat16 is refused (see cast()). Float to integer:
// NaN gives 0 and values outside the target's range saturate (the plain C++ conversion is
// undefined behaviour there, and ONNX leaves those values unspecified).
#include <limits>
#include <type_traits>

#include "reference/numeric_types.h"

namespace graphfuse::kernels {

namespace {

// A source element as a value of the widest matching arithmetic type.
template <class S>
auto widen(S v) {
  if constexpr (std::is_same_v<S, Half>) return half_to_float(v.bits);
  else if constexpr (std::is_same_v<S, BF16>) return bf16_to_float(v.bits);
  else return v;
}

template <class D, class V>
D narrow(V v) {
  if constexpr (std::is_same_v<D, Half>) {
    return Half{float_to_half(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<D, BF16>) {
    return BF16{float_to_bf16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != V{0};
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<V>) {
    if (std::isnan(v)) return D{0};
    // The bounds as V: lo is exact (0 or -2^k); hi + 1 is 2^k, exact too.
    const V lo = static_cast<V>(std::numeric_limits<D>::min());
    const V hi_excl = static_cast<V>(std::numeric_limits<D>::max()) + V{1};
    if (v <= lo) return std::numeric_limits<D>::min();
    if (v >= hi_excl) return std::numeric_limits<D>::max();
    return static_cast<D>(v);
  } else {
    return static_cast<D>(v);  // integer wrap-around (two's complement) or float rounding
  }
}

template <class S, class D>
void convert(const Tensor& x, Tensor& y) {
  const auto* src = reinterpret_cast<const S*>(x.data->data());
  D* dst = mut<D>(y);
  for (std::int64_t i = 0, n = x.num_elements(); i < n; ++i) dst[i] = narrow<D>(widen(src[i]));
}

std::vector<Tensor> cast(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto to = static_cast<DType>(attr_int(c.attrs, "to", 1));
  check(x.has_data(), "Cast input has no data");
  // Checked before the same-type shortcut: a type the kernel cannot hold is refused either way.
  dispatch_numeric(x.dtype, "Cast input", [](auto) {});
  dispatch_numeric(to, "Cast to", [](auto) {});
  if (to == x.dtype) return {x};
  // Rounding to bfloat16 is where producers disagree: ONNX Runtime rounds to nearest even,
  // older ONNX (the Debian test data's expected outputs) truncated. A fold must not pick one
  // for the user, so the node is left to the runtime.
  check(to != DType::BFloat16, "Cast to bfloat16 is not supported (runtimes round differently)");
  Tensor y = alloc(to, x.shape);
  dispatch_numeric(x.dtype, "Cast input", [&](auto s) {
    dispatch_numeric(to, "Cast to", [&](auto d) { convert<decltype(s), decltype(d)>(x, y); });
  });
  return {y};
}

}  // namespace

void register_reference_cast(KernelRegistry& r) { r.add("Cast", cast); }

}  // namespace graphfuse::kernels
