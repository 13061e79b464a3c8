// Fast convolution: one oneDNN primitive with bias, sum and eltwise post-ops, cached per shape.
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/conv_ops.h"
#include "core/util.h"
#include "fast/buffers.h"
#include "fast/conv_common.h"
#include "fast/conv_gemm.h"
#include "fast/dnnl_common.h"
#include "fast/impl_log.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels::fast {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

memory::desc user_weights_desc(const ConvParams& p) {
  const memory::dim g = p.group, og = p.c_out / g, ig = p.c_in / g, kh = p.kh, kw = p.kw;
  // Strides of (o, i, h, w) within one buffer holding all groups.
  memory::dims s = p.layout == ConvLayout::NchwOihw
                       ? memory::dims{ig * kh * kw, kh * kw, kw, 1}
                       : memory::dims{1, p.c_out, kw * ig * p.c_out, ig * p.c_out};
  if (g == 1) return memory::desc({og, ig, kh, kw}, dt::f32, s);
  return memory::desc({g, og, ig, kh, kw}, dt::f32, {og * s[0], s[0], s[1], s[2], s[3]});
}

// The primitive cache key: every field that shapes the primitive, as raw bytes (the
// stream-formatted key it replaces cost microseconds per call, 52 calls per mobilenet_v2 run).
std::string conv_key(const ConvParams& p) {
  auto bits = [](float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return static_cast<std::int64_t>(u);
  };
  const std::int64_t k[] = {omp_threads(), static_cast<std::int64_t>(p.layout), p.n, p.c_in, p.h, p.w,
                            p.c_out, p.kh, p.kw, p.group, p.stride_h, p.stride_w, p.dil_h, p.dil_w,
                            p.pad_t, p.pad_l, p.pad_b, p.pad_r, p.has_bias, p.has_sum,
                            static_cast<std::int64_t>(p.act.kind), bits(p.act.alpha), bits(p.act.beta),
                            p.src_channels_last, p.dst_channels_last};
  return std::string(reinterpret_cast<const char*>(k), sizeof k);
}

// The shape as oneDNN's verbose log writes it, for the implementation log and warnings.
std::string conv_shape_text(const ConvParams& p) {
  std::string s = "mb" + std::to_string(p.n) + (p.group > 1 ? "_g" + std::to_string(p.group) : "") + "_ic" +
                  std::to_string(p.c_in) + "oc" + std::to_string(p.c_out) + "_ih" + std::to_string(p.h) + "oh" +
                  std::to_string(p.out_h) + "kh" + std::to_string(p.kh) + "sh" + std::to_string(p.stride_h) + "ph" +
                  std::to_string(p.pad_t) + "_iw" + std::to_string(p.w) + "ow" + std::to_string(p.out_w) + "kw" +
                  std::to_string(p.kw) + "sw" + std::to_string(p.stride_w) + "pw" + std::to_string(p.pad_l);
  if (p.dil_h > 1 || p.dil_w > 1) s += "_dil" + std::to_string(p.dil_h) + "x" + std::to_string(p.dil_w);
  return s;
}

