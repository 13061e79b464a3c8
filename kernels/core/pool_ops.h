// Node-level pooling (MaxPool, AveragePool, GlobalAveragePool) shared by both kernel sets.
#pragma once

#include "core/util.h"

namespace graphfuse::kernels {

/// A resolved 2-D pooling over an NCHW tensor.
struct PoolParams {
  bool max = true;  ///< MaxPool, else AveragePool
  bool count_include_pad = false;
  std::int64_t n = 1, c = 0, h = 0, w = 0;
  std::int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  std::int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  std::int64_t out_h = 0, out_w = 0;
  /// Fast kernels only: x / y are physically NHWC.
  bool src_channels_last = false, dst_channels_last = false;
};

/// A raw pooling implementation (reference or fast): x [N, C, H, W] -> y [N, C, OH, OW].
using PoolImpl = void (*)(const PoolParams&, const float* x, float* y);

namespace reference {
/// The reference pooling loop (also the fast set's fallback for what oneDNN lacks).
void pool2d(const PoolParams& p, const float* x, float* y);
}  // namespace reference

/// Registers MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool through `impl`;
/// with channels_last they declare LayoutSupport::ChannelsLast.
void register_pool_ops(KernelRegistry& r, PoolImpl impl, bool channels_last);

}  // namespace graphfuse::kernels
