// Element-type dispatch and conversions for the reference kernels that accept every
// numeric ONNX type (Cast, the binary arithmetic ops, Neg): one template instantiated per
// C++ type, float16 / bfloat16 carried as their bit patterns and converted through float.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/util.h"
#include "graphfuse/float16.h"

namespace graphfuse::kernels {

/// IEEE half / bfloat16 bit patterns, distinct types so dispatch can tell them apart.
struct Half {
  std::uint16_t bits;
};
struct BF16 {
  std::uint16_t bits;
};

using graphfuse::bf16_to_float;
using graphfuse::float_to_bf16;
using graphfuse::float_to_half;
using graphfuse::half_to_float;

/// Calls f(T{}) with T the C++ type holding `dt`'s elements (Half / BF16 for the 16-bit
/// floats, bool for Bool); throws for String / Undefined / float8.
template <class F>
decltype(auto) dispatch_numeric(DType dt, const std::string& what, F&& f) {
  switch (dt) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int8: return f(std::int8_t{});
    case DType::Int16: return f(std::int16_t{});
    case DType::Int32: return f(std::int32_t{});
    case DType::Int64: return f(std::int64_t{});
    case DType::UInt8: return f(std::uint8_t{});
    case DType::UInt16: return f(std::uint16_t{});
    case DType::UInt32: return f(std::uint32_t{});
    case DType::UInt64: return f(std::uint64_t{});
    case DType::Bool: return f(bool{});
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BF16{});
    default: break;
  }
  fail(what + ": element type " + std::string(dtype_name(dt)) + " is not supported");
}

}  // namespace graphfuse::kernels
