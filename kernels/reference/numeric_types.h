// Element-type dispatch and conversions for the reference kernels that accept every
// numeric ONNX type (Cast, the binary arithmetic ops, Neg): one template instantiated per
// C++ type, float16 / bfloat16 carried as their bit patterns and converted through float.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/util.h"

namespace graphfuse::kernels {

/// IEEE half / bfloat16 bit patterns, distinct types so dispatch can tell them apart.
struct Half {
  std::uint16_t bits;
};
struct BF16 {
  std::uint16_t bits;
};

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal half: a normal float
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// float -> half, round to nearest even; overflow gives inf, NaN stays NaN.
inline std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Scale to units of 2^-24 and round to nearest even in float arithmetic (exact: the
    // value times 2^24 is below 2^10, well inside float's 24-bit precision for the halfway test).
    float a;
    std::memcpy(&a, &abs, 4);
    const float scaled = a * 16777216.0f;  // 2^24
    const float r = std::nearbyint(scaled);  // default rounding: to nearest even
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(r));
  }
  const std::uint32_t mant = abs & 0x7fffffu;
  const std::uint32_t exp = (abs >> 23) - 112;
  std::uint32_t h = (exp << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carries into the exponent correctly
  return static_cast<std::uint16_t>(sign | h);
}

inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// float -> bfloat16, round to nearest even (ONNX Runtime's BFloat16(float)); NaN stays NaN.
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

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
