// Vectorized exp, logistic, tanh, erf, GELU and swish. One implementation, written on GCC
// vector types of any width, instantiated inside functions compiled for AVX-512, AVX2+FMA and
// SSE2; the width is picked once per process from oneDNN's effective ISA.
//
// The helpers take and return vectors by reference and are always inlined: a vector wider than
// the baseline ISA passed by value would change the calling convention (GCC's -Wpsabi), and an
// out-of-line generic helper would run the wide type on SSE registers.
//
// Polynomial coefficients are least-squares fits (iteratively reweighted towards minimax) on
// Chebyshev nodes, made for this file; their errors are noted with each.
#include "fast/vmath.h"

#include <cstdint>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>

namespace graphfuse::kernels::fast::vmath {

namespace {

#define GF_INLINE [[gnu::always_inline]] inline

template <int W>
struct Vec {
  typedef float F __attribute__((vector_size(W * 4)));
  typedef std::int32_t I __attribute__((vector_size(W * 4)));
};

template <class F, class I>
struct Ops {
  GF_INLINE static void splat(F& v, float s) {
    v = F{} + s;
  }
  GF_INLINE static void abs(const F& x, F& a) { a = reinterpret_cast<F>(reinterpret_cast<I>(x) & 0x7fffffff); }
  // v takes the sign of s (v must be non-negative).
  GF_INLINE static void copysign(F& v, const F& s) {
    v = reinterpret_cast<F>(reinterpret_cast<I>(v) | (reinterpret_cast<I>(s) & static_cast<std::int32_t>(0x80000000u)));
  }

  // e^x = 2^n e^r with x = n ln2 + r, |r| <= ln2/2 (ln2 split in two for an exact n ln2_hi);
  // e^r by a degree-6 polynomial (relative error 1.9e-9 on that interval). Takes x clamped
  // to [-87.3, 88.8]; gives n and e^r.
  GF_INLINE static void reduce(const F& x, I& n, F& p) {
    const F magic = F{} + 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
    const F nf = (x * 1.44269504088896341f + magic) - magic;
    F r = x - nf * 0.693145751953125f;
    r = r - nf * 1.42860682030941723e-6f;
    p = F{} + 1.3829529e-03f;
    p = p * r + 8.374779e-03f;
    p = p * r + 4.1668355e-02f;
    p = p * r + 1.6666421e-01f;
    p = p * r + 4.999999e-01f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    n = __builtin_convertvector(nf, I);
  }

  // e^x for the functions built on it. x is clamped to [-87.3, 88.7], so n is in [-126, 128]
  // and 2^n is one exponent field (n = 128 is the bit pattern of inf: the result overflows
  // to inf from x = 88.38, a little before float's own limit of 88.72). Below -87.3 it gives
  // e^-87.3 (1.2e-38), never a subnormal: subnormal results would cost a microcode assist
  // per element on many cores. One scale and no select make swish 30% faster than with
  // exp() below; the callers need neither end exactly (1 / (1 + e^-x) is 1 either way, and
  // softmax selects its zeros itself). NaN is kept: every comparison with NaN is false.
  GF_INLINE static void exp_core(F& x) {
    x = x < -87.3f ? F{} - 87.3f : x;
    x = x > 88.7f ? F{} + 88.7f : x;
    I n;
    F p;
    reduce(x, n, p);
    x = p * reinterpret_cast<F>((n + 127) << 23);
  }

  // e^x over float's whole range: 2^n applied in two halves so that n = 128 stays within
  // normal exponents (overflow to inf above 88.72); 0 below ln(FLT_MIN) (an absolute error
  // under 1.2e-38) instead of a subnormal.
  GF_INLINE static void exp(F& x) {
    const F in = x;
    x = x < -87.0f ? F{} - 87.0f : x;
    x = x > 88.8f ? F{} + 88.8f : x;
    I n;
    F p;
    reduce(x, n, p);
    const I n1 = n >> 1;
    const I n2 = n - n1;
    x = p * reinterpret_cast<F>((n1 + 127) << 23) * reinterpret_cast<F>((n2 + 127) << 23);
    x = in < -87.33654475f ? F{} : x;
  }

  GF_INLINE static void logistic(F& x) {
    F e = F{} - x;
    exp_core(e);
    x = 1.0f / (1.0f + e);
  }

  // tanh: x * P(x^2) below 0.625 (relative error 4.3e-9), else 1 - 2 / (e^{2|x|} + 1).
  GF_INLINE static void tanh(F& x) {
    F a;
    abs(x, a);
    const F u = x * x;
    F p = F{} - 5.6961817e-03f;
    p = p * u + 2.0628849e-02f;
    p = p * u - 5.373529e-02f;
    p = p * u + 1.3331355e-01f;
    p = p * u - 3.3333275e-01f;
    p = p * u + 1.0f;
    const F small = x * p;
    F e = a + a;
    exp_core(e);
    F big = 1.0f - 2.0f / (e + 1.0f);
    copysign(big, x);
    x = a < 0.625f ? small : big;
  }

