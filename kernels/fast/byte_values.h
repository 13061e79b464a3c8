// The 256 possible values of an 8-bit tensor, for the fast kernels that tabulate a reference
// kernel's results (qlinear_lookup.cpp, qlinear_concat.cpp).
#pragma once

#include <string>

#include "graphfuse/attribute.h"

namespace graphfuse::kernels::fast {

/// A [256] tensor of `dtype` (uint8 or int8) whose element b has the byte b: run through a
/// reference kernel, its output element b is the result for the input byte b.
inline Tensor every_byte_value(DType dtype) {
  std::string bytes(256, '\0');
  for (int b = 0; b < 256; ++b) bytes[static_cast<std::size_t>(b)] = static_cast<char>(b);
  Tensor t;
  t.dtype = dtype;
  t.shape = {256};
  t.data = TensorBytes::own(std::move(bytes));
  return t;
}

}  // namespace graphfuse::kernels::fast
