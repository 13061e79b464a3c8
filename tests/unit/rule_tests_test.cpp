// The rule-file test runner: pass/fail counts, readable diffs, --update, bad inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "graphfuse/rule_tests.h"
#include "unit/cli_helpers.h"

namespace fs = std::filesystem;
using namespace graphfuse;
using graphfuse::testutil::slurp;

namespace {

const char* kRuleFile = R"(rules:
  - name: conv2d_biasadd_relu
    pattern: |
      conv = Conv2D(x, w)
      bias = BiasAdd(conv, b)
      ReLU(bias)
    rewrite: |
      FusedConv2D_BiasAdd_ReLU(x, w, b) {...conv, activation = "ReLU"}
tests:
  - name: fires
    input: |
      input x
      w = Const()
      b = Const()
      conv = Conv2D(x, w) {padding = "SAME"}
      bias = BiasAdd(conv, b)
      relu = ReLU(bias)
      output relu
    expect: |
      input x
      relu = Wrong(x)
      output relu
  - name: does not fire
    input: |
      input x
      w = Const()
      relu = ReLU(x)
      output relu
    expect: unchanged
)";

class RuleTestRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: ctest runs the tests of this fixture as parallel processes.
    dir_ = fs::temp_directory_path() /
           (std::string("graphfuse_rule_tests_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    file_ = dir_ / "rules.yaml";
    std::ofstream(file_) << kRuleFile;
  }
  void TearDown() override { fs::remove_all(dir_); }
  RuleTestCounts run(bool update, std::string* log = nullptr, const std::string& filter = "") {
    std::ostringstream out;
    RuleTestOptions opt;
    opt.filter = filter;
    opt.update = update;
    RuleTestCounts c = run_rule_tests({file_.string()}, opt, out);
    if (log) *log = out.str();
    return c;
  }
  fs::path dir_, file_;
};

}  // namespace

TEST_F(RuleTestRunner, UpdateRewritesOnlyFailingExpectations) {
  std::string log;
  RuleTestCounts c = run(false, &log);
  EXPECT_EQ(c.passed, 1u);
  EXPECT_EQ(c.failed, 1u);
  EXPECT_NE(log.find("1 passed, 1 failed"), std::string::npos) << log;
  EXPECT_NE(log.find("node 'relu': op: expected Wrong, got FusedConv2D_BiasAdd_ReLU"), std::string::npos) << log;

  std::string before = slurp(file_);
  c = run(true, &log);
  EXPECT_EQ(c.failed, 1u);  // the run that updates still reports the failure
  std::string updated = slurp(file_);
  // Everything outside the failing case's expect block is byte-identical.
  std::size_t head = before.find("    expect: |\n      input x\n      relu = Wrong");
  ASSERT_NE(head, std::string::npos);
  EXPECT_EQ(updated.substr(0, head), before.substr(0, head));
  std::string tail = before.substr(before.find("  - name: does not fire"));
  EXPECT_TRUE(updated.ends_with(tail)) << updated;
  EXPECT_NE(updated.find("relu = FusedConv2D_BiasAdd_ReLU(x, w, b) {padding = \"SAME\""), std::string::npos) << updated;
  EXPECT_EQ(run(false).failed, 0u);
}

TEST_F(RuleTestRunner, HandEditedAttributeFailsNamesItAndUpdateRestoresIt) {
  run(true);  // write the true expectation first
  std::string good = slurp(file_);
  ASSERT_EQ(run(false).failed, 0u);
  std::string edited = good;
  std::size_t at = edited.find("padding = \"SAME\"", edited.find("expect: |"));
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, 16, "padding = \"VALID\"");
  std::ofstream(file_) << edited;

  std::string log;
  EXPECT_EQ(run(false, &log).failed, 1u);
  EXPECT_NE(log.find("node 'relu': attribute 'padding': expected \"VALID\", got \"SAME\""), std::string::npos) << log;
  EXPECT_NE(log.find("rules.yaml:10 fires"), std::string::npos) << log;
  run(true);
  EXPECT_EQ(slurp(file_), good);  // restored byte for byte; the other case untouched
}

