// compare_outputs' verdict (graphfuse verify): element-wise within atol + rtol|e|, and
// norm-wise within rtol of the output's scale.
#include "kernels/test_util.h"

namespace {

// An output of scale 2e-5 off by 5e-6 everywhere (25%): every element is within atol 1e-5,
// but the error is large for the whole output, so it fails.
TEST(CompareOutputs, AtolDoesNotExcuseAnErrorLargeForTheWholeOutput) {
  auto d = gk::compare_outputs({T({2}, {2.5e-5f, 1.5e-5f})}, {T({2}, {2e-5f, 1e-5f})}, 1e-4, 1e-5);
  EXPECT_FALSE(d[0].pass);
  EXPECT_NEAR(d[0].max_abs / d[0].max_ref, 0.25, 1e-3);
}

// Outputs of scale ~1 where one element cancels to near zero: that element is judged by
// atol, and the norm-wise error is small, so it passes although max_rel is large.
TEST(CompareOutputs, CancellationToNearZeroPasses) {
  auto d = gk::compare_outputs({T({3}, {1.0f, -2.0f, 1.2e-6f})}, {T({3}, {1.0f, -2.0f, 1e-6f})}, 1e-4, 1e-5);
  EXPECT_TRUE(d[0].pass);
  EXPECT_GT(d[0].max_rel, 1e-2);
  EXPECT_LT(d[0].max_abs / d[0].max_ref, 1e-6);
}

// An output entirely below atol is judged by atol alone.
TEST(CompareOutputs, AnOutputBelowAtolIsJudgedByAtol) {
  auto d = gk::compare_outputs({T({2}, {4e-6f, 0.0f})}, {T({2}, {2e-6f, 1e-6f})}, 1e-4, 1e-5);
  EXPECT_TRUE(d[0].pass);
  d = gk::compare_outputs({T({2}, {4e-6f, 0.0f})}, {T({2}, {2e-6f, 1e-6f})}, 1e-4, 1e-7);
  EXPECT_FALSE(d[0].pass);
}

}  // namespace
