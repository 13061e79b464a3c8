// Numpy-broadcast iteration over a range of output elements (shared by both kernel sets).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/util.h"

namespace graphfuse::kernels {

/// y[i] = f(a[..], b[..]) for output elements [begin, end) of shape ys, where a and b
/// broadcast to ys. Walking a multi-index keeps the two source offsets without divisions
/// in the loop; a range may start anywhere so callers can split the work. Adjacent dims
/// that step both sources alike are merged first (a weight [O, I, kh, kw] times a scale
/// [O, 1, 1, 1] walks as [O, I*kh*kw]), so the inner loop runs along whole rows; every
/// element is still f of the same two operands, in the same order.
template <class T, class U, class F>
void broadcast_apply(const T* a, const Shape& as, const T* b, const Shape& bs, U* y,
                     const Shape& ys, std::int64_t begin, std::int64_t end, F f) {
  // An empty range (an empty output: some dim of ys is 0) has nothing to place, and the
  // start index below would be taken modulo that 0 (caught by UBSan in the hostile sweep).
  if (begin >= end) return;
  const auto sa_full = broadcast_strides(as, ys), sb_full = broadcast_strides(bs, ys);
  // Merged dims, outermost first; size-1 dims step nothing and are left out.
  std::vector<std::int64_t> dims, sa, sb;
  for (std::size_t d = 0; d < ys.size(); ++d) {
    if (ys[d] == 1) continue;
    if (!dims.empty() && sa.back() == sa_full[d] * ys[d] && sb.back() == sb_full[d] * ys[d]) {
      dims.back() *= ys[d];
      sa.back() = sa_full[d];
      sb.back() = sb_full[d];
      continue;
    }
    dims.push_back(ys[d]);
    sa.push_back(sa_full[d]);
    sb.push_back(sb_full[d]);
  }
  if (dims.empty()) {  // a single element
    y[begin] = f(a[0], b[0]);
    return;
  }
  const std::size_t rank = dims.size();
  std::vector<std::int64_t> idx(rank, 0);
  std::int64_t ia = 0, ib = 0, rest = begin;
  for (std::size_t d = rank; d-- > 0;) {
    idx[d] = rest % dims[d];
    rest /= dims[d];
    ia += idx[d] * sa[d];
    ib += idx[d] * sb[d];
  }
  const std::int64_t inner = dims[rank - 1], ja = sa[rank - 1], jb = sb[rank - 1];
  for (std::int64_t i = begin; i < end;) {
    const std::int64_t n = std::min(end - i, inner - idx[rank - 1]);
    if (ja == 1 && jb == 1) {
      for (std::int64_t k = 0; k < n; ++k) y[i + k] = f(a[ia + k], b[ib + k]);
    } else if (ja == 1 && jb == 0) {
      for (std::int64_t k = 0; k < n; ++k) y[i + k] = f(a[ia + k], b[ib]);
    } else if (ja == 0 && jb == 1) {
      for (std::int64_t k = 0; k < n; ++k) y[i + k] = f(a[ia], b[ib + k]);
    } else {
      for (std::int64_t k = 0; k < n; ++k) y[i + k] = f(a[ia + k * ja], b[ib + k * jb]);
    }
    i += n;
    ia += n * ja;
    ib += n * jb;
    idx[rank - 1] += n;
    // Carry into the outer dims once the row is done.
    for (std::size_t d = rank; d-- > 0;) {
      if (idx[d] < dims[d]) break;
      ia -= sa[d] * dims[d];
      ib -= sb[d] * dims[d];
      idx[d] = 0;
      if (d == 0) break;
      ia += sa[d - 1];
      ib += sb[d - 1];
      ++idx[d - 1];
    }
  }
}

/// The binary arithmetic ops and their scalar definitions (Max and Min: the folds of the
/// variadic Max / Min; a NaN operand gives NaN, as std::max of IEEE compares would not).
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Max, Min };

/// "Add" -> BinaryOp::Add etc.
BinaryOp binary_op_from_name(std::string_view op);

template <class T>
inline T binary_scalar(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Pow:
      return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    case BinaryOp::Max: return a != a ? a : (b > a || b != b ? b : a);
    case BinaryOp::Min: return a != a ? a : (b < a || b != b ? b : a);
  }
  return a;
}

/// int64 (shape arithmetic): two's-complement wrap-around as numpy does, since values from
/// a file may overflow and signed overflow is undefined; INT64_MIN / -1 would trap like a
/// division by zero. Pow saturates to the int64 range. (A 0 divisor is the caller's check.)
template <>
inline std::int64_t binary_scalar<std::int64_t>(BinaryOp op, std::int64_t a, std::int64_t b) {
  using U = std::uint64_t;
  switch (op) {
    case BinaryOp::Add: return static_cast<std::int64_t>(static_cast<U>(a) + static_cast<U>(b));
    case BinaryOp::Sub: return static_cast<std::int64_t>(static_cast<U>(a) - static_cast<U>(b));
    case BinaryOp::Mul: return static_cast<std::int64_t>(static_cast<U>(a) * static_cast<U>(b));
    case BinaryOp::Div: return b == -1 ? static_cast<std::int64_t>(U{0} - static_cast<U>(a)) : a / b;
    case BinaryOp::Pow: {
      const double r = std::pow(static_cast<double>(a), static_cast<double>(b));
      if (std::isnan(r)) return 0;
      if (r >= 9223372036854775807.0) return INT64_MAX;
      if (r <= -9223372036854775808.0) return INT64_MIN;
      return static_cast<std::int64_t>(r);
    }
    case BinaryOp::Max: return a < b ? b : a;
    case BinaryOp::Min: return b < a ? b : a;
  }
  return a;
}

/// The unary math ops of the elementwise family and their scalar definitions.
enum class UnaryOp { Sqrt, Erf, Exp, Neg, Abs, Reciprocal, Gelu, GeluTanh, QuickGelu };
float unary_scalar(UnaryOp op, float x, float alpha);

}  // namespace graphfuse::kernels
