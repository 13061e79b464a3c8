// Fast convolution: one oneDNN primitive with bias, sum and eltwise post-ops, cached per shape.
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "core/conv_ops.h"
#include "fast/dnnl_common.h"

namespace graphfuse::kernels::fast {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// NCHW graphs: oneDNN's fast direct kernels want blocked (nChw16c) activations, its plain
// NCHW path is an im2col GEMM. Reordering in and out costs two passes over the data but
// wins for all but the smallest convolutions; GRAPHFUSE_CONV_NCHW=plain turns it off.
bool nchw_blocked() {
  static const bool blocked = [] {
    const char* v = std::getenv("GRAPHFUSE_CONV_NCHW");
    return !(v && std::string(v) == "plain");
  }();
  return blocked;
}

// The user's weight buffer described as oneDNN's (g, o, i, h, w) or (o, i, h, w) dims
// with explicit strides, for either OIHW or HWIO storage.
memory::desc user_weights_desc(const ConvParams& p) {
  const memory::dim g = p.group, og = p.c_out / g, ig = p.c_in / g, kh = p.kh, kw = p.kw;
  // Strides of (o, i, h, w) within one buffer holding all groups.
  memory::dims s = p.layout == ConvLayout::NchwOihw
                       ? memory::dims{ig * kh * kw, kh * kw, kw, 1}
                       : memory::dims{1, p.c_out, kw * ig * p.c_out, ig * p.c_out};
  if (g == 1) return memory::desc({og, ig, kh, kw}, dt::f32, s);
  return memory::desc({g, og, ig, kh, kw}, dt::f32, {og * s[0], s[0], s[1], s[2], s[3]});
}

memory::dims weights_dims(const ConvParams& p) {
  const memory::dim g = p.group, og = p.c_out / g, ig = p.c_in / g;
  return g == 1 ? memory::dims{og, ig, p.kh, p.kw} : memory::dims{g, og, ig, p.kh, p.kw};
}

struct ConvEntry {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  memory::desc user_src, user_dst, user_wei;
  bool reorder_src = false, reorder_dst = false, reorder_wei = false;
  std::mutex mu;  // guards the scratch buffers
  std::optional<memory> src_buf, dst_buf;
};

std::string key_of(const ConvParams& p) {
  std::ostringstream k;
  k << omp_threads() << 't' << static_cast<int>(p.layout) << ':' << p.n << ',' << p.c_in << ',' << p.h << ',' << p.w
    << ':' << p.c_out << ',' << p.kh << ',' << p.kw << ',' << p.group << ':' << p.stride_h << ','
    << p.stride_w << ',' << p.dil_h << ',' << p.dil_w << ':' << p.pad_t << ',' << p.pad_l << ','
    << p.pad_b << ',' << p.pad_r << ':' << p.has_bias << p.has_sum << ':'
    << static_cast<int>(p.act.kind) << ',' << p.act.alpha << ',' << p.act.beta << ':'
    << p.src_channels_last << p.dst_channels_last;
  return k.str();
}

std::shared_ptr<ConvEntry> build(const ConvParams& p) {
  const bool nchw = p.layout == ConvLayout::NchwOihw;
  const bool src_nhwc = !nchw || p.src_channels_last, dst_nhwc = !nchw || p.dst_channels_last;
  memory::desc user_src({p.n, p.c_in, p.h, p.w}, dt::f32, src_nhwc ? tag::nhwc : tag::nchw);
  memory::desc user_dst({p.n, p.c_out, p.out_h, p.out_w}, dt::f32, dst_nhwc ? tag::nhwc : tag::nchw);
  // NHWC is oneDNN's native plain layout for its brgemm kernels: taken as it is. Plain
  // NCHW is left to oneDNN's choice (and reordered) unless GRAPHFUSE_CONV_NCHW=plain.
  const bool any = nchw_blocked();
  memory::desc src_md = !src_nhwc && any ? memory::desc(user_src.dims(), dt::f32, tag::any) : user_src;
  memory::desc dst_md = !dst_nhwc && any ? memory::desc(user_dst.dims(), dt::f32, tag::any) : user_dst;
  memory::desc wei_md(weights_dims(p), dt::f32, tag::any);
  memory::desc bias_md = p.has_bias ? memory::desc({p.c_out}, dt::f32, tag::a) : memory::desc();
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md, wei_md,
      bias_md, dst_md, {p.stride_h, p.stride_w}, {p.dil_h - 1, p.dil_w - 1}, {p.pad_t, p.pad_l},
      {p.pad_b, p.pad_r});
  // The epilogue: conv + bias, then + z (sum reads the destination in place), then the
  // activation, all applied by the kernel to each output block while it is in registers.
  dnnl::post_ops po;
  if (p.has_sum) po.append_sum(1.0f);
  append_activation(po, p.act);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  dnnl::convolution_forward::primitive_desc pd(d, attr, cpu_engine());
  auto e = std::make_shared<ConvEntry>();
  e->pd = pd;
  e->prim = dnnl::convolution_forward(pd);
  e->user_src = user_src;
  e->user_dst = user_dst;
  e->user_wei = user_weights_desc(p);
  e->reorder_src = pd.src_desc() != user_src;
  e->reorder_dst = pd.dst_desc() != user_dst;
  e->reorder_wei = pd.weights_desc() != e->user_wei;
  return e;
}

PrimitiveCache<ConvEntry>& cache() {
  static PrimitiveCache<ConvEntry> c;
  return c;
}

}  // namespace

void conv2d(const ConvParams& p, const float* x, const float* w, const float* b, const float* z,
            float* y, std::shared_ptr<const void> weights_owner) {
  auto e = cache().get(key_of(p), [&] { return build(p); });
  std::lock_guard<std::mutex> lock(e->mu);
  auto& strm = cpu_stream();
  const auto& pd = e->pd;

  memory wei = wrap(e->user_wei, w);
  if (e->reorder_wei) wei = reordered_weights(wei, pd.weights_desc(), weights_owner);
  memory src = wrap(e->user_src, x);
  if (e->reorder_src) {
    if (!e->src_buf) e->src_buf = memory(pd.src_desc(), cpu_engine());
    dnnl::reorder(src, *e->src_buf).execute(strm, src, *e->src_buf);
    src = *e->src_buf;
  }
  memory user_dst = wrap(e->user_dst, y);
  memory dst = user_dst;
  if (e->reorder_dst) {
    if (!e->dst_buf) e->dst_buf = memory(pd.dst_desc(), cpu_engine());
    dst = *e->dst_buf;
  }
  if (p.has_sum) {
    // The sum post-op adds what the destination holds: put z (in y's layout) there first.
    memory zm = wrap(e->user_dst, z);
    if (e->reorder_dst)
      dnnl::reorder(zm, dst).execute(strm, zm, dst);
    else
      std::memcpy(y, z, static_cast<std::size_t>(p.n * p.c_out * p.out_h * p.out_w) * sizeof(float));
  }
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
  if (p.has_bias) args.emplace(DNNL_ARG_BIAS, wrap(memory::desc({p.c_out}, dt::f32, tag::a), b));
  e->prim.execute(strm, args);
  if (e->reorder_dst) dnnl::reorder(dst, user_dst).execute(strm, dst, user_dst);
  strm.wait();
}

}  // namespace graphfuse::kernels::fast

namespace graphfuse::kernels {
void register_fast_conv(KernelRegistry& r) { register_conv_ops(r, fast::conv2d, true); }
}  // namespace graphfuse::kernels
