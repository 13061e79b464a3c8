// The fast set's QLinearConv. First choice: oneDNN's int8 convolution for the exact int32
// sums (kernels/fast/int8_conv.cpp says when it is exact), reading and, in the executor's
// channels-last mode, writing NHWC, then the vector requantization of quant_loops.cpp.
// Otherwise the portable loops below, on NCHW: windows of 32 taps or more (K = c_in/group *
// kh * kw) as im2col of (x - x_zero_point) in int16 rows, one per output position, times
// (w - w_zero_point[m]) through kernels/core/int16_gemm.h (pairwise multiply-adds in int32
// lanes, 4 x 4 output tiles); narrower windows (depthwise 3 x 3) as an int32 product whose
// inner loop runs over contiguous output positions, output channels in parallel. Every path
// computes each output element as one exact integer sum (no task splits it) and requantizes
// it with the reference kernel's expression (kernels/reference/quant.cpp), so the result is
// the same for any thread count, instruction set and path, and both sets give the same
// integers.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "core/int16_gemm.h"
#include "core/util.h"
#include "fast/int8_conv.h"
#include "fast/layout.h"
#include "fast/parallelism.h"
#include "fast/quant_loops.h"
#include "graphfuse/kernels/conv.h"
#include "reference/quant_common.h"

