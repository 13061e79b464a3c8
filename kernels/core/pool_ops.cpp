// Pooling attributes (kernel_shape, pads, auto_pad, ceil_mode, dilations) -> PoolParams.
#include "core/pool_ops.h"

#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels {

namespace {

std::int64_t pooled_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                         std::int64_t pb, std::int64_t pe, bool ceil_mode) {
  const std::int64_t span = in + pb + pe - ((k - 1) * d + 1);
  check(span >= 0, "pooling window larger than the padded input");
  std::int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  // A last window that would start inside the end padding is dropped (ONNX, PyTorch).
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

// A ChannelsLast input gives a ChannelsLast output (the executor only sends one to
// kernels registered for it).
void set_layouts(PoolParams& p, const KernelCall& c) {
  p.src_channels_last = c.layout(0) == Layout::ChannelsLast;
  p.dst_channels_last = p.src_channels_last;
  c.out_layout = p.dst_channels_last ? Layout::ChannelsLast : Layout::Plain;
}

std::vector<Tensor> pool(PoolImpl impl, const KernelCall& c, bool is_max) {
  const Tensor& x = c.required(0);
  check(x.shape.size() == 4, "only 2-D pooling over NCHW is supported, input is " +
                                 shape_str(x.shape));
  check(c.num_outputs == 1 || is_max == false, "MaxPool's Indices output is not supported");
  PoolParams p;
  p.max = is_max;
  p.n = x.shape[0], p.c = x.shape[1], p.h = x.shape[2], p.w = x.shape[3];
  const auto ks = attr_ints(c.attrs, "kernel_shape");
  check(ks.size() == 2, "kernel_shape must have 2 entries");
  p.kh = ks[0], p.kw = ks[1];
  if (auto s = attr_ints(c.attrs, "strides"); !s.empty()) {
    check(s.size() == 2, "strides must have 2 entries");
    p.stride_h = s[0], p.stride_w = s[1];
  }
  if (auto d = attr_ints(c.attrs, "dilations"); !d.empty()) {
    check(d.size() == 2, "dilations must have 2 entries");
    p.dil_h = d[0], p.dil_w = d[1];
  }
  check(attr_int(c.attrs, "storage_order", 0) == 0, "storage_order 1 is not supported");
  p.count_include_pad = attr_int(c.attrs, "count_include_pad", 0) != 0;
  const bool ceil_mode = attr_int(c.attrs, "ceil_mode", 0) != 0;
  const std::string auto_pad = attr_string(c.attrs, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const bool upper = auto_pad == "SAME_UPPER";
    std::tie(p.pad_t, p.pad_b) = same_pads(p.h, p.kh, p.stride_h, p.dil_h, upper);
    std::tie(p.pad_l, p.pad_r) = same_pads(p.w, p.kw, p.stride_w, p.dil_w, upper);
  } else if (auto_pad == "NOTSET") {
    auto pads = attr_ints(c.attrs, "pads");
    check(pads.empty() || pads.size() == 4, "pads must have 4 entries");
    if (pads.size() == 4) p.pad_t = pads[0], p.pad_l = pads[1], p.pad_b = pads[2], p.pad_r = pads[3];
  } else {
    check(auto_pad == "VALID", "unknown auto_pad '" + auto_pad + "'");
  }
  p.out_h = pooled_size(p.h, p.kh, p.stride_h, p.dil_h, p.pad_t, p.pad_b, ceil_mode);
  p.out_w = pooled_size(p.w, p.kw, p.stride_w, p.dil_w, p.pad_l, p.pad_r, ceil_mode);
  set_layouts(p, c);
  Tensor y = alloc_f32({p.n, p.c, p.out_h, p.out_w});
  impl(p, f32(x, "X"), mut<float>(y));
  return {y};
}

// Global pooling = one window covering the whole plane.
std::vector<Tensor> global_pool(PoolImpl impl, const KernelCall& c, bool is_max) {
  const Tensor& x = c.required(0);
  check(x.shape.size() == 4, "only NCHW global pooling is supported, input is " +
                                 shape_str(x.shape));
  PoolParams p;
  p.max = is_max;
  p.n = x.shape[0], p.c = x.shape[1], p.h = x.shape[2], p.w = x.shape[3];
  p.kh = p.h, p.kw = p.w, p.out_h = 1, p.out_w = 1;
  set_layouts(p, c);
  Tensor y = alloc_f32({p.n, p.c, 1, 1});
  impl(p, f32(x, "X"), mut<float>(y));
  return {y};
}

// MaxPool on uint8 / int8, as ONNX allows from opset 12 (rules/onnx/qdq_forms.yaml leaves it
// between quantized units): every such integer is exact in float32 and the max picks one of
// them, so the float kernel on the widened input, narrowed back, is the integer max pool.
std::vector<Tensor> max_pool(PoolImpl impl, const KernelCall& c) {
  const Tensor* x = c.input(0);
  if (!x || (x->dtype != DType::UInt8 && x->dtype != DType::Int8)) return pool(impl, c, true);
  check(x->has_data(), "X has no data");
  const bool u8 = x->dtype == DType::UInt8;
  const std::int64_t n = x->num_elements();
  Tensor xf = alloc_f32(x->shape);
  for (std::int64_t i = 0; i < n; ++i)
    mut<float>(xf)[i] = u8 ? static_cast<float>(x->as<std::uint8_t>()[i]) : static_cast<float>(x->as<std::int8_t>()[i]);
  KernelCall fc = c;
  fc.inputs[0] = &xf;
  const Tensor yf = pool(impl, fc, true).at(0);
  c.out_layout = fc.out_layout;
  Tensor y = alloc(x->dtype, yf.shape);
  const float* yp = yf.as<float>();
  for (std::int64_t i = 0, m = yf.num_elements(); i < m; ++i) {
    if (u8)
      mut<std::uint8_t>(y)[i] = static_cast<std::uint8_t>(yp[i]);
    else
      mut<std::int8_t>(y)[i] = static_cast<std::int8_t>(yp[i]);
  }
  return {y};
}

}  // namespace

void register_pool_ops(KernelRegistry& r, PoolImpl impl, bool channels_last) {
  const LayoutSupport ls = channels_last ? LayoutSupport::ChannelsLast : LayoutSupport::PlainOnly;
  // MaxPool pools uint8 / int8 in the layout they come in (quantized models keep them NHWC).
  r.add("MaxPool", [impl](const KernelCall& c) { return max_pool(impl, c); },
        channels_last ? LayoutSupport::ChannelsLastAnyType : LayoutSupport::PlainOnly);
  r.add("AveragePool", [impl](const KernelCall& c) { return pool(impl, c, false); }, ls);
  r.add("GlobalAveragePool", [impl](const KernelCall& c) { return global_pool(impl, c, false); }, ls);
  r.add("GlobalMaxPool", [impl](const KernelCall& c) { return global_pool(impl, c, true); }, ls);
}

}  // namespace graphfuse::kernels
