// Reference reductions: ReduceMean, ReduceSum, ReduceMax, ReduceMin over any axes.
#include <algorithm>
#include <limits>

#include "core/util.h"

namespace graphfuse::kernels {

namespace {

enum class Reduce { Mean, Sum, Max, Min };

std::vector<Tensor> reduce(Reduce kind, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const float* xp = f32(x, "data");
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  // Axes: the optional second input (ReduceSum opset 13, all opset 18) or the attribute.
  auto axes = c.input(1) ? int_values(*c.input(1), "axes") : attr_ints(c.attrs, "axes");
  const bool keepdims = attr_int(c.attrs, "keepdims", 1) != 0;
  if (axes.empty() && attr_int(c.attrs, "noop_with_empty_axes", 0) != 0) return {x};
  std::vector<bool> red(rank, axes.empty());
  for (auto a : axes) red[normalize_axis(a, rank)] = true;
  Shape out_keep(rank), out;
  for (std::int64_t d = 0; d < rank; ++d) {
    out_keep[d] = red[d] ? 1 : x.shape[d];
    if (!red[d] || keepdims) out.push_back(out_keep[d]);
  }
  const std::int64_t n_out = numel(out_keep);
  std::vector<double> acc(n_out, kind == Reduce::Max   ? -std::numeric_limits<double>::infinity()
                                  : kind == Reduce::Min ? std::numeric_limits<double>::infinity()
                                                        : 0.0);
  // Output strides over the kept shape (0 on reduced dims) map each input element.
  std::vector<std::int64_t> ostride(rank, 0);
  for (std::int64_t d = rank - 1, s = 1; d >= 0; --d) {
    ostride[d] = red[d] ? 0 : s;
    s *= out_keep[d];
  }
  std::vector<std::int64_t> idx(rank, 0);
  std::int64_t o = 0;
  for (std::int64_t i = 0; i < x.num_elements(); ++i) {
    const double v = xp[i];
    switch (kind) {
      case Reduce::Mean:
      case Reduce::Sum: acc[o] += v; break;
      case Reduce::Max: acc[o] = std::max(acc[o], v); break;
      case Reduce::Min: acc[o] = std::min(acc[o], v); break;
    }
    for (std::int64_t d = rank - 1; d >= 0; --d) {
      o += ostride[d];
      if (++idx[d] < x.shape[d]) break;
      o -= ostride[d] * x.shape[d];
      idx[d] = 0;
    }
  }
  const double count = static_cast<double>(x.num_elements()) / static_cast<double>(std::max<std::int64_t>(n_out, 1));
  Tensor y = alloc_f32(out);
  for (std::int64_t i = 0; i < n_out; ++i)
    mut<float>(y)[i] = static_cast<float>(kind == Reduce::Mean ? acc[i] / count : acc[i]);
  return {y};
}

}  // namespace

void register_reference_reduce(KernelRegistry& r) {
  r.add("ReduceMean", [](const KernelCall& c) { return reduce(Reduce::Mean, c); });
  r.add("ReduceSum", [](const KernelCall& c) { return reduce(Reduce::Sum, c); });
  r.add("ReduceMax", [](const KernelCall& c) { return reduce(Reduce::Max, c); });
  r.add("ReduceMin", [](const KernelCall& c) { return reduce(Reduce::Min, c); });
}

}  // namespace graphfuse::kernels
