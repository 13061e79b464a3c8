// Output buffers for fast kernels that write every element: recycled, not zero-filled.
#pragma once

#include "core/util.h"

namespace graphfuse::kernels::fast {

/// A float32 tensor of `shape` whose bytes are NOT initialized: only for kernels that
/// write every output element (oneDNN convolution, pooling, matmul, elementwise maps).
/// Buffers of 4 KiB and more are recycled when the last Tensor sharing them dies
/// (core/util.h alloc_unfilled).
/// Debug builds (no NDEBUG) fill the buffer with NaN, so an element a kernel missed
/// shows up in the fast-vs-reference tests instead of a stale, plausible value.
Tensor alloc_output_f32(Shape shape);

}  // namespace graphfuse::kernels::fast
