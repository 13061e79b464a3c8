// IEEE half and bfloat16 <-> float32, as the formats (text values, TF.js weights), the
// constant facts and the kernels (Cast, arithmetic over every type) read and write them.
// Inline: the kernels convert per element.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace graphfuse {

/// IEEE half -> float32, exactly (every half is a float; a NaN keeps its payload).
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal half: a normal float
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// float32 -> IEEE half, rounding to nearest even, so a float that came from a half gives
/// the same bits back; overflow gives inf, a NaN stays a (quiet) NaN with its payload's top bits.
inline std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // In units of 2^-24 the value is below 2^10, so float's 24-bit precision makes the
    // round-to-nearest-even of nearbyint exact.
    float a;
    std::memcpy(&a, &abs, 4);
    const float r = std::nearbyint(a * 16777216.0f);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(r));
  }
  const std::uint32_t mant = abs & 0x7fffffu;
  const std::uint32_t exp = (abs >> 23) - 112;
  std::uint32_t h = (exp << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent correctly
  return static_cast<std::uint16_t>(sign | h);
}

/// bfloat16 -> float32, exactly.
inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// float32 -> bfloat16, rounding to nearest even (a NaN stays a quiet NaN).
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

}  // namespace graphfuse
