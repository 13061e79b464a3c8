// The taps of a sliding window (convolution, pooling) over an H x W plane.
#pragma once

#include <cstdint>

namespace graphfuse::kernels {

/// Calls f(ih, iw, inside) for each tap (i, j) of output pixel (oh, ow)'s window, i major:
/// ih = oh * stride_h - pad_t + i * dil_h (likewise iw), inside when the tap lies in the
/// plane rather than the padding. P is any parameter struct with h, w, kh, kw, stride_h,
/// stride_w, dil_h, dil_w, pad_t and pad_l (ConvParams, PoolParams).
template <class P, class F>
inline void for_each_tap(const P& p, std::int64_t oh, std::int64_t ow, F&& f) {
  for (std::int64_t i = 0; i < p.kh; ++i) {
    const std::int64_t ih = oh * p.stride_h - p.pad_t + i * p.dil_h;
    const bool row_inside = ih >= 0 && ih < p.h;
    for (std::int64_t j = 0; j < p.kw; ++j) {
      const std::int64_t iw = ow * p.stride_w - p.pad_l + j * p.dil_w;
      f(ih, iw, row_inside && iw >= 0 && iw < p.w);
    }
  }
}

}  // namespace graphfuse::kernels
