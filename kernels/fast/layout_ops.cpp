// Concat and Pad in the executor's channels-last mode: DenseNet's blocks concatenate NHWC
// convolution outputs along channels, and torch exports every AveragePool of a transition
// with an all-zero Pad in front. Without these, each of them sent its inputs back to NCHW
// and the next convolution forward to NHWC again.

#include <cstring>
#include <string>

#include "core/util.h"
#include "fast/buffers.h"
#include "fast/layout.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels {

namespace {

// n channels of the concatenation from src to dst, through the plan's epilogue (a fused
// BatchNormalization's per-channel mul/add from channel `first` on, and its Relu) or copied.
void copy_channels(const float* src, float* dst, std::int64_t n, const Epilogue* e, std::int64_t first) {
  if (!e) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  const float* mul = e->mul.data() + first;
  const float* add = e->add.data() + first;
  if (e->act.kind == Activation::Relu) {
    // As the Relu kernels compute it: NaN becomes 0.
    for (std::int64_t j = 0; j < n; ++j) {
      const float v = src[j] * mul[j] + add[j];
      dst[j] = v > 0.0f ? v : 0.0f;
    }
  } else {
    for (std::int64_t j = 0; j < n; ++j) dst[j] = src[j] * mul[j] + add[j];
  }
}

// The reference Concat (plain NCHW), then the plan's epilogue in a pass of its own (the
// executor's channels-last mode off: not the case that pays).
std::vector<Tensor> concat_plain(const KernelFn& ref, const KernelCall& c) {
  std::vector<Tensor> y = fast::run_plain(ref, c);
  if (c.epilogue) y.at(0) = apply_epilogue(y.at(0), *c.epilogue);
  return y;
}

// Concat of 4-D float32 tensors along channels, in NHWC: per pixel, each input's channels
// in turn, normalized on the way when the plan fused the BatchNormalization that alone reads
// the result (epilogue_fusion.h). Any other Concat runs the reference on NCHW inputs.
std::vector<Tensor> concat(const KernelFn& ref, const KernelCall& c) {
  const Tensor& first = c.required(0);
  bool nhwc = first.shape.size() == 4 && first.dtype == DType::Float32 && c.prefer_channels_last;
  if (nhwc) nhwc = normalize_axis(attr_int(c.attrs, "axis", 0), 4) == 1;
  std::vector<const Tensor*> parts;
  for (const Tensor* t : c.inputs) {
    if (!t) continue;
    parts.push_back(t);
    nhwc = nhwc && t->dtype == DType::Float32 && t->has_data() && t->shape.size() == 4 && t->shape[0] == first.shape[0] &&
           t->shape[2] == first.shape[2] && t->shape[3] == first.shape[3];
  }
  if (!nhwc) return concat_plain(ref, c);
  // Inputs that arrived NCHW (the first one may) are converted here.
  std::vector<Tensor> converted;
  converted.reserve(parts.size());
  std::vector<const float*> src;
  std::vector<std::int64_t> channels;
  std::int64_t total = 0;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    const Tensor* t = c.inputs[k];
    if (!t) continue;
    if (c.layout(k) != Layout::ChannelsLast && t->shape[1] > 1 && t->shape[2] * t->shape[3] > 1) {
      converted.push_back(fast::convert_layout(*t, Layout::Plain, Layout::ChannelsLast));
      t = &converted.back();
    }
    src.push_back(t->as<float>());
    channels.push_back(t->shape[1]);
    total += t->shape[1];
  }
  Shape out = first.shape;
  out[1] = total;
  const Epilogue* e = c.epilogue;
  if (e) check_epilogue_channels(*e, total);
  Tensor y = fast::alloc_output_f32(out);
  float* yp = mut<float>(y);
  const std::int64_t pixels = out[0] * out[2] * out[3];
  const std::int64_t grain = std::max<std::int64_t>(1, (std::int64_t{1} << 14) / std::max<std::int64_t>(total, 1));
  fast::team_for(pixels, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t p = begin; p < end; ++p) {
      std::int64_t off = 0;
      for (std::size_t k = 0; k < src.size(); ++k) {
        copy_channels(src[k] + p * channels[k], yp + p * total + off, channels[k], e, off);
        off += channels[k];
      }
    }
  });
  c.out_layout = Layout::ChannelsLast;
  return {y};
}

// Pad with every pad 0 is the identity (torch's AveragePool export): the input passes
// through in its layout. Any other Pad, and any input the reference would refuse (checked
// here the same way, so both kernel sets accept exactly the same calls), runs the reference
// on NCHW.
std::vector<Tensor> pad(const KernelFn& ref, const KernelCall& c) {
  const Tensor& x = c.required(0);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::size_t es = dtype_size(x.dtype);
  bool identity = x.has_data() && es > 0 && x.data->size() / es >= static_cast<std::size_t>(checked_numel(x.shape));
  std::vector<std::int64_t> spec = c.input(1) ? int_values(c.required(1), "pads") : attr_ints(c.attrs, "pads");
  std::size_t axes = static_cast<std::size_t>(rank);
  if (const Tensor* a = c.input(3)) {
    const auto v = int_values(*a, "axes");
    axes = v.size();
    for (std::int64_t ax : v) identity = identity && rank > 0 && ax >= -rank && ax < rank;
  }
  identity = identity && spec.size() == 2 * axes;
  for (std::int64_t v : spec) identity = identity && v == 0;
  const std::string mode = attr_string(c.attrs, "mode", "constant");
  identity = identity && (mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap");
  if (const Tensor* v = c.input(2))
    identity = identity && v->dtype == x.dtype && v->num_elements() == 1 && v->has_data() && v->data->size() >= es;
  if (!identity) return fast::run_plain(ref, c);
  c.out_layout = c.layout(0);
  return {x};
}

}  // namespace

void register_fast_layout_ops(KernelRegistry& r) {
  KernelFn concat_ref = *r.find("Concat");
  r.add("Concat", [concat_ref](const KernelCall& c) { return concat(concat_ref, c); }, LayoutSupport::ChannelsLast);
  r.set_epilogue_support("Concat", EpilogueSupport::ChannelAffine);
  KernelFn pad_ref = *r.find("Pad");
  r.add("Pad", [pad_ref](const KernelCall& c) { return pad(pad_ref, c); }, LayoutSupport::ChannelsLast);
}

}  // namespace graphfuse::kernels
