// The fast com.microsoft.QLinearAdd / QLinearMul (kernels/fast/qlinear_binary.cpp, one
// vector pass) against the reference kernels (dequantize, float op, quantize): the same
// integers on seeded random tensors, uint8 and int8, scales that saturate and scales that
// put many values on rounding ties, and a broadcasting pair (the reference path).
#include <random>

#include "kernels/test_util.h"

namespace {

template <class T>
Tensor typed(DType dtype, Shape shape, const std::vector<T>& v) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  return t;
}

template <class T>
Tensor random_ints(std::mt19937& g, DType dtype, Shape shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<T> v(static_cast<std::size_t>(n));
  const int lo = dtype == DType::Int8 ? -128 : 0;
  for (T& e : v) e = static_cast<T>(std::uniform_int_distribution<int>(lo, lo + 255)(g));
  return typed(dtype, std::move(shape), v);
}

template <class Int>
void check_op(const std::string& op, DType dtype, std::mt19937& g) {
  const int lo = dtype == DType::Int8 ? -128 : 0;
  auto zp = [&] { return typed(dtype, {}, std::vector<Int>{static_cast<Int>(std::uniform_int_distribution<int>(lo, lo + 255)(g))}); };
  // Power-of-two scales put many results exactly halfway between two integers; the
  // tiny output scale saturates nearly everything.
  const float scales[][3] = {{0.02f, 0.03f, 0.05f}, {0.5f, 0.25f, 1.0f}, {0.125f, 0.5f, 2.0f}, {0.1f, 0.2f, 1e-6f}};
  const Shape shapes[] = {{1, 64, 17, 19}, {3, 1000}, {7}};
  for (const auto& s : scales)
    for (const Shape& shape : shapes) {
      const std::vector<Tensor> in{random_ints<Int>(g, dtype, shape), T({}, {s[0]}), zp(),
                                   random_ints<Int>(g, dtype, shape), T({}, {s[1]}), zp(),
                                   T({}, {s[2]}), zp()};
      const auto f = fast(op, in), e = ref(op, in);
      EXPECT_TRUE(f[0] == e[0]) << op << " " << graphfuse::dtype_name(dtype) << " scales " << s[0] << " " << s[1]
                                << " " << s[2] << " over " << shape.size() << "-d: the integers differ";
    }
  // Broadcasting ([2, 3, 4] with [4]) goes to the reference kernel; still the same result.
  const std::vector<Tensor> in{random_ints<Int>(g, dtype, {2, 3, 4}), T({}, {0.1f}), zp(), random_ints<Int>(g, dtype, {4}),
                               T({}, {0.2f}), zp(), T({}, {0.3f}), zp()};
  EXPECT_TRUE(fast(op, in)[0] == ref(op, in)[0]) << op << " with broadcasting";
}

TEST(FastVsReference, QLinearAddAndMulAreBitExact) {
  std::mt19937 g(77);
  for (const char* op : {"com.microsoft.QLinearAdd", "com.microsoft.QLinearMul"}) {
    check_op<std::uint8_t>(op, DType::UInt8, g);
    check_op<std::int8_t>(op, DType::Int8, g);
  }
}

}  // namespace
