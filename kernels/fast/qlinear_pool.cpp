// The fast set's com.microsoft.QLinearGlobalAveragePool: one pass over the uint8/int8 input,
// in NCHW or NHWC, instead of the reference kernel's three (dequantize, pool, quantize). Each
// element's dequantized value comes from a 256-entry table of the reference expression
// float(x - zero_point) * scale, summed in double per channel in the order the reference
// pool sums it (row by row), so the result is the reference kernel's, bit for bit.
#include <cstdint>
#include <vector>

#include "core/util.h"
#include "fast/layout.h"
#include "reference/quant_common.h"

namespace graphfuse::kernels {

namespace {

using namespace quant;

template <class T>
void channel_means(const T* x, const double* table, bool channels_last, std::int64_t n, std::int64_t channels,
                   std::int64_t positions, double* mean) {
  const auto index = [](T v) { return static_cast<std::uint8_t>(v); };
  for (std::int64_t b = 0; b < n; ++b) {
    double* m = mean + b * channels;
    const T* xb = x + b * channels * positions;
    if (channels_last) {
      std::vector<double> acc(static_cast<std::size_t>(channels), 0.0);
      for (std::int64_t p = 0; p < positions; ++p)
        for (std::int64_t ch = 0; ch < channels; ++ch) acc[static_cast<std::size_t>(ch)] += table[index(xb[p * channels + ch])];
      for (std::int64_t ch = 0; ch < channels; ++ch) m[ch] = acc[static_cast<std::size_t>(ch)];
    } else {
      for (std::int64_t ch = 0; ch < channels; ++ch) {
        double acc = 0.0;
        for (std::int64_t p = 0; p < positions; ++p) acc += table[index(xb[ch * positions + p])];
        m[ch] = acc;
      }
    }
    for (std::int64_t ch = 0; ch < channels; ++ch) m[ch] /= static_cast<double>(std::max<std::int64_t>(1, positions));
  }
}

std::vector<Tensor> qlinear_global_average_pool(const KernelCall& c) {
  const KernelFn& reference = *registry(KernelSet::Reference).find("com.microsoft.QLinearGlobalAveragePool");
  const Tensor* x = c.input(0);
  const Tensor *xs = scalar_input(c, 1), *ys = scalar_input(c, 3);
  const Tensor *xz = c.input(2), *yz = c.input(4);
  const bool usable = x && x->has_data() && x->shape.size() == 4 && (x->dtype == DType::UInt8 || x->dtype == DType::Int8) &&
                      xs && xs->dtype == DType::Float32 && ys && ys->dtype == DType::Float32 &&
                      (!xz || (scalar_input(c, 2) && xz->dtype == x->dtype)) &&
                      (!yz || (scalar_input(c, 4) && (yz->dtype == DType::UInt8 || yz->dtype == DType::Int8))) &&
                      attr_int(c.attrs, "channels_last", 0) == 0 && x->shape[2] * x->shape[3] > 0;
  // Anything else, an empty plane included (which the reference refuses), is the reference's.
  if (!usable) return fast::run_plain(reference, c);
  // The reference's DequantizeLinear value of every byte.
  const float s = xs->as<float>()[0];
  const std::int64_t z = param_z(xz, 0);
  double table[256];
  for (int b = 0; b < 256; ++b) {
    const std::int64_t v = x->dtype == DType::UInt8 ? b : static_cast<std::int8_t>(static_cast<std::uint8_t>(b));
    table[b] = static_cast<float>(v - z) * s;
  }
  const std::int64_t n = x->shape[0], channels = x->shape[1], positions = x->shape[2] * x->shape[3];
  const bool channels_last = c.layout(0) == Layout::ChannelsLast;
  std::vector<double> mean(static_cast<std::size_t>(n * channels));
  if (x->dtype == DType::UInt8)
    channel_means(x->as<std::uint8_t>(), table, channels_last, n, channels, positions, mean.data());
  else
    channel_means(x->as<std::int8_t>(), table, channels_last, n, channels, positions, mean.data());
  // The reference's GlobalAveragePool output (float) quantized by its QuantizeLinear.
  const DType out = yz ? yz->dtype : x->dtype;
  const auto [lo, hi] = type_range(out);
  const float y_scale = ys->as<float>()[0];
  const std::int64_t y_zero = param_z(yz, 0);
  Tensor y = alloc(out, {n, channels, 1, 1});
  for (std::int64_t i = 0; i < n * channels; ++i)
    store(y, i, quantize(static_cast<float>(mean[static_cast<std::size_t>(i)]) / y_scale, y_zero, lo, hi));
  return {y};
}

}  // namespace

void register_fast_qlinear_pool(KernelRegistry& r) {
  r.add("com.microsoft.QLinearGlobalAveragePool", qlinear_global_average_pool, LayoutSupport::ChannelsLastAnyType);
}

}  // namespace graphfuse::kernels
