// Reference TF FusedBatchNorm / FusedBatchNormV3 at inference (is_training false), NHWC or NCHW.
#include <cmath>

#include "core/util.h"

namespace graphfuse::kernels {

namespace {

// y = (x - mean) / sqrt(var + eps) * scale + offset per channel; the channel is the last
// dim for NHWC (TF's default) and dim 1 for NCHW. Outputs after y (batch mean/variance,
// reserve spaces) are the given mean and variance, as TF returns them at inference.
std::vector<Tensor> fused_batch_norm(const KernelCall& c) {
  check(attr_int(c.attrs, "is_training", 0) == 0, "is_training is not supported (inference only)");
  const Tensor& x = c.required(0);
  check(x.shape.size() == 4, "FusedBatchNorm input must have rank 4, has " + shape_str(x.shape));
  const std::string format = attr_string(c.attrs, "data_format", "NHWC");
  check(format == "NHWC" || format == "NCHW", "data_format must be NHWC or NCHW, is " + format);
  const bool nhwc = format == "NHWC";
  const std::int64_t ch = nhwc ? x.shape[3] : x.shape[1];
  const char* names[] = {"scale", "offset", "mean", "variance"};
  const float* prm[4];
  for (int i = 0; i < 4; ++i) {
    const Tensor& t = c.required(1 + i);
    check(t.shape == Shape{ch}, std::string(names[i]) + " must have shape [" + std::to_string(ch) + "], has " +
                                    shape_str(t.shape));
    prm[i] = f32(t, names[i]);
  }
  const double eps = attr_float(c.attrs, "epsilon", 1e-3f);  // TF's default
  const float* xp = f32(x, "x");
  Tensor y = alloc_f32(x.shape);
  float* yp = mut<float>(y);
  const std::int64_t n = numel(x.shape);
  const std::int64_t plane = nhwc ? 1 : x.shape[2] * x.shape[3];
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t k = nhwc ? i % ch : (i / plane) % ch;
    const double inv = 1.0 / std::sqrt(static_cast<double>(prm[3][k]) + eps);
    yp[i] = static_cast<float>((xp[i] - static_cast<double>(prm[2][k])) * inv * prm[0][k] + prm[1][k]);
  }
  std::vector<Tensor> out{y};
  for (std::size_t k = 1; k < c.num_outputs; ++k) out.push_back(k % 2 ? c.required(3) : c.required(4));
  return out;
}

}  // namespace

void register_reference_tf_norm(KernelRegistry& r) {
  r.add("FusedBatchNorm", fused_batch_norm);
  r.add("FusedBatchNormV3", fused_batch_norm);
}

}  // namespace graphfuse::kernels
