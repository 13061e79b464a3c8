// MaxPool over channels-last float32 activations, without oneDNN.
#pragma once

#include "core/pool_ops.h"

namespace graphfuse::kernels::fast {

/// y = MaxPool(x) for x [N, H, W, C] and y [N, OH, OW, C] (channels-last storage of the
/// NCHW shapes in `p`): any window, strides, dilations and pads, the output size `p` gives
/// (ceil_mode's overhang clipped like padding). Padding never wins, a window wholly in it
/// gives -inf, and a NaN input is passed over, as in the reference loop; the result is
/// bit-identical to it (a maximum involves no rounding), for any thread count.
void max_pool_nhwc(const PoolParams& p, const float* x, float* y);

}  // namespace graphfuse::kernels::fast
