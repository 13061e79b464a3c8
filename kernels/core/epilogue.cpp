// The executor's epilogues (graphfuse/kernels/kernel.h): which kernels take which, and their
// scalar definition.
#include <string>

#include "core/util.h"

namespace graphfuse::kernels {

bool accepts(EpilogueSupport support, const Epilogue& e) {
  const Activation a = e.act.kind;
  const bool affine = !e.mul.empty();
  switch (support) {
    case EpilogueSupport::None: return false;
    case EpilogueSupport::Relu: return !affine && a == Activation::Relu;
    case EpilogueSupport::PiecewiseLinear:
      return !affine && (a == Activation::Relu || a == Activation::LeakyRelu || a == Activation::Clip ||
                         a == Activation::HardSigmoid || a == Activation::HardSwish);
    case EpilogueSupport::ChannelAffine: return affine && (a == Activation::None || a == Activation::Relu);
  }
  return false;
}

void check_epilogue_channels(const Epilogue& e, std::int64_t channels) {
  if (!e.mul.empty() && (static_cast<std::int64_t>(e.mul.size()) != channels || e.add.size() != e.mul.size()))
    fail("the fused BatchNormalization has " + std::to_string(e.mul.size()) + " channels, its input " +
         std::to_string(channels));
}

Tensor apply_epilogue(const Tensor& y, const Epilogue& e) {
  const float* x = f32(y, "the output an epilogue applies to");
  const bool affine = !e.mul.empty();
  const std::int64_t ch = y.shape.size() >= 2 ? y.shape[1] : 1;
  if (affine) {
    check(y.shape.size() >= 2, "a per-channel epilogue needs a tensor of rank >= 2");
    check_epilogue_channels(e, ch);
  }
  Tensor out = alloc_unfilled(DType::Float32, y.shape);
  float* o = mut<float>(out);
  const std::int64_t n = y.num_elements();
  const std::int64_t inner = y.shape.size() >= 2 ? numel(Shape(y.shape.begin() + 2, y.shape.end())) : n;
  for (std::int64_t i = 0; i < n; ++i) {
    float v = x[i];
    if (affine) {
      const auto k = static_cast<std::size_t>((i / inner) % ch);
      v = v * e.mul[k] + e.add[k];
    }
    o[i] = e.act.apply(v);
  }
  return out;
}

}  // namespace graphfuse::kernels
