// Activation specs and convolution geometry (ONNX and TF attribute conventions).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/util.h"
#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels {

float ActivationSpec::apply(float x) const {
  switch (kind) {
    case Activation::None: return x;
    case Activation::Relu: return x > 0.0f ? x : 0.0f;
    case Activation::Clip: return std::min(std::max(x, alpha), beta);
    case Activation::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Activation::Tanh: return std::tanh(x);
    case Activation::LeakyRelu: return x >= 0.0f ? x : alpha * x;
    case Activation::HardSigmoid: return std::max(0.0f, std::min(1.0f, alpha * x + beta));
    case Activation::HardSwish: return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f));
  }
  return x;
}

ActivationSpec parse_activation(std::string_view name, const std::vector<float>& params) {
  auto param = [&](std::size_t i, float def) { return i < params.size() ? params[i] : def; };
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n.empty() || n == "none" || n == "identity") return {};
  if (n == "relu") return {Activation::Relu};
  if (n == "relu6") return {Activation::Clip, 0.0f, 6.0f};
  if (n == "clip")
    return {Activation::Clip, param(0, std::numeric_limits<float>::lowest()),
            param(1, std::numeric_limits<float>::max())};
  if (n == "sigmoid") return {Activation::Sigmoid};
  if (n == "tanh") return {Activation::Tanh};
  if (n == "leakyrelu") return {Activation::LeakyRelu, param(0, 0.01f)};
  if (n == "hardsigmoid") return {Activation::HardSigmoid, param(0, 0.2f), param(1, 0.5f)};
  if (n == "hardswish") return {Activation::HardSwish};
  fail("unknown activation '" + std::string(name) +
       "' (expected Relu, Relu6, Clip, Sigmoid, Tanh, LeakyRelu, HardSigmoid, HardSwish)");
}

void ConvParams::finalize() {
  if (n <= 0 || c_in <= 0 || h <= 0 || w <= 0) fail("convolution input must be non-empty");
  if (c_out <= 0 || kh <= 0 || kw <= 0) fail("convolution filter must be non-empty");
  if (group <= 0 || c_in % group != 0 || c_out % group != 0)
    fail("group " + std::to_string(group) + " must divide input channels " + std::to_string(c_in) +
         " and output channels " + std::to_string(c_out));
  if (stride_h <= 0 || stride_w <= 0 || dil_h <= 0 || dil_w <= 0) fail("strides and dilations must be positive");
  if (pad_t < 0 || pad_l < 0 || pad_b < 0 || pad_r < 0) fail("pads must be non-negative");
  const std::int64_t ekh = (kh - 1) * dil_h + 1, ekw = (kw - 1) * dil_w + 1;
  out_h = (h + pad_t + pad_b - ekh) / stride_h + 1;
  out_w = (w + pad_l + pad_r - ekw) / stride_w + 1;
  if (out_h <= 0 || out_w <= 0) fail("convolution output would be empty (kernel larger than input)");
}

std::vector<std::int64_t> ConvParams::input_shape() const {
  return layout == ConvLayout::NchwOihw ? Shape{n, c_in, h, w} : Shape{n, h, w, c_in};
}
std::vector<std::int64_t> ConvParams::weight_shape() const {
  return layout == ConvLayout::NchwOihw ? Shape{c_out, c_in / group, kh, kw}
                                        : Shape{kh, kw, c_in / group, c_out};
}
std::vector<std::int64_t> ConvParams::output_shape() const {
  return layout == ConvLayout::NchwOihw ? Shape{n, c_out, out_h, out_w}
                                        : Shape{n, out_h, out_w, c_out};
}
double ConvParams::flops() const {
  return 2.0 * static_cast<double>(n * c_out * out_h * out_w) *
         static_cast<double>((c_in / group) * kh * kw);
}

std::pair<std::int64_t, std::int64_t> same_pads(std::int64_t in, std::int64_t k, std::int64_t stride,
                                                std::int64_t dilation, bool upper) {
  // Node attributes are checked before any kernel runs (core/op_checks.cpp); this guards
  // the public function itself, whose first line divides by the stride.
  if (stride <= 0 || dilation <= 0) fail("strides and dilations must be positive");
  const std::int64_t out = (in + stride - 1) / stride;
  const std::int64_t total =
      std::max<std::int64_t>(0, (out - 1) * stride + (k - 1) * dilation + 1 - in);
  // SAME_UPPER (TF "SAME") puts the odd pixel at the end, SAME_LOWER at the start.
  const std::int64_t small = total / 2, big = total - total / 2;
  return upper ? std::pair{small, big} : std::pair{big, small};
}