namespace {

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

memory::dims weights_dims(const ConvParams& p) {
  const memory::dim g = p.group, og = p.c_out / g, ig = p.c_in / g;
  return g == 1 ? memory::dims{og, ig, p.kh, p.kw} : memory::dims{g, og, ig, p.kh, p.kw};
}

// A built primitive and everything a call needs around it. The memory objects are made
// once and re-pointed at each call's buffers (set_data_handle): creating four oneDNN
// memory objects and an argument map per call showed up next to the small convolutions.
struct ConvEntry {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  memory::desc user_src, user_dst, user_wei;
  bool reorder_src = false, reorder_dst = false, reorder_wei = false;
  PrimitiveRecord record;  // kind, oneDNN implementation, shape
  bool reference = false;  // oneDNN's reference loops: every run is reported
  std::mutex mu;  // guards everything below (one call at a time per shape)
  memory src, dst, wei, bias;     // the caller's buffers
  std::optional<memory> src_buf, dst_buf;  // oneDNN's layouts, when they differ
  std::optional<dnnl::reorder> to_src_buf, from_dst_buf, z_to_dst_buf;
  std::unordered_map<int, memory> args;
};

// One (source, destination) layout pair to offer oneDNN; `undef` stands for the user's
// own layout (no reorder).
struct LayoutChoice {
  tag src, dst;
};

// The layouts to try, best guess first. The first is what the caller's layouts suggest
// (NHWC as it is; plain NCHW left to oneDNN unless GRAPHFUSE_CONV_NCHW=plain). The rest
// exist because oneDNN's jit kernels below AVX-512 are picky: with AVX2 or SSE4.1, a
// source left to `any` next to an NHWC destination, or NCHW in and NHWC out, gets only
// `ref:any` (the 3-channel stem of resnet18 took 820 ms instead of ~9 ms), while the same
// shape all-NHWC, or NCHW in and blocked out ("flat" source), has a jit kernel.
std::vector<LayoutChoice> layout_choices(tag user_src, tag user_dst) {
  const bool any = nchw_blocked();
  std::vector<LayoutChoice> c;
  c.push_back({user_src == tag::nchw && any ? tag::any : tag::undef,
               user_dst == tag::nchw && any ? tag::any : tag::undef});
  c.push_back({user_dst, tag::undef});  // the source brought to the destination's layout
  c.push_back({tag::undef, user_src});  // the destination in the source's layout
  c.push_back({tag::nhwc, tag::nhwc});
  c.push_back({tag::nchw, tag::any});   // "flat" source, blocked destination (few channels)
  c.push_back({tag::any, tag::any});
  c.push_back({tag::nChw8c, tag::nChw8c});
  c.push_back({tag::nChw16c, tag::nChw16c});
  c.push_back({tag::nchw, tag::nchw});  // im2col + GEMM
  return c;
}

std::shared_ptr<ConvEntry> build(const ConvParams& p) {
  const bool nchw = p.layout == ConvLayout::NchwOihw;
  const bool src_nhwc = !nchw || p.src_channels_last, dst_nhwc = !nchw || p.dst_channels_last;
  memory::desc user_src({p.n, p.c_in, p.h, p.w}, dt::f32, src_nhwc ? tag::nhwc : tag::nchw);
  memory::desc user_dst({p.n, p.c_out, p.out_h, p.out_w}, dt::f32, dst_nhwc ? tag::nhwc : tag::nchw);
  // Weights are always oneDNN's choice (reordered once per layer, cached).
  memory::desc wei_md(weights_dims(p), dt::f32, tag::any);
  memory::desc bias_md = p.has_bias ? memory::desc({p.c_out}, dt::f32, tag::a) : memory::desc();
  // The epilogue: conv + bias, then + z (sum reads the destination in place), then the
  // activation, all applied by the kernel to each output block while it is in registers.
  dnnl::post_ops po;
  if (p.has_sum) po.append_sum(1.0f);
  append_activation(po, p.act);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  auto md = [](const memory::desc& user, tag t) { return t == tag::undef ? user : memory::desc(user.dims(), dt::f32, t); };
  // The first layout pair with an optimized implementation; failing that, the first that
  // oneDNN takes at all (its reference loops, which note_reference_run reports).
  std::optional<dnnl::convolution_forward::primitive_desc> chosen;
  for (const LayoutChoice& c : layout_choices(src_nhwc ? tag::nhwc : tag::nchw, dst_nhwc ? tag::nhwc : tag::nchw)) {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, md(user_src, c.src), wei_md,
        bias_md, md(user_dst, c.dst), {p.stride_h, p.stride_w}, {p.dil_h - 1, p.dil_w - 1}, {p.pad_t, p.pad_l},
        {p.pad_b, p.pad_r});
    dnnl::convolution_forward::primitive_desc pd(d, attr, cpu_engine(), /*allow_empty=*/true);
    if (!pd) continue;
    if (!chosen) chosen = pd;
    if (!is_slow_impl(impl_of(pd))) {
      chosen = pd;
      break;
    }
  }
  if (!chosen) fail("oneDNN has no convolution for " + conv_shape_text(p));
  const auto& pd = *chosen;
  auto e = std::make_shared<ConvEntry>();
  e->pd = pd;
  e->record = {"convolution", impl_of(pd), conv_shape_text(p)};
  e->reference = is_reference_impl(e->record.impl);
  record_primitive(e->record);
  e->prim = dnnl::convolution_forward(pd);
  e->user_src = user_src;
  e->user_dst = user_dst;
  e->user_wei = user_weights_desc(p);
  e->reorder_src = pd.src_desc() != user_src;
  e->reorder_dst = pd.dst_desc() != user_dst;
  e->reorder_wei = pd.weights_desc() != e->user_wei;
  e->src = memory(user_src, cpu_engine(), DNNL_MEMORY_NONE);
  e->dst = memory(user_dst, cpu_engine(), DNNL_MEMORY_NONE);
  e->wei = memory(e->user_wei, cpu_engine(), DNNL_MEMORY_NONE);
  if (e->reorder_src) {
    e->src_buf = memory(pd.src_desc(), cpu_engine());
    e->to_src_buf = dnnl::reorder(e->src, *e->src_buf);
  }
  if (e->reorder_dst) {
    e->dst_buf = memory(pd.dst_desc(), cpu_engine());
    e->from_dst_buf = dnnl::reorder(*e->dst_buf, e->dst);
    if (p.has_sum) e->z_to_dst_buf = dnnl::reorder(e->dst, *e->dst_buf);
  }
  e->args = {{DNNL_ARG_SRC, e->reorder_src ? *e->src_buf : e->src},
             {DNNL_ARG_WEIGHTS, e->wei},
             {DNNL_ARG_DST, e->reorder_dst ? *e->dst_buf : e->dst}};
  if (p.has_bias) {
    e->bias = memory(bias_md, cpu_engine(), DNNL_MEMORY_NONE);
    e->args.emplace(DNNL_ARG_BIAS, e->bias);
  }
  return e;
}

