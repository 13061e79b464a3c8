// Broadcasting binary loops as contiguous rows: the output's dims are collapsed until each
// operand is, along the innermost dim, either contiguous or one repeated element, so the
// inner loop is a plain vectorizable loop (per-channel scales in NCHW and NHWC alike).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/util.h"

namespace graphfuse::kernels::fast {

/// The collapsed iteration space of y = f(a, b) over output shape ys: dims outermost first,
/// with each operand's element stride per dim (0 where it is broadcast).
struct BroadcastRows {
  std::vector<std::int64_t> dims, sa, sb;

  BroadcastRows(const Shape& as, const Shape& bs, const Shape& ys) {
    const auto fa = broadcast_strides(as, ys), fb = broadcast_strides(bs, ys);
    for (std::size_t d = 0; d < ys.size(); ++d) {
      if (ys[d] == 1) continue;  // contributes no index
      // Merge into the previous dim when both operands continue it (contiguously or as the
      // same repeated element): then the two dims are one.
      if (!dims.empty() && sa.back() == fa[d] * ys[d] && sb.back() == fb[d] * ys[d]) {
        dims.back() *= ys[d];
        sa.back() = fa[d];
        sb.back() = fb[d];
        continue;
      }
      dims.push_back(ys[d]);
      sa.push_back(fa[d]);
      sb.push_back(fb[d]);
    }
    if (dims.empty()) {  // one element
      dims = {1};
      sa = {0};
      sb = {0};
    }
  }

  std::int64_t inner() const { return dims.back(); }

  /// y[i] = f(a[..], b[..]) for output elements [begin, end) in row-major order.
  template <class F>
  void apply(const float* a, const float* b, float* y, std::int64_t begin, std::int64_t end, F f) const {
    const std::int64_t in = inner(), ia = sa.back(), ib = sb.back();
    const std::size_t outer_rank = dims.size() - 1;
    for (std::int64_t i = begin; i < end;) {
      const std::int64_t row = i / in, off = i % in, len = std::min(in - off, end - i);
      std::int64_t oa = off * ia, ob = off * ib, rest = row;
      for (std::size_t d = outer_rank; d-- > 0;) {
        const std::int64_t k = rest % dims[d];
        rest /= dims[d];
        oa += k * sa[d];
        ob += k * sb[d];
      }
      const float* ap = a + oa;
      const float* bp = b + ob;
      float* yp = y + i;
      if (ia == 1 && ib == 1) {
        for (std::int64_t k = 0; k < len; ++k) yp[k] = f(ap[k], bp[k]);
      } else if (ia == 1) {
        const float bv = *bp;
        for (std::int64_t k = 0; k < len; ++k) yp[k] = f(ap[k], bv);
      } else if (ib == 1) {
        const float av = *ap;
        for (std::int64_t k = 0; k < len; ++k) yp[k] = f(av, bp[k]);
      } else {
        const float v = f(*ap, *bp);
        for (std::int64_t k = 0; k < len; ++k) yp[k] = v;
      }
      i += len;
    }
  }
};

}  // namespace graphfuse::kernels::fast
