// oneDNN's int8 convolution for QLinearConv: u8/s8 source with its zero point as a runtime
// attribute (oneDNN treats the padding as that zero point, as ONNX does), s8 weights
// reordered once per layer, s32 destination. Only the integer sums come from oneDNN; the
// caller requantizes them with the reference kernel's expression, so the fast and
// reference sets still give the same integers.
#include "fast/int8_conv.h"

#include <string>

#include "core/int16_gemm.h"
#include "fast/dnnl_common.h"
#include "fast/impl_log.h"
#include "fast/int8_primitive.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels::fast {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

using Int8ConvEntry = Int8Primitive<dnnl::convolution_forward>;

std::string key_of(const ConvParams& p, bool signed_src, bool src_nhwc) {
  const std::int64_t k[] = {omp_threads(), p.n, p.c_in, p.h, p.w, p.c_out, p.kh, p.kw, p.group, p.stride_h, p.stride_w,
                            p.dil_h, p.dil_w, p.pad_t, p.pad_l, p.pad_b, p.pad_r, signed_src, src_nhwc};
  return std::string(reinterpret_cast<const char*>(k), sizeof k);
}

memory::dims weight_dims(const ConvParams& p) {
  const memory::dim g = p.group, og = p.c_out / g, ig = p.c_in / g;
  return g == 1 ? memory::dims{og, ig, p.kh, p.kw} : memory::dims{g, og, ig, p.kh, p.kw};
}

// Null where oneDNN offers only its reference loops for this shape (slower than our own).
std::shared_ptr<Int8ConvEntry> build(const ConvParams& p, bool signed_src, bool src_nhwc) {
  const dt src_type = signed_src ? dt::s8 : dt::u8;
  const memory::desc user_src({p.n, p.c_in, p.h, p.w}, src_type, src_nhwc ? tag::nhwc : tag::nchw);
  const memory::desc src_md({p.n, p.c_in, p.h, p.w}, src_type, tag::nhwc);
  const memory::desc dst_md({p.n, p.c_out, p.out_h, p.out_w}, dt::s32, tag::nhwc);
  const memory::desc wei_md(weight_dims(p), dt::s8, tag::any);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                                    wei_md, dst_md, {p.stride_h, p.stride_w}, {p.dil_h - 1, p.dil_w - 1},
                                    {p.pad_t, p.pad_l}, {p.pad_b, p.pad_r});
  dnnl::convolution_forward::primitive_desc pd(d, runtime_source_zero_point(), cpu_engine(), /*allow_empty=*/true);
  if (!pd || is_slow_impl(impl_of(pd))) return nullptr;
  record_primitive({"int8 convolution", impl_of(pd), "mb" + std::to_string(p.n) + "_g" + std::to_string(p.group) +
                                                        "_ic" + std::to_string(p.c_in) + "oc" + std::to_string(p.c_out) +
                                                        "_ih" + std::to_string(p.h) + "kh" + std::to_string(p.kh)});
  return std::make_shared<Int8ConvEntry>(
      pd, user_src, memory::desc(weight_dims(p), dt::s8, p.group == 1 ? tag::oihw : tag::goihw), dst_md);
}

PrimitiveCache<Int8ConvEntry>& cache() {
  static PrimitiveCache<Int8ConvEntry> c;
  return c;
}

}  // namespace

bool int8_conv_sums(const KernelCall& c, const quant::QConv& q, std::int32_t* acc) {
  const ConvParams& p = q.p;
  const Tensor &x = c.required(0), &w = c.required(3);
  if (w.dtype != DType::Int8 || p.layout != ConvLayout::NchwOihw) return false;
  if (const Tensor* wz = c.input(5))
    for (std::int64_t m = 0; m < wz->num_elements(); ++m)
      if (quant::int_at(*wz, m) != 0) return false;
  const std::int64_t depth = p.c_in / p.group * p.kh * p.kw;
  if (depth > kMaxInt16GemmDepth) return false;  // |x - x_zp| * |w| <= 255 * 128: no int32 overflow up to here
  // Without VNNI, oneDNN's u8 x s8 pair sums saturate at int16, and for an s8 source it
  // halves the weights (its "scale adjust" of 0.5): inexact either way. Its depthwise
  // kernels on a u8 source widen to int32 first and stay exact.
  const bool signed_src = x.dtype == DType::Int8;
  const bool depthwise = p.group == p.c_in && p.group == p.c_out;
  if (!has_vnni() && (!depthwise || signed_src)) return false;

  const std::int64_t flops = 2 * p.n * p.c_out * p.out_h * p.out_w * depth;
  SerialIf serial(flops < serial_flops());  // before the key: it includes the thread count
  const bool src_nhwc = c.layout(0) == Layout::ChannelsLast;
  const std::shared_ptr<Int8ConvEntry> e =
      cache().get(key_of(p, signed_src, src_nhwc), [&] { return build(p, signed_src, src_nhwc); });
  if (!e) return false;

  e->run(x.bytes().data(), w.bytes().data(), c.is_const(3) ? std::shared_ptr<const void>(w.data) : nullptr,
         static_cast<std::int32_t>(q.xz), acc);
  return true;
}

}  // namespace graphfuse::kernels::fast
