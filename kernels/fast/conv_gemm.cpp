// Convolution as im2col + GEMM for small output planes.
//
// oneDNN 2.6's direct AVX2 convolution loses efficiency as the output plane shrinks: on one
// AVX2 core a 3x3 convolution 512 -> 512 channels from 14x14 to 7x7 (stride 2) ran at 43-45
// GFLOP/s in NHWC and nChw8c alike, 7x7 -> 7x7 at 61-70, where its GEMM on the same products
// (49 x 4608 x 512) runs at 75 and 196 x 2304 x 256 at 96 (build/bench/matmul_stride). The
// window copy costs one pass over kh * kw times the (small) input.
#include "fast/conv_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/window.h"
#include "fast/conv_common.h"
#include "fast/dnnl_common.h"
#include "fast/impl_log.h"
#include "fast/parallelism.h"
#include "fast/vmath.h"

namespace graphfuse::kernels::fast {

namespace {

using dnnl::memory;
using dt = memory::data_type;

constexpr std::int64_t kMaxOutputPlane = 14 * 14;
constexpr std::int64_t kMinInputChannels = 128;
constexpr std::int64_t kMinOutputChannels = 64;  // a narrower product leaves the GEMM's register tiles part empty

// Measured on AVX2 only: on AVX-512 oneDNN's direct kernels (brgconv, jit:avx512_core) are
// another matter, so the path stays with the ISA it was measured on.
bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("GRAPHFUSE_CONV_GEMM");
    return !(v && std::string(v) == "0") && std::string_view(vmath::isa()) == "avx2";
  }();
  return on;
}

struct GemmConvEntry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  memory::desc a_md, b_md, y_md, bias_md;
  memory::desc user_weights;    ///< the caller's OIHW or HWIO buffer
  memory::desc packed_weights;  ///< (o, i, h, w) dims laid out as the [h][w][i][o] matrix b_md reads
  PrimitiveRecord record;
};

std::shared_ptr<GemmConvEntry> build(const ConvParams& p) {
  auto e = std::make_shared<GemmConvEntry>();
  const memory::dim m = p.n * p.out_h * p.out_w, k = p.kh * p.kw * p.c_in, n = p.c_out, ld = weights_row_stride(p.c_out);
  e->a_md = memory::desc({m, k}, dt::f32, memory::dims{k, 1});
  e->b_md = memory::desc({k, n}, dt::f32, memory::dims{ld, 1});
  e->y_md = memory::desc({m, n}, dt::f32, memory::dims{n, 1});
  if (p.has_bias) e->bias_md = memory::desc({1, n}, dt::f32, memory::dims{n, 1});
  e->user_weights = user_weights_desc(p);
  // Row (h * kw + w) * c_in + i, column o of the matrix, as strides of oneDNN's (o, i, h, w).
  e->packed_weights = memory::desc({p.c_out, p.c_in, p.kh, p.kw}, dt::f32,
                                   memory::dims{1, ld, p.kw * p.c_in * ld, p.c_in * ld});
  dnnl::post_ops po;
  if (p.has_sum) po.append_sum(1.0f);  // y holds z when the product is added
  append_activation(po, p.act);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  const dnnl::matmul::desc d = p.has_bias ? dnnl::matmul::desc(e->a_md, e->b_md, e->bias_md, e->y_md)
                                          : dnnl::matmul::desc(e->a_md, e->b_md, e->y_md);
  e->pd = dnnl::matmul::primitive_desc(d, attr, cpu_engine());
  e->prim = dnnl::matmul(e->pd);
  e->record = {"convolution", "im2col+matmul " + impl_of(e->pd), conv_shape_text(p)};
  record_primitive(e->record);
  return e;
}

PrimitiveCache<GemmConvEntry>& cache() {
  static PrimitiveCache<GemmConvEntry> c;
  return c;
}

// Row r of the window matrix: output pixel r's taps in (h, w) order, c_in floats each,
// zeros where the tap falls in the padding.
void windows(const ConvParams& p, const float* x, float* a, std::int64_t row_begin, std::int64_t row_end) {
  const std::int64_t plane = p.out_h * p.out_w, k = p.kh * p.kw * p.c_in;
  const auto run = static_cast<std::size_t>(p.c_in) * sizeof(float);
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    const std::int64_t img = r / plane, oh = r % plane / p.out_w, ow = r % p.out_w;
    const float* image = x + img * p.h * p.w * p.c_in;
    float* dst = a + r * k;
    for_each_tap(p, oh, ow, [&](std::int64_t ih, std::int64_t iw, bool inside) {
      if (inside)
        std::memcpy(dst, image + (ih * p.w + iw) * p.c_in, run);
      else
        std::memset(dst, 0, run);
      dst += p.c_in;
    });
  }
}

}  // namespace

bool conv_as_gemm(const ConvParams& p) {
  const bool channels_last =
      p.layout == ConvLayout::NhwcHwio || (p.src_channels_last && p.dst_channels_last);
  return enabled() && channels_last && p.group == 1 && p.kh * p.kw > 1 && p.out_h * p.out_w <= kMaxOutputPlane &&
         p.c_in >= kMinInputChannels && p.c_out >= kMinOutputChannels;
}

void conv2d_gemm(const ConvParams& p, const float* x, const float* w, const float* b, const float* z, float* y,
                 const std::shared_ptr<const void>& weights_owner) {
  auto e = cache().get(conv_key(p), [&] { return build(p); });
  const std::int64_t m = p.n * p.out_h * p.out_w, k = p.kh * p.kw * p.c_in;
  // The window matrix: scratch per calling thread, reused across calls.
  thread_local std::vector<float> scratch;
  if (scratch.size() < static_cast<std::size_t>(m * k)) scratch.resize(static_cast<std::size_t>(m * k));
  float* a = scratch.data();
  team_for(m, std::max<std::int64_t>(1, serial_elements() / std::max<std::int64_t>(k, 1)),
           [&](std::int64_t begin, std::int64_t end) { windows(p, x, a, begin, end); });
  const memory packed =
      reordered_weights(wrap(e->user_weights, w), e->packed_weights, weights_owner);
  if (p.has_sum)
    std::memcpy(y, z, static_cast<std::size_t>(m * p.c_out) * sizeof(float));  // the sum post-op adds to it
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(e->a_md, a)},
                                       {DNNL_ARG_WEIGHTS, memory(e->b_md, cpu_engine(), packed.get_data_handle())},
                                       {DNNL_ARG_DST, wrap(e->y_md, y)}};
  if (p.has_bias) args.emplace(DNNL_ARG_BIAS, wrap(e->bias_md, b));
  auto& strm = cpu_stream();
  e->prim.execute(strm, args);
  strm.wait();
}

}  // namespace graphfuse::kernels::fast