  // For |x| < 1: erf(x) / x = P(x^2) (relative error 1.3e-9).
  GF_INLINE static void erf_small(const F& x, F& y) {
    const F u = x * x;
    F p = F{} + 7.89661426e-05f;
    p = p * u - 8.02382943e-04f;
    p = p * u + 5.18998737e-03f;
    p = p * u - 2.68547684e-02f;
    p = p * u + 1.12836115e-01f;
    p = p * u - 3.76126289e-01f;
    p = p * u + 1.12837923e+00f;
    y = x * p;
  }

  // For 1 <= a < 3.92: erfc(a) = e^{-a^2} G(1/a) (G relative error 1.5e-8); above 3.92,
  // erfc(a) is below half an ulp of 1, and 0 is returned.
  GF_INLINE static void erfc_big(const F& a, F& y) {
    const F t = 1.0f / a;
    F g = F{} + 3.0740824e-02f;
    g = g * t - 1.7969793e-01f;
    g = g * t + 4.3776193e-01f;
    g = g * t - 5.3561252e-01f;
    g = g * t + 2.3653206e-01f;
    g = g * t + 2.3180611e-01f;
    g = g * t - 3.7653583e-01f;
    g = g * t + 2.0728098e-02f;
    g = g * t + 5.6173778e-01f;
    g = g * t + 1.2307891e-04f;
    F e = F{} - a * a;
    exp_core(e);
    y = e * g;
    y = a >= 3.92f ? F{} : y;
  }

  GF_INLINE static void erf(F& x) {
    F a, small, big;
    abs(x, a);
    erf_small(x, small);
    erfc_big(a, big);
    big = 1.0f - big;
    copysign(big, x);
    x = a < 1.0f ? small : big;
  }

  // 0.5 x (1 + erf(z)), z = x / sqrt 2; for z <= -1, 1 + erf(z) is erfc(|z|) itself, so
  // the left tail keeps its relative accuracy instead of cancelling.
  GF_INLINE static void gelu(F& x) {
    const F z = x * 0.70710678118654752f;
    F a, small, tail;
    abs(z, a);
    erf_small(z, small);
    erfc_big(a, tail);
    const F one_plus = a < 1.0f ? 1.0f + small : (z < 0.0f ? tail : 2.0f - tail);
    x = 0.5f * x * one_plus;
  }

  // 0.5 x (1 + tanh(v)) = x logistic(2 v), which has no cancellation for negative x.
  GF_INLINE static void gelu_tanh(F& x) {
    F v = 1.5957691216057308f * (x + 0.044715f * x * x * x);  // 2 sqrt(2 / pi) (x + 0.044715 x^3)
    logistic(v);
    x = x * v;
  }

  GF_INLINE static void swish(F& x, float alpha) {
    F s = x * alpha;
    logistic(s);
    x = x * s;
  }

  template <Fn f>
  GF_INLINE static void one(F& v, float alpha) {
    if constexpr (f == Fn::Exp) exp(v);
    else if constexpr (f == Fn::Logistic) logistic(v);
    else if constexpr (f == Fn::Tanh) tanh(v);
    else if constexpr (f == Fn::Erf) erf(v);
    else if constexpr (f == Fn::Gelu) gelu(v);
    else if constexpr (f == Fn::GeluTanh) gelu_tanh(v);
    else swish(v, alpha);
  }

  // The array in whole vectors; the tail through a zero-padded vector, computed by the same
  // instructions, so an element's result does not depend on where the caller's chunk ends.
  template <Fn f>
  GF_INLINE static void loop(const float* x, float* y, std::int64_t n, float alpha) {
    constexpr std::int64_t W = sizeof(F) / sizeof(float);
    std::int64_t i = 0;
    for (; i + W <= n; i += W) {
      F v;
      std::memcpy(&v, x + i, sizeof v);
      one<f>(v, alpha);
      std::memcpy(y + i, &v, sizeof v);
    }
    if (i < n) {
      float buf[W] = {};
      const auto bytes = static_cast<std::size_t>(n - i) * sizeof(float);
      std::memcpy(buf, x + i, bytes);
      F v;
      std::memcpy(&v, buf, sizeof v);
      one<f>(v, alpha);
      std::memcpy(buf, &v, sizeof v);
      std::memcpy(y + i, buf, bytes);
    }
  }

  // exp for softmax: exp_core, with exact zeros below ln(FLT_MIN) (masked keys stay 0).
  GF_INLINE static void exp_masked(F& v) {
    const F in = v;
    exp_core(v);
    v = in < -87.33654475f ? F{} : v;
  }

