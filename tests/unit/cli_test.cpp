// End-to-end checks of the graphfuse binary: exit codes, messages, untouched outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "unit/cli_helpers.h"

namespace fs = std::filesystem;
using namespace graphfuse::testutil;

namespace {

class CliTest : public TempDirTest {};

const std::string kChain = conv_chain(64);

/// Runs `apply` expecting failure: exit 1, the message names file:line:column, and a
/// pre-existing output file keeps its bytes.
void expect_apply_fails(const fs::path& rules, const fs::path& input, const fs::path& out,
                        const std::string& where) {
  std::ofstream(out) << "SENTINEL";
  CliRun r = run_cli("apply --rules " + rules.string() + " " + input.string() + " -o " + out.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(where), std::string::npos) << "expected '" << where << "' in:\n" << r.out;
  EXPECT_EQ(slurp(out), "SENTINEL");
}

}  // namespace

TEST_F(CliTest, ApplyFusesAndReportsCounts) {
  fs::path in = write("chain.graph", kChain);
  fs::path out = dir_ / "out.yaml";
  CliRun r = run_cli("apply --rules " + src("rules/seed.yaml") + " " + in.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("conv2d_biasadd_relu: 1 rewrite"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodes: 6 -> 4"), std::string::npos) << r.out;
  CliRun info = run_cli("info " + out.string());
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_NE(info.out.find("FusedConv2D_BiasAdd_ReLU"), std::string::npos) << info.out;
  EXPECT_EQ(info.out.find("Conv2D "), std::string::npos) << info.out;
}

// The first interleaved rotary fusion keeps the rotation's Shape chain for the second (the
// flatten's shape reads it); once the second fires the chain is dead, and the sweep between
// passes removes it, so the attention rule, which must own Q alone, fires in the next pass.
// verify runs the rewrite on the reference kernels against the original.
TEST_F(CliTest, ADeadReaderLeftByOneFusionDoesNotBlockTheNext) {
  const std::string model = src("tests/rules/models/llama_attn_rope_interleaved.onnx");
  CliRun r = run_cli("apply --rules " + src("rules/onnx") + " " + model + " -o " + (dir_ / "out.onnx").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("onnx_rotary_embedding_interleaved: 2 rewrites"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("onnx_mha_rotary_fused: 1 rewrite"), std::string::npos) << r.out;
  CliRun v = run_cli("verify --rules " + src("rules/onnx") + " " + model);
  EXPECT_EQ(v.code, 0) << v.out;
}

TEST_F(CliTest, ApplySummaryListsOnlyTheRulesThatFired) {
  fs::path in = write("chain.graph", kChain);
  fs::path rules = write("rules.yaml",
                         "rules:\n"
                         "  # Tanh(x) -> Logistic(x)\n"
                         "  - {name: tanh_idle, pattern: \"Tanh(x)\", rewrite: \"Logistic(x)\"}\n"
                         "  # Sigmoid(x) -> Logistic(x)\n"
                         "  - {name: sigmoid_idle, pattern: \"Sigmoid(x)\", rewrite: \"Logistic(x)\"}\n");
  std::string args = "apply --rules " + src("rules/seed.yaml") + " --rules " + rules.string() + " " + in.string() +
                     " -o " + (dir_ / "out.graph").string();
  CliRun r = run_cli(args);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("conv2d_biasadd_relu: 1 rewrite\n2 other rules did not fire\nnodes: 6 -> 4"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("tanh_idle"), std::string::npos) << r.out;
  // --stats keeps the full table, idle rules included.
  CliRun stats = run_cli(args + " --stats");
  ASSERT_EQ(stats.code, 0) << stats.out;
  EXPECT_NE(stats.out.find("tanh_idle"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("sigmoid_idle"), std::string::npos) << stats.out;
}

// `--threads` above the core count (how the determinism checks run on small machines): the
// run gets its threads without the thread pool's warning on stderr ("The number of workers
// is currently limited to 1"), which a graph of 20,000 nodes used to print on 2 cores, and
// the bytes of one thread.
TEST_F(CliTest, MoreThreadsThanCoresRunQuietlyAndAlike) {
  fs::path in = dir_ / "g.json";
  ASSERT_EQ(run_cli("gen -n 20000 --seed 2 -o " + in.string()).code, 0);
  const std::string many = std::to_string(std::thread::hardware_concurrency() + 6);
  const std::string apply = "apply -q --rules " + src("rules/seed.yaml") + " " + in.string() + " -o ";
  CliRun wide = run_cli(apply + (dir_ / "many.json").string() + " --threads " + many);
  ASSERT_EQ(wide.code, 0) << wide.out;
  EXPECT_EQ(wide.out, "");
  CliRun one = run_cli(apply + (dir_ / "one.json").string() + " --threads 1");
  ASSERT_EQ(one.code, 0) << one.out;
  EXPECT_EQ(slurp(dir_ / "many.json"), slurp(dir_ / "one.json"));
}

// GRAPHFUSE_HUGE_PAGES=1 backs the heap and the graph's big arrays with huge pages (off
// by default, docs/performance.md): the same bytes out, and a value it does not know is an
// error before any work, with the output left alone.
TEST_F(CliTest, HugePagesFromTheEnvironmentChangeNoByteAndBadValuesFail) {
  fs::path in = dir_ / "g.gfb";
  ASSERT_EQ(run_cli("gen -n 100000 --seed 3 -o " + in.string()).code, 0);  // 12 MB of records: huge-page chunks
  const std::string apply = "apply -q --threads 2 --rules " + src("rules/seed.yaml") + " " + in.string() + " -o ";
  ASSERT_EQ(::setenv("GRAPHFUSE_HUGE_PAGES", "1", 1), 0);
  CliRun huge = run_cli(apply + (dir_ / "huge.json").string());
  ASSERT_EQ(::setenv("GRAPHFUSE_HUGE_PAGES", "maybe", 1), 0);
  std::ofstream(dir_ / "bad.json") << "SENTINEL";
  CliRun bad = run_cli(apply + (dir_ / "bad.json").string());
  ::unsetenv("GRAPHFUSE_HUGE_PAGES");
  CliRun small = run_cli(apply + (dir_ / "small.json").string());
  ASSERT_EQ(huge.code, 0) << huge.out;
  ASSERT_EQ(small.code, 0) << small.out;
  EXPECT_EQ(slurp(dir_ / "huge.json"), slurp(dir_ / "small.json"));
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(bad.out,
            "error: GRAPHFUSE_HUGE_PAGES='maybe': expected 1, yes or on (huge pages) or 0, no, off or nothing (small "
            "pages)\n");
  EXPECT_EQ(slurp(dir_ / "bad.json"), "SENTINEL");
}

TEST_F(CliTest, ApplyTwiceIsAFixedPoint) {
  fs::path in = write("chain.graph", kChain);
  fs::path once = dir_ / "once.graph", twice = dir_ / "twice.graph";
  ASSERT_EQ(run_cli("apply -q --rules " + src("rules/seed.yaml") + " " + in.string() + " -o " + once.string()).code, 0);
  CliRun r = run_cli("apply --rules " + src("rules/seed.yaml") + " " + once.string() + " -o " + twice.string());
  ASSERT_EQ(r.code, 0) << r.out;
  // A rule that did not fire gets no line of its own, only the count at the end.
  EXPECT_EQ(r.out.find("conv2d_biasadd_relu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no rule fired (1 rule loaded)"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(once), slurp(twice));
}

TEST_F(CliTest, UnknownReferenceFailsWithPosition) {
  fs::path in = write("bad.graph", "input x\nrelu = ReLU(nope)\noutput relu\n");
  expect_apply_fails(src("rules/seed.yaml"), in, dir_ / "out.graph", "bad.graph:2:13");
}

TEST_F(CliTest, CycleFailsWithPosition) {
  fs::path in = write("cycle.yaml",
                      "nodes:\n"
                      "  - {id: a, op_type: ReLU, inputs: [b]}\n"
                      "  - {id: b, op_type: ReLU, inputs: [a]}\n");
  expect_apply_fails(src("rules/seed.yaml"), in, dir_ / "out.yaml", "cycle.yaml:2:");
}

TEST_F(CliTest, DuplicateIdFailsWithPosition) {
  fs::path in = write("dup.json",
                      "{\"nodes\": [\n"
                      "  {\"id\": \"x\", \"op_type\": \"Input\"},\n"
                      "  {\"id\": \"x\", \"op_type\": \"ReLU\"}\n"
                      "]}\n");
  expect_apply_fails(src("rules/seed.yaml"), in, dir_ / "out.json", "dup.json:3:");
}

TEST_F(CliTest, MalformedPatternFailsWithPosition) {
  fs::path rules = write("bad_rules.yaml",
                         "rules:\n"
                         "  - name: broken\n"
                         "    pattern: |\n"
                         "      conv = Conv2D(x, w\n"
                         "      ReLU(conv)\n"
                         "    rewrite: |\n"
                         "      Fused(x, w)\n");
  fs::path in = write("chain.graph", kChain);
  expect_apply_fails(rules, in, dir_ / "out.graph", "bad_rules.yaml:");
  CliRun r = run_cli("apply --rules " + rules.string() + " " + in.string() + " -o " + (dir_ / "o.graph").string());
  // The call's argument list may span lines, so the error is where `ReLU` stands
  // instead of the expected ')' or ','.
  EXPECT_NE(r.out.find("bad_rules.yaml:5:7: error: expected ')'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "o.graph"));
}

TEST_F(CliTest, HelpEverywhere) {
  for (const char* sub : {"", "apply ", "info ", "dot ", "gen ", "test "}) {
    CliRun r = run_cli(std::string(sub) + "--help");
    EXPECT_EQ(r.code, 0) << sub << r.out;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub << r.out;
  }
}
