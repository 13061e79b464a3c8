// Fast pooling on oneDNN (pooling_v2 for dilations), cached per shape.
#include <sstream>
#include <vector>

#include "core/pool_ops.h"
#include "fast/dnnl_common.h"
#include "fast/layout.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels::fast {

namespace {

using dnnl::memory;

struct PoolEntry {
  dnnl::pooling_v2_forward::primitive_desc pd;
  dnnl::pooling_v2_forward prim;
  memory::desc src, dst;
};

PrimitiveCache<PoolEntry>& cache() {
  static PrimitiveCache<PoolEntry> c;
  return c;
}

void fast_pool(const PoolParams& p, const float* x, float* y) {
  // oneDNN derives the output size from the padding: ceil_mode's overhang becomes extra
  // end padding. Average pooling that counts padding would count the overhang too,
  // unlike ONNX, so that one case stays on the reference loop.
  const std::int64_t pad_b = (p.out_h - 1) * p.stride_h + (p.kh - 1) * p.dil_h + 1 - p.h - p.pad_t;
  const std::int64_t pad_r = (p.out_w - 1) * p.stride_w + (p.kw - 1) * p.dil_w + 1 - p.w - p.pad_l;
  const bool overhang = pad_b != p.pad_b || pad_r != p.pad_r;
  if ((!p.max && p.count_include_pad && overhang) || pad_b < 0 || pad_r < 0) {
    if (!p.src_channels_last) return reference::pool2d(p, x, y);
    // The reference loop reads NCHW: convert around it.
    std::vector<float> xp(static_cast<std::size_t>(p.n * p.c * p.h * p.w));
    std::vector<float> yp(static_cast<std::size_t>(p.n * p.c * p.out_h * p.out_w));
    convert_layout(x, xp.data(), p.n, p.c, p.h, p.w, Layout::ChannelsLast, Layout::Plain);
    PoolParams q = p;
    q.src_channels_last = q.dst_channels_last = false;
    reference::pool2d(q, xp.data(), yp.data());
    convert_layout(yp.data(), y, p.n, p.c, p.out_h, p.out_w, Layout::Plain, Layout::ChannelsLast);
    return;
  }
  SerialIf serial(p.n * p.c * p.out_h * p.out_w * p.kh * p.kw < serial_elements());  // before the key
  std::ostringstream k;
  k << omp_threads() << 't' << p.max << p.count_include_pad << ':' << p.n << ',' << p.c << ',' << p.h << ',' << p.w << ':'
    << p.kh << ',' << p.kw << ',' << p.stride_h << ',' << p.stride_w << ',' << p.dil_h << ','
    << p.dil_w << ':' << p.pad_t << ',' << p.pad_l << ',' << pad_b << ',' << pad_r << ':'
    << p.src_channels_last;
  auto e = cache().get(k.str(), [&] {
    const auto tag = p.src_channels_last ? memory::format_tag::nhwc : memory::format_tag::nchw;
    memory::desc src({p.n, p.c, p.h, p.w}, memory::data_type::f32, tag);
    memory::desc dst({p.n, p.c, p.out_h, p.out_w}, memory::data_type::f32, tag);
    const auto alg = p.max ? dnnl::algorithm::pooling_max
                     : p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                           : dnnl::algorithm::pooling_avg_exclude_padding;
    dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, dst,
                                     {p.stride_h, p.stride_w}, {p.kh, p.kw},
                                     {p.dil_h - 1, p.dil_w - 1}, {p.pad_t, p.pad_l}, {pad_b, pad_r});
    dnnl::pooling_v2_forward::primitive_desc pd(d, cpu_engine());
    return std::make_shared<PoolEntry>(PoolEntry{pd, dnnl::pooling_v2_forward(pd), src, dst});
  });
  auto& strm = cpu_stream();
  e->prim.execute(strm, {{DNNL_ARG_SRC, wrap(e->src, x)}, {DNNL_ARG_DST, wrap(e->dst, y)}});
  strm.wait();
}

}  // namespace

}  // namespace graphfuse::kernels::fast

namespace graphfuse::kernels {
void register_fast_pool(KernelRegistry& r) { register_pool_ops(r, fast::fast_pool, true); }
}  // namespace graphfuse::kernels
