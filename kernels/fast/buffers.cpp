// Output buffers of the fast kernels that write every element: core/util.cpp's pool that
// skips the zero fill (see alloc_unfilled).
#include "fast/buffers.h"

namespace graphfuse::kernels::fast {

Tensor alloc_output_f32(Shape shape) { return alloc_unfilled(DType::Float32, std::move(shape)); }

}  // namespace graphfuse::kernels::fast
