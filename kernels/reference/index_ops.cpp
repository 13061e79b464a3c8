// Ops the function-expanded losses and masks are built from, with full ONNX semantics for
// every element type: GatherElements (negative indices, int32/int64 indices), Trilu (k
// input, upper/lower, batches), Range (float, double, int16/32/64, accumulated as ONNX
// defines it: each value is the previous plus delta).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "core/util.h"
#include "reference/numeric_types.h"

namespace graphfuse::kernels {

namespace {

std::size_t bytes_of(const Tensor& t, const std::string& what) {
  const std::size_t s = dtype_size(t.dtype);
  check(s > 0, what + ": element type " + std::string(dtype_name(t.dtype)) + " is not supported");
  check(t.has_data(), what + " has no data");
  return s;
}

std::vector<Tensor> gather_elements(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const Tensor& ind = c.required(1);
  const std::size_t es = bytes_of(x, "GatherElements data");
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  check(rank >= 1, "GatherElements data must have rank >= 1");
  check(static_cast<std::int64_t>(ind.shape.size()) == rank,
        "GatherElements indices " + shape_str(ind.shape) + " must have the rank of data " + shape_str(x.shape));
  const std::int64_t axis = normalize_axis(attr_int(c.attrs, "axis", 0), rank);
  for (std::int64_t d = 0; d < rank; ++d)
    check(d == axis || ind.shape[d] <= x.shape[d],
          "GatherElements indices " + shape_str(ind.shape) + " exceed data " + shape_str(x.shape));
  const auto idx = int_values(ind, "indices");
  std::vector<std::int64_t> xstride(rank, 1);
  for (std::int64_t d = rank - 1; d > 0; --d) xstride[d - 1] = xstride[d] * x.shape[d];
  Tensor y = alloc(x.dtype, ind.shape);
  char* dst = mut<char>(y);
  const std::int64_t dim = x.shape[axis];
  std::vector<std::int64_t> pos(rank, 0);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    std::int64_t j = idx[i];
    check(j >= -dim && j < dim, "GatherElements index " + std::to_string(j) + " out of range for dim " +
                                    std::to_string(dim));
    if (j < 0) j += dim;
    std::int64_t off = 0;
    for (std::int64_t d = 0; d < rank; ++d) off += (d == axis ? j : pos[d]) * xstride[d];
    std::memcpy(dst + i * es, x.data->data() + off * static_cast<std::int64_t>(es), es);
    for (std::int64_t d = rank; d-- > 0;) {
      if (++pos[d] < ind.shape[d]) break;
      pos[d] = 0;
    }
  }
  return {y};
}

std::vector<Tensor> trilu(const KernelCall& c) {
  const Tensor& x = c.required(0);
  const std::size_t es = bytes_of(x, "Trilu input");
  const auto rank = x.shape.size();
  check(rank >= 2, "Trilu input must have rank >= 2, has shape " + shape_str(x.shape));
  std::int64_t k = 0;
  if (const Tensor* kt = c.input(1)) {
    const auto v = int_values(*kt, "k");
    check(v.size() == 1, "Trilu k must have one element");
    k = v[0];
  }
  const bool upper = attr_int(c.attrs, "upper", 1) != 0;
  const std::int64_t rows = x.shape[rank - 2], cols = x.shape[rank - 1];
  Tensor y = alloc(x.dtype, x.shape);  // zero-filled: the dropped triangle
  const std::int64_t mats = rows * cols == 0 ? 0 : x.num_elements() / (rows * cols);
  char* dst = mut<char>(y);
  for (std::int64_t m = 0; m < mats; ++m)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        // j - i >= k keeps the upper part, j - i <= k the lower (k may be any int64: compared
        // with the bounded j - i, never added to an index).
        const std::int64_t diff = j - i;
        const bool keep = upper ? diff >= k : diff <= k;
        if (!keep) continue;
        const std::int64_t off = (m * rows + i) * cols + j;
        std::memcpy(dst + off * static_cast<std::int64_t>(es), x.data->data() + off * static_cast<std::int64_t>(es),
                    es);
      }
  return {y};
}

template <class T>
Tensor range_of(const Tensor& s, const Tensor& l, const Tensor& d) {
  const T start = s.as<T>()[0], limit = l.as<T>()[0], delta = d.as<T>()[0];
  check(delta != T(0), "Range delta must not be 0");
  // ONNX: number_of_elements = max(ceil((limit - start) / delta), 0), in double.
  const double n_real = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
  check(!std::isnan(n_real) && n_real < 4.0e18, "Range has too many elements");
  const auto n = static_cast<std::int64_t>(std::max(0.0, n_real));
  check_tensor_size(s.dtype, {n}, "Range output");
  Tensor y = alloc(s.dtype, {n});
  T* p = mut<T>(y);
  T v = start;
  for (std::int64_t i = 0; i < n; ++i) {
    p[i] = v;
    if constexpr (std::is_integral_v<T>)
      v = static_cast<T>(static_cast<std::uint64_t>(v) + static_cast<std::uint64_t>(delta));
    else
      v += delta;
  }
  return y;
}

std::vector<Tensor> range(const KernelCall& c) {
  const Tensor& s = c.required(0);
  const Tensor& l = c.required(1);
  const Tensor& d = c.required(2);
  for (const Tensor* t : {&s, &l, &d}) {
    check(t->has_data(), "Range inputs have no data");
    check(t->num_elements() == 1, "Range inputs must be scalars, one has shape " + shape_str(t->shape));
    check(t->dtype == s.dtype, "Range inputs must share one element type");
  }
  switch (s.dtype) {
    case DType::Float32: return {range_of<float>(s, l, d)};
    case DType::Float64: return {range_of<double>(s, l, d)};
    case DType::Int16: return {range_of<std::int16_t>(s, l, d)};
    case DType::Int32: return {range_of<std::int32_t>(s, l, d)};
    case DType::Int64: return {range_of<std::int64_t>(s, l, d)};
    default: break;
  }
  fail("Range: element type " + std::string(dtype_name(s.dtype)) + " is not supported");
}

}  // namespace

void register_reference_index(KernelRegistry& r) {
  r.add("GatherElements", gather_elements);
  r.add("Trilu", trilu);
  r.add("Range", range);
}

}  // namespace graphfuse::kernels
