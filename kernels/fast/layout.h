// NCHW <-> NHWC conversion of 4-D activations (the executor's channels-last mode).
#pragma once

#include <cstdint>

#include "graphfuse/kernels/kernel.h"

namespace graphfuse::kernels::fast {

/// Reorders n x c x h x w floats from one physical layout to the other.
void convert_layout(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t h,
                    std::int64_t w, Layout from, Layout to);
/// The same on a rank-4 float32 tensor; the logical (NCHW) shape is kept.
Tensor convert_layout(const Tensor& t, Layout from, Layout to);

}  // namespace graphfuse::kernels::fast