namespace graphfuse::kernels {

namespace {

using namespace quant;

// Elements of a uint8 / int8 tensor minus a zero point, as int32.
std::vector<std::int32_t> centred(const Tensor& t, std::int64_t zp) {
  const std::int64_t n = t.num_elements();
  std::vector<std::int32_t> out(static_cast<std::size_t>(n));
  if (t.dtype == DType::UInt8) {
    const auto* p = t.as<std::uint8_t>();
    for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(p[i]) - static_cast<std::int32_t>(zp);
  } else {
    const auto* p = t.as<std::int8_t>();
    for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(p[i]) - static_cast<std::int32_t>(zp);
  }
  return out;
}

std::vector<Tensor> qlinear_conv(const KernelCall& c) {
  const Tensor &x = c.required(0), &w = c.required(3);
  const QConv q = read_qconv(c);
  const ConvParams& p = q.p;
  const Tensor* b = q.bias;
  const DType out = q.out;
  const std::int64_t lo = q.lo, hi = q.hi, xz = q.xz, yzv = q.yz;

  const std::int64_t cin_g = p.c_in / p.group, cout_g = p.c_out / p.group;
  const std::int64_t K = cin_g * p.kh * p.kw, P = p.out_h * p.out_w;
  std::vector<float> scale(static_cast<std::size_t>(p.c_out));
  for (std::int64_t m = 0; m < p.c_out; ++m) scale[static_cast<std::size_t>(m)] = q.scale(c, m);

  // oneDNN's int8 primitive where it is exact and fast. The vector requantization needs
  // finite scales and |sum + bias| within int32 (|sum| <= K * 255 * 128).
  const std::int32_t* bias = b ? b->as<std::int32_t>() : nullptr;
  std::int64_t max_bias = 0;
  for (std::int64_t m = 0; bias && m < p.c_out; ++m) max_bias = std::max<std::int64_t>(max_bias, std::abs(std::int64_t{bias[m]}));
  const bool vector_requant = std::all_of(scale.begin(), scale.end(), [](float v) { return std::isfinite(v); }) &&
                              K * 255 * 128 + max_bias <= std::numeric_limits<std::int32_t>::max();
  if (vector_requant) {
    Tensor sums = alloc_unfilled(DType::Int32, {p.n * P * p.c_out});
    if (fast::int8_conv_sums(c, q, mut<std::int32_t>(sums))) {
      Tensor y = alloc_unfilled(out, p.output_shape());
      const std::int32_t* s = sums.as<std::int32_t>();
      if (c.prefer_channels_last) {
        // The executor keeps quantized activations NHWC between convolutions: no transpose.
        if (out == DType::UInt8)
          fast::requantize_rows(s, bias, scale.data(), yzv, lo, hi, p.n * P, p.c_out, mut<std::uint8_t>(y));
        else
          fast::requantize_rows(s, bias, scale.data(), yzv, lo, hi, p.n * P, p.c_out, mut<std::int8_t>(y));
        c.out_layout = Layout::ChannelsLast;
      } else if (out == DType::UInt8) {
        fast::requantize_nhwc_to_nchw(s, bias, scale.data(), yzv, lo, hi, p.n, P, p.c_out, mut<std::uint8_t>(y));
      } else {
        fast::requantize_nhwc_to_nchw(s, bias, scale.data(), yzv, lo, hi, p.n, P, p.c_out, mut<std::int8_t>(y));
      }
      return {y};
    }
  }
  // The loops below read NCHW.
  if (c.layout(0) == Layout::ChannelsLast) return fast::run_plain(qlinear_conv, c);
  Tensor y = alloc(out, p.output_shape());

  // Weights minus their per-channel zero points, [c_out][K].
  std::vector<std::int32_t> wc(static_cast<std::size_t>(p.c_out * K));
  for (std::int64_t m = 0; m < p.c_out; ++m) {
    const std::int64_t wz = param_z(c.input(5), m);
    for (std::int64_t k = 0; k < K; ++k) wc[static_cast<std::size_t>(m * K + k)] = static_cast<std::int32_t>(int_at(w, m * K + k) - wz);
  }

  const std::vector<std::int32_t> xc = centred(x, xz);
  // Wide windows take the int16 product; its vector loop needs 32 taps to pay.
  const bool wide = K >= 32 && K <= kMaxInt16GemmDepth;
  std::vector<std::int16_t> w16, col16;
  std::vector<std::int32_t> col, acc16;
  if (wide) {
    w16.assign(wc.begin(), wc.end());  // |w - w_zp| <= 255
    col16.resize(static_cast<std::size_t>(P * K));
    acc16.resize(static_cast<std::size_t>(cout_g * P));
  } else {
    col.resize(static_cast<std::size_t>(K * P));
  }
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t g = 0; g < p.group; ++g) {
      if (wide) {
        // colT[pos][k] = x - x_zp at tap k of the window at pos, 0 in the padding.
        for (std::int64_t oh = 0; oh < p.out_h; ++oh)
          for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
            std::int16_t* r = col16.data() + (oh * p.out_w + ow) * K;
            for (std::int64_t ci = 0; ci < cin_g; ++ci) {
              const std::int32_t* plane = xc.data() + (n * p.c_in + g * cin_g + ci) * p.h * p.w;
              for (std::int64_t kh = 0; kh < p.kh; ++kh) {
                const std::int64_t ih = oh * p.stride_h - p.pad_t + kh * p.dil_h;
                for (std::int64_t kw = 0; kw < p.kw; ++kw) {
                  const std::int64_t iw = ow * p.stride_w - p.pad_l + kw * p.dil_w;
                  *r++ = (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) ? 0 : static_cast<std::int16_t>(plane[ih * p.w + iw]);
                }
              }
            }
          }
        int16_gemm_nt(w16.data() + g * cout_g * K, col16.data(), cout_g, P, K, acc16.data());
        fast::team_for(cout_g, 1, [&](std::int64_t range_begin, std::int64_t range_end) {
          for (std::int64_t mg = range_begin; mg < range_end; ++mg) {
            const std::int64_t m = g * cout_g + mg;
            const std::int32_t bias_m = bias ? bias[m] : 0;
            const float s = scale[static_cast<std::size_t>(m)];
            const std::int32_t* a = acc16.data() + mg * P;
            const std::int64_t base = (n * p.c_out + m) * P;
            for (std::int64_t pos = 0; pos < P; ++pos)
              store(y, base + pos, quantize(static_cast<float>(std::int64_t{a[pos]} + bias_m) * s, yzv, lo, hi));
          }
        });
        continue;
      }
      // im2col: col[k][pos] = x - x_zp at the window tap, 0 in the padding (ONNX pads with
      // the zero point).
      for (std::int64_t ci = 0; ci < cin_g; ++ci)
        for (std::int64_t kh = 0; kh < p.kh; ++kh)
          for (std::int64_t kw = 0; kw < p.kw; ++kw) {
            std::int32_t* row = col.data() + ((ci * p.kh + kh) * p.kw + kw) * P;
            const std::int32_t* plane = xc.data() + (n * p.c_in + g * cin_g + ci) * p.h * p.w;
            for (std::int64_t oh = 0; oh < p.out_h; ++oh) {
              const std::int64_t ih = oh * p.stride_h - p.pad_t + kh * p.dil_h;
              std::int32_t* r = row + oh * p.out_w;
              if (ih < 0 || ih >= p.h) {
                for (std::int64_t ow = 0; ow < p.out_w; ++ow) r[ow] = 0;
                continue;
              }
              for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
                const std::int64_t iw = ow * p.stride_w - p.pad_l + kw * p.dil_w;
                r[ow] = (iw < 0 || iw >= p.w) ? 0 : plane[ih * p.w + iw];
              }
            }
          }
      fast::team_for(cout_g, 4, [&](std::int64_t range_begin, std::int64_t range_end) {
        std::vector<std::int32_t> acc(static_cast<std::size_t>(P));
        for (std::int64_t mg = range_begin; mg < range_end; ++mg) {
          const std::int64_t m = g * cout_g + mg;
          std::fill(acc.begin(), acc.end(), bias ? bias[m] : 0);
          const std::int32_t* wm = wc.data() + m * K;
          for (std::int64_t k = 0; k < K; ++k) {
            const std::int32_t wv = wm[k];
            if (wv == 0) continue;
            const std::int32_t* ck = col.data() + k * P;
            std::int32_t* a = acc.data();
            for (std::int64_t pos = 0; pos < P; ++pos) a[pos] += wv * ck[pos];
          }
          const float s = scale[static_cast<std::size_t>(m)];
          const std::int64_t base = (n * p.c_out + m) * P;
          for (std::int64_t pos = 0; pos < P; ++pos)
            store(y, base + pos, quantize(static_cast<float>(acc[static_cast<std::size_t>(pos)]) * s, yzv, lo, hi));
        }
      });
    }
  return {y};
}

}  // namespace

void register_fast_quant(KernelRegistry& r) { r.add("QLinearConv", qlinear_conv, LayoutSupport::ChannelsLastAnyType); }

}  // namespace graphfuse::kernels