PrimitiveCache<ConvEntry>& cache() {
  static PrimitiveCache<ConvEntry> c;
  return c;
}

}  // namespace

void conv2d(const ConvParams& p, const float* x, const float* w, const float* b, const float* z,
            float* y, std::shared_ptr<const void> weights_owner) {
  const std::int64_t flops = 2 * p.n * p.c_out * p.out_h * p.out_w * (p.c_in / p.group) * p.kh * p.kw;
  SerialIf serial(flops < serial_flops());  // before the key: it includes the thread count
  if (conv_as_gemm(p)) return conv2d_gemm(p, x, w, b, z, y, weights_owner);
  auto e = cache().get(conv_key(p), [&] { return build(p); });
  std::lock_guard<std::mutex> lock(e->mu);
  auto& strm = cpu_stream();
  auto ptr = [](const float* q) { return static_cast<void*>(const_cast<float*>(q)); };

  e->wei.set_data_handle(ptr(w));
  e->args[DNNL_ARG_WEIGHTS] =
      e->reorder_wei ? reordered_weights(e->wei, e->pd.weights_desc(), weights_owner) : e->wei;
  e->src.set_data_handle(ptr(x));
  if (e->reorder_src) e->to_src_buf->execute(strm, e->src, *e->src_buf);
  if (p.has_bias) e->bias.set_data_handle(ptr(b));
  if (p.has_sum) {
    // The sum post-op adds what the destination holds: put z (in y's layout) there first.
    if (e->reorder_dst) {
      e->dst.set_data_handle(ptr(z));
      e->z_to_dst_buf->execute(strm, e->dst, *e->dst_buf);
    } else {
      std::memcpy(y, z, static_cast<std::size_t>(p.n * p.c_out * p.out_h * p.out_w) * sizeof(float));
    }
  }
  e->dst.set_data_handle(y);
  if (e->reference) note_reference_run(e->record);
  e->prim.execute(strm, e->args);
  if (e->reorder_dst) e->from_dst_buf->execute(strm, *e->dst_buf, e->dst);
  strm.wait();
}

}  // namespace graphfuse::kernels::fast

namespace graphfuse::kernels {

void register_fast_conv(KernelRegistry& r) {
  // ONNX Conv / com.microsoft.FusedConv through the shared node kernel, with outputs from the
  // fast pool: the primitive writes every element, so the shared allocator's zero fill is a
  // wasted pass over each activation (on mobilenet_v2 it was the largest cost outside
  // oneDNN). The TF-style family (Conv2D, FusedConv2D_*, _FusedConv2D) comes from
  // register_tf_conv.
  register_conv_ops(r, fast::conv2d, fast::alloc_output_f32, true);
  // The cheap activations as oneDNN post-ops: they save the activation's pass over memory.
  // Not Sigmoid, Tanh or swish: oneDNN 2.6's AVX2 post-op exp is slower than the vectorized
  // standalone kernels (efficientnet_b0's 49 convolution -> QuickGelu fused as swish
  // post-ops ran 0.8 ms slower per run on one AVX2 core, best of 40 runs, 5 alternations).
  r.set_epilogue_support("Conv", EpilogueSupport::PiecewiseLinear);
  r.set_epilogue_support("com.microsoft.FusedConv", EpilogueSupport::PiecewiseLinear);
}

}  // namespace graphfuse::kernels
