// Reference pooling: each output element scans its window.
#include <algorithm>
#include <limits>

#include "core/pool_ops.h"

namespace graphfuse::kernels {

namespace reference {
void pool2d(const PoolParams& p, const float* x, float* y) {
  check(!p.src_channels_last && !p.dst_channels_last, "reference pooling takes plain layouts only");
  for (std::int64_t plane = 0; plane < p.n * p.c; ++plane) {
    const float* xp = x + plane * p.h * p.w;
    float* yp = y + plane * p.out_h * p.out_w;
    for (std::int64_t oh = 0; oh < p.out_h; ++oh)
      for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
        double acc = p.max ? -std::numeric_limits<double>::infinity() : 0.0;
        std::int64_t valid = 0, padded = 0;
        for (std::int64_t ky = 0; ky < p.kh; ++ky) {
          const std::int64_t ih = oh * p.stride_h - p.pad_t + ky * p.dil_h;
          for (std::int64_t kx = 0; kx < p.kw; ++kx) {
            const std::int64_t iw = ow * p.stride_w - p.pad_l + kx * p.dil_w;
            // Positions in the explicit padding count for count_include_pad; positions
            // past it (ceil_mode overhang) never do.
            if (ih < p.h + p.pad_b && iw < p.w + p.pad_r) ++padded;
            if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
            ++valid;
            const double v = xp[ih * p.w + iw];
            acc = p.max ? std::max(acc, v) : acc + v;
          }
        }
        if (!p.max) acc /= static_cast<double>(std::max<std::int64_t>(1, p.count_include_pad ? padded : valid));
        yp[oh * p.out_w + ow] = static_cast<float>(acc);
      }
  }
}
}  // namespace reference

void register_reference_pool(KernelRegistry& r) { register_pool_ops(r, reference::pool2d, false); }

}  // namespace graphfuse::kernels