  // One softmax row: the max, exp(x - max) summed, the scale; the tail's padding lanes are
  // -inf, so they add exp(-inf) = 0 and the sum does not depend on the row's length mod W.
  GF_INLINE static void softmax(const float* x, float* y, std::int64_t n) {
    constexpr std::int64_t W = sizeof(F) / sizeof(float);
    const float ninf = -__builtin_inff();
    F m;
    splat(m, ninf);
    std::int64_t i = 0;
    for (; i + W <= n; i += W) {
      F v;
      std::memcpy(&v, x + i, sizeof v);
      m = v > m ? v : m;
    }
    float mx = ninf;
    for (std::int64_t k = 0; k < W; ++k) mx = m[k] > mx ? m[k] : mx;
    for (std::int64_t k = i; k < n; ++k) mx = x[k] > mx ? x[k] : mx;
    F s = F{};
    for (i = 0; i + W <= n; i += W) {
      F v;
      std::memcpy(&v, x + i, sizeof v);
      v = v - mx;
      exp_masked(v);
      s += v;
      std::memcpy(y + i, &v, sizeof v);
    }
    if (i < n) {
      float buf[W];
      for (std::int64_t k = 0; k < W; ++k) buf[k] = ninf;
      const auto bytes = static_cast<std::size_t>(n - i) * sizeof(float);
      std::memcpy(buf, x + i, bytes);
      F v;
      std::memcpy(&v, buf, sizeof v);
      v = v - mx;
      exp_masked(v);
      s += v;
      std::memcpy(buf, &v, sizeof v);
      std::memcpy(y + i, buf, bytes);
    }
    float sum = 0.0f;
    for (std::int64_t k = 0; k < W; ++k) sum += s[k];
    const float inv = 1.0f / sum;
    for (i = 0; i + W <= n; i += W) {
      F v;
      std::memcpy(&v, y + i, sizeof v);
      v = v * inv;
      std::memcpy(y + i, &v, sizeof v);
    }
    for (; i < n; ++i) y[i] *= inv;
  }

  GF_INLINE static void run(Fn f, const float* x, float* y, std::int64_t n, float alpha) {
    switch (f) {
      case Fn::Exp: return loop<Fn::Exp>(x, y, n, alpha);
      case Fn::Logistic: return loop<Fn::Logistic>(x, y, n, alpha);
      case Fn::Tanh: return loop<Fn::Tanh>(x, y, n, alpha);
      case Fn::Erf: return loop<Fn::Erf>(x, y, n, alpha);
      case Fn::Gelu: return loop<Fn::Gelu>(x, y, n, alpha);
      case Fn::GeluTanh: return loop<Fn::GeluTanh>(x, y, n, alpha);
      case Fn::Swish: return loop<Fn::Swish>(x, y, n, alpha);
    }
  }
};

#undef GF_INLINE

__attribute__((target("avx512f,fma"))) void run_avx512(Fn f, const float* x, float* y, std::int64_t n, float alpha) {
  Ops<Vec<16>::F, Vec<16>::I>::run(f, x, y, n, alpha);
}

__attribute__((target("avx2,fma"))) void run_avx2(Fn f, const float* x, float* y, std::int64_t n, float alpha) {
  Ops<Vec<8>::F, Vec<8>::I>::run(f, x, y, n, alpha);
}

void run_sse2(Fn f, const float* x, float* y, std::int64_t n, float alpha) {
  Ops<Vec<4>::F, Vec<4>::I>::run(f, x, y, n, alpha);
}

__attribute__((target("avx512f,fma"))) void softmax_avx512(const float* x, float* y, std::int64_t n) {
  Ops<Vec<16>::F, Vec<16>::I>::softmax(x, y, n);
}

__attribute__((target("avx2,fma"))) void softmax_avx2(const float* x, float* y, std::int64_t n) {
  Ops<Vec<8>::F, Vec<8>::I>::softmax(x, y, n);
}

void softmax_sse2(const float* x, float* y, std::int64_t n) { Ops<Vec<4>::F, Vec<4>::I>::softmax(x, y, n); }

enum class Level { Sse2, Avx2, Avx512 };

Level detect() {
  using dnnl::cpu_isa;
  const cpu_isa isa = dnnl::get_effective_cpu_isa();
  const bool avx512 = isa == cpu_isa::avx512_core || isa == cpu_isa::avx512_core_vnni ||
                      isa == cpu_isa::avx512_core_bf16 || isa == cpu_isa::avx512_core_amx;
  const bool avx2 = avx512 || isa == cpu_isa::avx2 || isa == cpu_isa::avx2_vnni;
  __builtin_cpu_init();
  if (avx512 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return Level::Avx512;
  if (avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Level::Avx2;
  return Level::Sse2;
}

Level level() {
  static const Level l = detect();
  return l;
}

}  // namespace

void apply(Fn f, const float* x, float* y, std::int64_t n, float alpha) {
  if (n <= 0) return;
  switch (level()) {
    case Level::Avx512: return run_avx512(f, x, y, n, alpha);
    case Level::Avx2: return run_avx2(f, x, y, n, alpha);
    case Level::Sse2: return run_sse2(f, x, y, n, alpha);
  }
}

void softmax_row(const float* x, float* y, std::int64_t n) {
  if (n <= 0) return;
  switch (level()) {
    case Level::Avx512: return softmax_avx512(x, y, n);
    case Level::Avx2: return softmax_avx2(x, y, n);
    case Level::Sse2: return softmax_sse2(x, y, n);
  }
}

const char* isa() {
  switch (level()) {
    case Level::Avx512: return "avx512";
    case Level::Avx2: return "avx2";
    case Level::Sse2: return "sse2";
  }
  return "sse2";
}

}  // namespace graphfuse::kernels::fast::vmath