namespace {
// [a, b] from a 2-vector, or the H/W entries of a 4-vector in `hw_at` positions.
std::pair<std::int64_t, std::int64_t> pair_attr(const Attributes& a, std::string_view name,
                                                bool allow4) {
  auto v = attr_ints(a, name);
  if (v.empty()) return {1, 1};
  if (v.size() == 2) return {v[0], v[1]};
  if (v.size() == 1) return {v[0], v[0]};
  if (allow4 && v.size() == 4) return {v[1], v[2]};  // NHWC form [1, h, w, 1]
  fail("attribute '" + std::string(name) + "' must have 2 entries, has " +
       std::to_string(v.size()));
}
}  // namespace

// Every executed convolution parses its attributes here (52 times per mobilenet_v2 run),
// so error messages are built only when a check fails: `if (!ok) fail(...)`, never
// `check(ok, message)`, whose message (three shape_str calls) is formatted up front.

ConvParams conv_params_onnx(const Attributes& attrs, const Shape& x, const Shape& w) {
  if (x.size() != 4 || w.size() != 4)
    fail("only 2-D convolution is supported (input " + shape_str(x) + ", weights " + shape_str(w) + ")");
  ConvParams p;
  p.layout = ConvLayout::NchwOihw;
  p.n = x[0], p.c_in = x[1], p.h = x[2], p.w = x[3];
  p.c_out = w[0], p.kh = w[2], p.kw = w[3];
  p.group = attr_int(attrs, "group", 1);
  if (w[1] * p.group != p.c_in)
    fail("weights " + shape_str(w) + " with group " + std::to_string(p.group) + " do not fit input " +
         shape_str(x));
  auto ks = attr_ints(attrs, "kernel_shape");
  if (!ks.empty() && !(ks.size() == 2 && ks[0] == p.kh && ks[1] == p.kw))
    fail("kernel_shape does not match weights " + shape_str(w));
  std::tie(p.stride_h, p.stride_w) = pair_attr(attrs, "strides", false);
  std::tie(p.dil_h, p.dil_w) = pair_attr(attrs, "dilations", false);
  const std::string auto_pad = attr_string(attrs, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const bool upper = auto_pad == "SAME_UPPER";
    std::tie(p.pad_t, p.pad_b) = same_pads(p.h, p.kh, p.stride_h, p.dil_h, upper);
    std::tie(p.pad_l, p.pad_r) = same_pads(p.w, p.kw, p.stride_w, p.dil_w, upper);
  } else if (auto_pad == "NOTSET") {
    auto pads = attr_ints(attrs, "pads");
    if (!pads.empty() && pads.size() != 4) fail("pads must have 4 entries");
    if (pads.size() == 4) p.pad_t = pads[0], p.pad_l = pads[1], p.pad_b = pads[2], p.pad_r = pads[3];
  } else {
    if (auto_pad != "VALID") fail("unknown auto_pad '" + auto_pad + "'");
  }
  p.finalize();
  return p;
}

ConvParams conv_params_tf(const Attributes& attrs, const Shape& x, const Shape& w) {
  if (x.size() != 4 || w.size() != 4)
    fail("Conv2D needs NHWC input and HWIO filter (input " + shape_str(x) + ", filter " + shape_str(w) + ")");
  const std::string fmt = attr_string(attrs, "data_format", "NHWC");
  if (fmt != "NHWC") fail("Conv2D data_format '" + fmt + "' is not supported (only NHWC)");
  ConvParams p;
  p.layout = ConvLayout::NhwcHwio;
  p.n = x[0], p.h = x[1], p.w = x[2], p.c_in = x[3];
  p.kh = w[0], p.kw = w[1], p.c_out = w[3];
  // TF treats an input depth that is a multiple of the filter's as a grouped convolution.
  if (w[2] <= 0 || p.c_in % w[2] != 0)
    fail("filter " + shape_str(w) + " does not fit input depth " + std::to_string(p.c_in));
  p.group = p.c_in / w[2];
  std::tie(p.stride_h, p.stride_w) = pair_attr(attrs, "strides", true);
  std::tie(p.dil_h, p.dil_w) = pair_attr(attrs, "dilations", true);
  const std::string padding = attr_string(attrs, "padding", "VALID");
  if (padding == "SAME") {
    std::tie(p.pad_t, p.pad_b) = same_pads(p.h, p.kh, p.stride_h, p.dil_h, true);
    std::tie(p.pad_l, p.pad_r) = same_pads(p.w, p.kw, p.stride_w, p.dil_w, true);
  } else if (padding == "EXPLICIT") {
    // explicit_paddings: NHWC pairs [0, 0, t, b, l, r, 0, 0].
    auto e = attr_ints(attrs, "explicit_paddings");
    if (e.size() != 8) fail("explicit_paddings must have 8 entries");
    p.pad_t = e[2], p.pad_b = e[3], p.pad_l = e[4], p.pad_r = e[5];
  } else {
    if (padding != "VALID") fail("unknown padding '" + padding + "' (expected SAME, VALID or EXPLICIT)");
  }
  p.finalize();
  return p;
}

}  // namespace graphfuse::kernels
