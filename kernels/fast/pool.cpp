// Fast pooling: windows over channels-last activations by pool_nhwc, global pools and NCHW
// ones on oneDNN (pooling_v2 for dilations), cached per shape.
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/pool_ops.h"
#include "core/util.h"
#include "fast/dnnl_common.h"
#include "fast/impl_log.h"
#include "fast/layout.h"
#include "fast/pool_nhwc.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels::fast {

namespace {

using dnnl::memory;

struct PoolEntry {
  dnnl::pooling_v2_forward::primitive_desc pd;
  dnnl::pooling_v2_forward prim;
  memory::desc src, dst;                      // the caller's layouts
  std::optional<dnnl::reorder> to_src, from_dst;  // when the primitive wants another layout
  PrimitiveRecord record;
  bool reference = false;
};

// The pooling primitive for `src` -> `dst` with the first layout that has an optimized
// implementation: the caller's own, else NHWC, else blocked (8 then 16 channels), with a
// reorder on each side. Below AVX-512, oneDNN 2.6 has jit pooling for NHWC and blocked
// layouts but only `simple_nchw` for plain NCHW (squeezenet's 128x55x55 max pool: 20 ms
// against 0.25 ms NHWC, under AVX2).
std::shared_ptr<PoolEntry> build(const PoolParams& p, const memory::desc& src, const memory::desc& dst,
                                 std::int64_t pad_b, std::int64_t pad_r) {
  using tag = memory::format_tag;
  const auto alg = p.max ? dnnl::algorithm::pooling_max
                   : p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                         : dnnl::algorithm::pooling_avg_exclude_padding;
  std::optional<dnnl::pooling_v2_forward::primitive_desc> chosen;
  for (tag t : {tag::undef, tag::nhwc, tag::nChw8c, tag::nChw16c}) {
    const memory::desc s = t == tag::undef ? src : memory::desc(src.dims(), memory::data_type::f32, t);
    const memory::desc d = t == tag::undef ? dst : memory::desc(dst.dims(), memory::data_type::f32, t);
    dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, s, d, {p.stride_h, p.stride_w},
                                        {p.kh, p.kw}, {p.dil_h - 1, p.dil_w - 1}, {p.pad_t, p.pad_l},
                                        {pad_b, pad_r});
    dnnl::pooling_v2_forward::primitive_desc pd(desc, cpu_engine(), /*allow_empty=*/true);
    if (!pd) continue;
    if (!chosen) chosen = pd;
    if (!is_slow_impl(impl_of(pd))) {
      chosen = pd;
      break;
    }
  }
  if (!chosen) fail("oneDNN has no pooling for this shape");
  auto e = std::make_shared<PoolEntry>();
  e->pd = *chosen;
  e->prim = dnnl::pooling_v2_forward(e->pd);
  e->src = src;
  e->dst = dst;
  if (e->pd.src_desc() != src) e->to_src = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), src, cpu_engine(), e->pd.src_desc()));
  if (e->pd.dst_desc() != dst) e->from_dst = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), e->pd.dst_desc(), cpu_engine(), dst));
  const auto dims = [](const memory::desc& m) {
    std::string s;
    for (auto d : m.dims()) s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
  };
  e->record = {"pooling", impl_of(e->pd),
               std::string(p.max ? "max" : "avg") + " " + dims(src) + " -> " + dims(dst) + " k" + std::to_string(p.kh) +
                   "x" + std::to_string(p.kw) + " s" + std::to_string(p.stride_h) + (p.src_channels_last ? " nhwc" : " nchw")};
  e->reference = is_reference_impl(e->record.impl);
  record_primitive(e->record);
  return e;
}

PrimitiveCache<PoolEntry>& cache() {
  static PrimitiveCache<PoolEntry> c;
  return c;
}

void fast_pool(const PoolParams& p, const float* x, float* y) {
  // Channels-last windows have a loop of their own (max pools 3-4x, average pools 2x faster
  // than oneDNN's here). Global pools stay on oneDNN's reduction: as windows of the whole
  // plane they ran 1.4x its time (efficientnet_b0's 17, one AVX2 core).
  const bool global = p.kh == p.h && p.kw == p.w && p.out_h == 1 && p.out_w == 1;
  if (p.src_channels_last && p.dst_channels_last && !global) return pool_nhwc(p, x, y);
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
    return build(p, src, dst, pad_b, pad_r);
  });
  if (e->reference) note_reference_run(e->record);
  auto& strm = cpu_stream();
  if (!e->to_src && !e->from_dst) {
    e->prim.execute(strm, {{DNNL_ARG_SRC, wrap(e->src, x)}, {DNNL_ARG_DST, wrap(e->dst, y)}});
  } else {
    // Scratch in the primitive's layouts (per call: pooling is rare in a graph).
    dnnl::memory user_x = wrap(e->src, x), user_y = wrap(e->dst, y);
    dnnl::memory s = e->to_src ? dnnl::memory(e->pd.src_desc(), cpu_engine()) : user_x;
    dnnl::memory d = e->from_dst ? dnnl::memory(e->pd.dst_desc(), cpu_engine()) : user_y;
    if (e->to_src) e->to_src->execute(strm, user_x, s);
    e->prim.execute(strm, {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}});
    if (e->from_dst) e->from_dst->execute(strm, d, user_y);
  }
  strm.wait();
}

}  // namespace

}  // namespace graphfuse::kernels::fast

namespace graphfuse::kernels {
void register_fast_pool(KernelRegistry& r) { register_pool_ops(r, fast::fast_pool, true); }
}  // namespace graphfuse::kernels
