// What the two fast convolution paths (oneDNN's direct primitive, conv.cpp; im2col + GEMM,
// conv_gemm.cpp) share: the caller's weight layout as oneDNN sees it, the cache key, and
// the shape as the implementation log writes it.
#pragma once

#include <string>

#include "fast/dnnl_common.h"
#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels::fast {

/// The user's weight buffer described as oneDNN's (g, o, i, h, w) or (o, i, h, w) dims with
/// explicit strides, for either OIHW or HWIO storage.
dnnl::memory::desc user_weights_desc(const ConvParams& p);

/// Every field that shapes a primitive for `p`, as raw bytes, with the OpenMP thread count.
std::string conv_key(const ConvParams& p);

/// The shape as oneDNN's verbose log writes it ("mb1_ic64oc64_ih56oh56kh3sh1ph1_...").
std::string conv_shape_text(const ConvParams& p);

}  // namespace graphfuse::kernels::fast
