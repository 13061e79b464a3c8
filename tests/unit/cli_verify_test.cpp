// End-to-end checks of `graphfuse verify`, `graphfuse run` and verified rule tests.
#include <gtest/gtest.h>

#include <filesystem>

#include "unit/cli_helpers.h"

namespace fs = std::filesystem;
using namespace graphfuse::testutil;

namespace {

class CliVerifyTest : public TempDirTest {};

const std::string kChain = conv_chain(8);

// A rule that is wrong on purpose: ReLU(x) is not Sigmoid(x).
const char* kWrongRule = R"(rules:
  - name: relu_is_not_sigmoid
    pattern: ReLU(x)
    rewrite: Sigmoid(x)
)";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_F(CliVerifyTest, VerifyPassesForTheSeedRule) {
  CliRun r = run_cli("verify --rules " + src("rules/seed.yaml") + " " + write("chain.graph", kChain));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "conv2d_biasadd_relu 1")) << r.out;
  EXPECT_TRUE(has(r.out, "relu: max_abs ")) << r.out;
  EXPECT_TRUE(has(r.out, "\nPASS (1 output")) << r.out;
}

TEST_F(CliVerifyTest, VerifyFailsWithExitOneForAWrongRule) {
  CliRun r = run_cli("verify --rules " + write("wrong.yaml", kWrongRule) + " " + write("chain.graph", kChain) +
                     " --seed 3 --kernels fast --threads 1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(has(r.out, "FAIL")) << r.out;
  EXPECT_TRUE(has(r.out, "seed 3")) << r.out;
}

TEST_F(CliVerifyTest, VerifyToleranceDecides) {
  // With a huge tolerance even the wrong rule passes: the verdict is the tolerance's.
  CliRun r = run_cli("verify --rules " + write("wrong.yaml", kWrongRule) + " " + write("chain.graph", kChain) +
                     " --rtol 10 --atol 10");
  EXPECT_EQ(r.code, 0) << r.out;
  CliRun bad = run_cli("verify --rules " + src("rules/seed.yaml") + " " + write("chain.graph", kChain) +
                       " --kernels slow");
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(has(bad.out, "unknown kernel set")) << bad.out;
}

TEST_F(CliVerifyTest, VerifyFoldsBatchNormIntoTheConvolution) {
  const char* graph = R"(input x
w = Const() {shape = [8, 3, 3, 3]}
s = Const() {shape = [8]}
b = Const() {shape = [8]}
m = Const() {shape = [8]}
v = Const() {shape = [8]}
conv = Conv(x, w) {pads = [1, 1, 1, 1]}
bn = BatchNormalization(conv, s, b, m, v) {epsilon = 0.001}
lo = Const() {value = tensor(float32, [], [0.0])}
hi = Const() {value = tensor(float32, [], [6.0])}
clip = Clip(bn, lo, hi)
output clip
)";
  fs::path out = dir_ / "out.graph";
  CliRun r = run_cli("verify --rules " + src("rules/onnx/batchnorm.yaml") + " --rules " + src("rules/onnx/conv.yaml") +
                     " " + write("bn.graph", graph) + " -o " + out.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "onnx_conv_bn_fold 1")) << r.out;
  EXPECT_TRUE(has(r.out, "onnx_conv_clip 1")) << r.out;
  EXPECT_TRUE(fs::exists(out));
  // --fold off leaves the arithmetic in the graph; the numbers still agree.
  CliRun off = run_cli("verify --fold off --rules " + src("rules/onnx/batchnorm.yaml") + " " + write("bn2.graph", graph));
  EXPECT_EQ(off.code, 0) << off.out;
  EXPECT_TRUE(has(off.out, "folded 0")) << off.out;
}

TEST_F(CliVerifyTest, RunPrintsOutputsAndBenchTables) {
  std::string in = write("chain.graph", kChain);
  CliRun r = run_cli("run " + in + " --kernels reference --threads 1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "relu: float32[1, 32, 32, 8]")) << r.out;
  CliRun b = run_cli("run " + in + " --rules " + src("rules/seed.yaml") + " --bench 3 --threads 1");
  EXPECT_EQ(b.code, 0) << b.out;
  EXPECT_TRUE(has(b.out, "before rules: median")) << b.out;
  EXPECT_TRUE(has(b.out, "after rules: median")) << b.out;
  EXPECT_TRUE(has(b.out, "FusedConv2D_BiasAdd_ReLU")) << b.out;
  EXPECT_TRUE(has(b.out, "speedup: ")) << b.out;
}

TEST_F(CliVerifyTest, RuleTestsWithVerifyCheckNumerics) {
  std::string rules = write("wrong.yaml", std::string(kWrongRule) + R"(
tests:
  - name: structure right, numbers wrong
    verify: true
    input: |
      input x
      y = ReLU(x)
      output y
    expect: |
      input x
      y = Sigmoid(x)
      output y
)");
  CliRun r = run_cli("test " + rules);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(has(r.out, "numerics differ")) << r.out;
  CliRun structural = run_cli("test --no-verify " + rules);
  EXPECT_EQ(structural.code, 0) << structural.out;
  CliRun seed = run_cli("test " + src("tests/rules/verify_seed.yaml"));
  EXPECT_EQ(seed.code, 0) << seed.out;
  EXPECT_TRUE(has(seed.out, "(verified)")) << seed.out;
}

TEST_F(CliVerifyTest, ApplyFoldsTheArithmeticRulesCreate) {
  // Constants with data, so the fold can evaluate them (apply does not invent weights).
  const char* graph = R"(input x
w = Const() {value = tensor(float32, [2, 1, 1, 1], [1.0, 2.0])}
s = Const() {value = tensor(float32, [2], [1.0, 0.5])}
b = Const() {value = tensor(float32, [2], [0.0, 1.0])}
m = Const() {value = tensor(float32, [2], [0.5, 0.0])}
v = Const() {value = tensor(float32, [2], [1.0, 4.0])}
conv = Conv(x, w)
bn = BatchNormalization(conv, s, b, m, v) {epsilon = 0.0}
lo = Const() {value = tensor(float32, [], [0.0])}
hi = Const() {value = tensor(float32, [], [6.0])}
clip = Clip(bn, lo, hi)
output clip
)";
  std::string in = write("bn.graph", graph);
  fs::path out = dir_ / "out.graph";
  std::string rules = " --rules " + src("rules/onnx/batchnorm.yaml") + " --rules " + src("rules/onnx/conv.yaml");
  CliRun r = run_cli("apply" + rules + " " + in + " -o " + out.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "folded 7 nodes into constants")) << r.out;
  std::string text = slurp(out);
  // w * s / sqrt(v) = [1, 0.5]; bias b - m * s / sqrt(v) = [-0.5, 1].
  EXPECT_TRUE(has(text, "tensor(float32, [2, 1, 1, 1], [1.0, 0.5])")) << text;
  EXPECT_TRUE(has(text, "tensor(float32, [2], [-0.5, 1.0])")) << text;
  EXPECT_TRUE(has(text, "clip = com.microsoft.FusedConv(x, ")) << text;
  EXPECT_FALSE(has(text, "BatchNormalization")) << text;
  CliRun off = run_cli("apply --fold off" + rules + " " + in + " -o " + out.string());
  EXPECT_EQ(off.code, 0) << off.out;
  EXPECT_FALSE(has(off.out, "folded")) << off.out;
}
