// Reference convolution: a direct loop nest per output element, accumulated in double.
#include "core/conv_ops.h"
#include "core/util.h"

namespace graphfuse::kernels::reference {

namespace {
// Element strides of a 4-D activation buffer in (n, c, h, w) order for either layout.
struct Strides4 {
  std::int64_t n, c, h, w;
};
Strides4 act_strides(ConvLayout l, std::int64_t c, std::int64_t h, std::int64_t w) {
  if (l == ConvLayout::NchwOihw) return {c * h * w, h * w, w, 1};
  return {h * w * c, 1, w * c, c};
}
}  // namespace

void conv2d(const ConvParams& p, const float* x, const float* w, const float* b, const float* z,
            float* y) {
  check(!p.src_channels_last && !p.dst_channels_last, "reference conv2d takes plain layouts only");
  const std::int64_t cg_in = p.c_in / p.group, cg_out = p.c_out / p.group;
  const Strides4 xs = act_strides(p.layout, p.c_in, p.h, p.w);
  const Strides4 ys = act_strides(p.layout, p.c_out, p.out_h, p.out_w);
  // Weight strides in (out channel, in channel, kh, kw) order.
  Strides4 ws = p.layout == ConvLayout::NchwOihw
                    ? Strides4{cg_in * p.kh * p.kw, p.kh * p.kw, p.kw, 1}
                    : Strides4{1, p.c_out, p.kw * cg_in * p.c_out, cg_in * p.c_out};
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t oc = 0; oc < p.c_out; ++oc) {
      const std::int64_t ic0 = (oc / cg_out) * cg_in;
      for (std::int64_t oh = 0; oh < p.out_h; ++oh)
        for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
          double acc = 0.0;
          for (std::int64_t ky = 0; ky < p.kh; ++ky) {
            const std::int64_t ih = oh * p.stride_h - p.pad_t + ky * p.dil_h;
            if (ih < 0 || ih >= p.h) continue;
            for (std::int64_t kx = 0; kx < p.kw; ++kx) {
              const std::int64_t iw = ow * p.stride_w - p.pad_l + kx * p.dil_w;
              if (iw < 0 || iw >= p.w) continue;
              const float* xp = x + n * xs.n + ih * xs.h + iw * xs.w + ic0 * xs.c;
              const float* wp = w + oc * ws.n + ky * ws.h + kx * ws.w;
              for (std::int64_t ic = 0; ic < cg_in; ++ic)
                acc += static_cast<double>(xp[ic * xs.c]) * static_cast<double>(wp[ic * ws.c]);
            }
          }
          const std::int64_t yi = n * ys.n + oc * ys.c + oh * ys.h + ow * ys.w;
          if (p.has_bias) acc += b[oc];
          if (p.has_sum) acc += z[yi];
          y[yi] = p.act.apply(static_cast<float>(acc));
        }
    }
}

void bias_add(const float* x, const float* b, float* y, std::int64_t outer, std::int64_t c,
              std::int64_t inner) {
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t k = 0; k < c; ++k)
      for (std::int64_t i = 0; i < inner; ++i) {
        const std::int64_t idx = (o * c + k) * inner + i;
        y[idx] = x[idx] + b[k];
      }
}

void activation(const ActivationSpec& act, const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = act.apply(x[i]);
}

}  // namespace graphfuse::kernels::reference

namespace graphfuse::kernels {
void register_reference_conv(KernelRegistry& r) {
  register_conv_ops(r, [](const ConvParams& p, const float* x, const float* w, const float* b,
                          const float* z, float* y,
                          std::shared_ptr<const void>) { reference::conv2d(p, x, w, b, z, y); },
                    alloc_f32, false);
  register_epilogue_ops(r, reference::bias_add, reference::activation, false);
}
}  // namespace graphfuse::kernels
