// Convolutions with small output planes as im2col + one GEMM (channels-last activations).
#pragma once

#include <memory>

#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels::fast {

/// Whether fast::conv2d runs `p` as im2col + GEMM: one group, channels-last source and
/// destination, a window of more than one tap, an output plane of at most 14x14, at least
/// 128 input and 64 output channels (resnet's 3x3 convolutions of the last two stages, where
/// oneDNN 2.6's direct AVX2 kernels reach 43-80 GFLOP/s and its GEMM 75-95).
/// Only where oneDNN's effective ISA is AVX2, where it was measured; GRAPHFUSE_CONV_GEMM=0
/// turns it off.
bool conv_as_gemm(const ConvParams& p);

/// y = act(conv(x, w) + b + z) for such a `p`: the windows copied into rows of
/// kh * kw * c_in floats (zeros for padding), times the weights as a [kh * kw * c_in, c_out]
/// matrix (copied once per weights owner, rows padded off multiples of 1 KiB) on oneDNN's
/// matmul, with bias, sum and activation as its post-ops.
void conv2d_gemm(const ConvParams& p, const float* x, const float* w, const float* b, const float* z, float* y,
                 const std::shared_ptr<const void>& weights_owner);

}  // namespace graphfuse::kernels::fast
