// MaxPool and AveragePool over channels-last float32 activations, without oneDNN.
#pragma once

#include "core/pool_ops.h"

namespace graphfuse::kernels::fast {

/// y = MaxPool(x) or AveragePool(x) (p.max) for x [N, H, W, C] and y [N, OH, OW, C]
/// (channels-last storage of the NCHW shapes in `p`): any window, strides, dilations and
/// pads, the output size `p` gives (ceil_mode's overhang clipped like padding; global
/// pooling is the window of the whole plane). As the reference loop: for max, padding never
/// wins, a window wholly in it gives -inf and a NaN input is passed over, and the result is
/// bit-identical to the reference's; for average, the window's sum is divided by the taps
/// inside the image, or with count_include_pad by those inside the explicit pads (never the
/// overhang), summed in float where the reference sums in double. Any thread count gives the
/// same bytes (each output element is one work item's).
void pool_nhwc(const PoolParams& p, const float* x, float* y);

}  // namespace graphfuse::kernels::fast
