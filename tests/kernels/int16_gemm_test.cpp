// The exact int16 product behind QLinearMatMul, MatMulInteger and MatMulIntegerToFloat
// (kernels/core/int16_gemm.cpp) against int64 sums: shapes around its 4 x 4 tiles and vector
// widths, the extremes of centred 8-bit values, and the deepest inner dimension it accepts.
#include <random>

#include "../../kernels/core/int16_gemm.h"  // internal to the kernels library
#include "kernels/test_util.h"

namespace {

using graphfuse::kernels::int16_gemm_nt;
using graphfuse::kernels::kMaxInt16GemmDepth;

std::vector<std::int32_t> naive(const std::vector<std::int16_t>& a, const std::vector<std::int16_t>& bt, std::int64_t m,
                                std::int64_t n, std::int64_t k) {
  std::vector<std::int32_t> y(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::int64_t s = 0;
      for (std::int64_t q = 0; q < k; ++q)
        s += std::int64_t{a[static_cast<std::size_t>(i * k + q)]} * bt[static_cast<std::size_t>(j * k + q)];
      y[static_cast<std::size_t>(i * n + j)] = static_cast<std::int32_t>(s);
    }
  return y;
}

TEST(Int16Gemm, EqualsInt64SumsOnEveryTileAndTailShape) {
  std::mt19937 g(17);
  std::uniform_int_distribution<int> v(-255, 255);
  for (std::int64_t m : {1, 3, 4, 5, 9})
    for (std::int64_t n : {1, 2, 4, 7, 13})
      for (std::int64_t k : {1, 7, 8, 16, 31, 32, 33, 100}) {
        std::vector<std::int16_t> a(static_cast<std::size_t>(m * k)), bt(static_cast<std::size_t>(n * k));
        for (auto& e : a) e = static_cast<std::int16_t>(v(g));
        for (auto& e : bt) e = static_cast<std::int16_t>(v(g));
        std::vector<std::int32_t> y(static_cast<std::size_t>(m * n), -1);
        int16_gemm_nt(a.data(), bt.data(), m, n, k, y.data());
        EXPECT_EQ(naive(a, bt, m, n, k), y) << m << " x " << k << " x " << n;
      }
}

TEST(Int16Gemm, DeepestInnerDimensionAtTheExtremesDoesNotOverflow) {
  const std::int64_t k = kMaxInt16GemmDepth;
  for (std::int16_t sign : {std::int16_t{1}, std::int16_t{-1}}) {
    std::vector<std::int16_t> a(static_cast<std::size_t>(k), 255), bt(static_cast<std::size_t>(2 * k), static_cast<std::int16_t>(sign * 255));
    std::vector<std::int32_t> y(2);
    int16_gemm_nt(a.data(), bt.data(), 1, 2, k, y.data());
    EXPECT_EQ(std::int64_t{sign} * k * 255 * 255, y[0]);
    EXPECT_EQ(y[0], y[1]);
  }
}

}  // namespace