TEST_F(RuleTestRunner, MalformedInputIsAFailureWithPosition) {
  std::string text = kRuleFile;
  text.replace(text.find("conv = Conv2D(x, w) {padding"), 19, "conv = Conv2D(x, w");
  std::ofstream(file_) << text;
  std::string log;
  RuleTestCounts c = run(false, &log);
  EXPECT_EQ(c.failed, 1u);
  EXPECT_EQ(c.passed, 1u);
  // Line 15 of the file is the `conv = ...` line; the error points inside the block scalar.
  EXPECT_NE(log.find("rules.yaml:15:"), std::string::npos) << log;
}

TEST_F(RuleTestRunner, FilterRunsASubset) {
  std::string log;
  RuleTestCounts c = run(false, &log, "does not");
  EXPECT_EQ(c.passed, 1u);
  EXPECT_EQ(c.failed, 0u);
  EXPECT_EQ(c.skipped, 1u);
  EXPECT_NE(log.find("1 passed, 0 failed, 1 skipped"), std::string::npos) << log;
}

TEST_F(RuleTestRunner, TestingNothingFails) {
  // A rule file without `tests:`, named on the command line: said, and a failure.
  fs::path bare = dir_ / "bare.yaml";
  std::ofstream(bare) << "rules:\n  - name: r\n    pattern: Relu(x)\n    rewrite: x\n";
  std::ostringstream out;
  RuleTestCounts c = run_rule_tests({bare.string()}, {}, out);
  EXPECT_EQ(c.failed, 1u);
  EXPECT_NE(out.str().find("FAIL " + bare.string() + ": holds no test case"), std::string::npos) << out.str();
  // In a folder beside a file with cases, it is passed over.
  std::ostringstream folder;
  c = run_rule_tests({dir_.string()}, {}, folder);
  EXPECT_EQ(c.passed, 1u);
  EXPECT_EQ(c.failed, 1u) << folder.str();  // kRuleFile's own failing case, nothing more
  // A folder with no case at all, and a filter no case name contains, fail too.
  fs::remove(file_);
  std::ostringstream empty;
  EXPECT_EQ(run_rule_tests({dir_.string()}, {}, empty).failed, 1u);
  EXPECT_NE(empty.str().find("FAIL no test case in"), std::string::npos) << empty.str();
  std::ofstream(file_) << kRuleFile;
  std::string log;
  EXPECT_EQ(run(false, &log, "no such case").failed, 1u);
  EXPECT_NE(log.find("FAIL no case name contains 'no such case'"), std::string::npos) << log;
}

TEST_F(RuleTestRunner, WarnsAboutARuleThatCanNeverMatch) {
  // `Relu` written for a graph of `ReLU`s: its cases would pass `unchanged`, so only the
  // warning tells. Elu is no input, but relu_to_elu fires and creates it: no warning there.
  std::ofstream(file_) << R"(rules:
  - name: relu_typo
    pattern: Relu(x)
    rewrite: Sigmoid(x)
  - name: relu_to_elu
    pattern: ReLU(x)
    rewrite: Elu(x)
  - name: elu_fast
    pattern: Elu(x)
    rewrite: FastElu(x)
  - name: tanh_off
    enabled: false
    pattern: Tanh(x)
    rewrite: FastTanh(x)
tests:
  - name: relu becomes a fast elu
    input: |
      input x
      r = ReLU(x)
      output r
    expect: |
      input x
      r = FastElu(x)
      output r
)";
  std::string log;
  RuleTestCounts c = run(false, &log);
  EXPECT_EQ(c.passed, 1u) << log;
  EXPECT_NE(log.find("warning: rule 'relu_typo' (" + file_.string() +
                     ":2:5) can never match these inputs: no input has an op Relu and no rule creates one; "
                     "did you mean 'ReLU'?"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("warning: rule 'elu_fast'"), std::string::npos) << log;
  EXPECT_EQ(log.find("warning: rule 'tanh_off'"), std::string::npos) << log;  // disabled: not warned
}
