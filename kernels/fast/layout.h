// NCHW <-> NHWC conversion of 4-D activations (the executor's channels-last mode).
#pragma once

#include <cstdint>

#include "graphfuse/kernels/kernel.h"

namespace graphfuse::kernels::fast {

/// Reorders n x c x h x w floats from one physical layout to the other.
void convert_layout(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t h,
                    std::int64_t w, Layout from, Layout to);
/// The same on a rank-4 float32, uint8 or int8 tensor; the logical (NCHW) shape is kept.
Tensor convert_layout(const Tensor& t, Layout from, Layout to);

/// Runs `kernel` (one that reads NCHW only) on `c` with its channels-last inputs converted
/// to NCHW: the way out for a ChannelsLast-capable kernel given a case it does not cover.
std::vector<Tensor> run_plain(const KernelFn& kernel, const KernelCall& c);

}  // namespace graphfuse::kernels::fast
