// QLinearConv's integer products on oneDNN's int8 convolution (kernels/fast/int8_conv.cpp).
#pragma once

#include <cstdint>

#include "graphfuse/kernels/kernel.h"
#include "reference/quant_common.h"

namespace graphfuse::kernels::fast {

/// The convolution of QLinearConv `c` as exact int32 sums, sum (x - x_zp) * w per output
/// element, in NHWC order (acc[((n * out_h + oh) * out_w + ow) * c_out + m]), computed by a
/// oneDNN int8 primitive. Returns false, touching nothing, where that would not be exact or
/// oneDNN has no fast kernel: weights other than int8 with zero points 0, windows deep
/// enough to overflow int32, or an instruction set without VNNI (every convolution but a
/// depthwise one on a uint8 source: int8_conv.cpp says why).
/// The source x is read as NHWC bytes where c.layout(0) says ChannelsLast, else as NCHW.
bool int8_conv_sums(const KernelCall& c, const quant::QConv& q, std::int32_t* acc);

}  // namespace graphfuse::kernels::fast
