// The fast set's com.microsoft.QLinearAdd and QLinearMul: one vectorized pass over inputs of
// one shape (kernels/fast/quant_loops.cpp) instead of the reference kernels' three
// (dequantize both, the float op, quantize), with the same integers. Broadcasting inputs,
// and scales the vector loop cannot take, go to the reference kernels.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "core/util.h"
#include "fast/layout.h"
#include "fast/quant_loops.h"
#include "reference/quant_common.h"

namespace graphfuse::kernels {

namespace {

using namespace quant;

// How many consecutive elements of `big` each element of `small` pairs with under ONNX
// broadcasting, when `small` is `big`'s shape with its trailing dimensions set to 1
// (leading 1s implied): 1 for equal shapes; 0 for any other pairing.
std::int64_t row_broadcast_inner(const Shape& big, const Shape& small) {
  if (small.size() > big.size()) return 0;
  const std::size_t lead = big.size() - small.size();
  std::int64_t inner = 1;
  std::size_t k = big.size();  // dims [k, rank) of small are 1
  while (k > 0) {
    const std::int64_t s = k - 1 < lead ? 1 : small[k - 1 - lead];
    if (s != 1) break;
    inner *= big[k - 1];
    --k;
  }
  for (std::size_t i = 0; i < k; ++i)
    if ((i < lead ? 1 : small[i - lead]) != big[i]) return 0;
  return inner;
}

KernelFn binary(std::string op, bool mul) {
  return [op, mul](const KernelCall& c) -> std::vector<Tensor> {
    const Tensor *a = c.input(0), *b = c.input(3);
    const Tensor *as = scalar_input(c, 1), *bs = scalar_input(c, 4), *ys = scalar_input(c, 6);
    const Tensor *az = c.input(2), *bz = c.input(5), *yz = c.input(7);
    auto scale_ok = [](const Tensor* s) { return s && s->dtype == DType::Float32 && std::isfinite(s->as<float>()[0]); };
    auto zero_ok = [&](const Tensor* z) { return !z || (z->has_data() && z->num_elements() == 1 && z->dtype == a->dtype); };
    const bool vector = a && b && a->has_data() && b->has_data() && a->dtype == b->dtype &&
                        (a->dtype == DType::UInt8 || a->dtype == DType::Int8) && scale_ok(as) && scale_ok(bs) &&
                        scale_ok(ys) && ys->as<float>()[0] != 0.0f && zero_ok(az) && zero_ok(bz) && zero_ok(yz);
    // The broadcast operand goes second: a + b and a * b are the same float either way round.
    const bool swap = vector && a->num_elements() < b->num_elements();
    if (swap) {
      std::swap(a, b);
      std::swap(as, bs);
      std::swap(az, bz);
    }
    const KernelFn& reference = *registry(KernelSet::Reference).find(op);
    // Channels-last inputs (the executor sends same-shape operands in one layout, and
    // scalars or per-channel operands as they are): the bytes pair up element for element,
    // or a per-channel operand pairs with the innermost dimension.
    const bool channels_last = c.layout(0) == Layout::ChannelsLast || c.layout(3) == Layout::ChannelsLast;
    std::int64_t inner = 0, channels = 0, b_batch_stride = 0;
    if (vector && !channels_last) {
      inner = row_broadcast_inner(a->shape, b->shape);
    } else if (vector && (a->shape == b->shape || b->num_elements() == 1)) {
      inner = b->num_elements() == 1 ? a->num_elements() : 1;
    } else if (vector && a->shape.size() == 4) {
      const Shape& sb = b->shape;
      const std::int64_t nb = sb.size() == 4 ? sb[0] : 1;
      const bool per_channel = (sb.size() == 4 || sb.size() == 3) && sb[sb.size() - 3] == a->shape[1] &&
                               sb[sb.size() - 2] == 1 && sb.back() == 1 && (nb == 1 || nb == a->shape[0]);
      if (per_channel) {
        channels = a->shape[1];
        b_batch_stride = nb == 1 ? 0 : channels;
      }
    }
    if (inner == 0 && channels == 0) return channels_last ? fast::run_plain(reference, c) : reference(c);
    const auto z = [](const Tensor* t) { return static_cast<std::int32_t>(param_z(t, 0)); };
    Tensor y = alloc_unfilled(a->dtype, a->shape);
    const std::int64_t n = a->num_elements();
    const fast::QLinearBinaryParams q{mul, as->as<float>()[0], z(az), bs->as<float>()[0], z(bz), ys->as<float>()[0], z(yz)};
    if (channels > 0) {
      const std::int64_t batch = a->shape[0], positions = a->shape[2] * a->shape[3];
      if (a->dtype == DType::UInt8)
        fast::qlinear_binary_per_channel(q, a->as<std::uint8_t>(), b->as<std::uint8_t>(), batch, positions, channels,
                                         b_batch_stride, mut<std::uint8_t>(y));
      else
        fast::qlinear_binary_per_channel(q, a->as<std::int8_t>(), b->as<std::int8_t>(), batch, positions, channels,
                                         b_batch_stride, mut<std::int8_t>(y));
    } else if (a->dtype == DType::UInt8) {
      fast::qlinear_binary(q, a->as<std::uint8_t>(), b->as<std::uint8_t>(), n, inner, mut<std::uint8_t>(y));
    } else {
      fast::qlinear_binary(q, a->as<std::int8_t>(), b->as<std::int8_t>(), n, inner, mut<std::int8_t>(y));
    }
    if (channels_last) c.out_layout = Layout::ChannelsLast;
    return {y};
  };
}

}  // namespace

void register_fast_qlinear_binary(KernelRegistry& r) {
  r.add("com.microsoft.QLinearAdd", binary("com.microsoft.QLinearAdd", false), LayoutSupport::Elementwise);
  r.add("com.microsoft.QLinearMul", binary("com.microsoft.QLinearMul", true), LayoutSupport::Elementwise);
}

}  // namespace graphfuse::kernels
