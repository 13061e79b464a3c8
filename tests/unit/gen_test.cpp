// The synthetic graph generator: seeded determinism, its block structure, and generated
// graphs (the bundled examples/cnn_400.yaml among them) that run and verify on the kernels.
#include <gtest/gtest.h>

#include <map>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "unit/cli_helpers.h"

using namespace graphfuse;
using namespace graphfuse::testutil;

namespace {

class GenTest : public TempDirTest {
 protected:
  std::string gen(std::size_t nodes, int seed, const std::string& name) {
    std::string path = (dir_ / name).string();
    CliRun r = run_cli("gen -n " + std::to_string(nodes) + " --seed " + std::to_string(seed) + " -o " + path);
    EXPECT_EQ(r.code, 0) << r.out;
    return path;
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::map<std::string, std::size_t> histogram(const Graph& g) {
  std::map<std::string, std::size_t> h;
  for (NodeId n : g.nodes()) ++h[std::string(g.node(n).op.name())];
  return h;
}

}  // namespace

TEST(Generate, EveryBlockKindAndThreeDownsamples) {
  Graph g = generate_cnn_graph(GenerateOptions{20000, 3, true});
  auto h = histogram(g);
  EXPECT_GT(h["Conv2D"], 1000u);
  EXPECT_GT(h["BiasAdd"], 1000u);
  EXPECT_GT(h["ReLU"], 1000u);
  EXPECT_GT(h["Add"], 500u);
  EXPECT_GT(h["MatMul"], 100u);
  // Two strided convolutions (branch and shortcut) per stage boundary, three boundaries.
  std::size_t strided = 0, valid = 0;
  for (NodeId n : g.nodes()) {
    const Node& nd = g.node(n);
    if (nd.op.name() != "Conv2D") continue;
    const auto* strides = nd.attrs.get_if<std::vector<std::int64_t>>("strides");
    const auto* padding = nd.attrs.get_if<std::string>("padding");
    ASSERT_TRUE(strides && padding);
    strided += *strides == std::vector<std::int64_t>{2, 2};
    valid += *padding == "VALID";
  }
  EXPECT_EQ(strided, 6u);
  EXPECT_GT(valid, 300u);
  // The input is typed, so the executor seeds it without guessing.
  const ValueType& in = g.node(g.inputs()[0]).outputs[0].type;
  EXPECT_EQ(in.dtype, DType::Float32);
  EXPECT_EQ(in.shape, (std::vector<std::int64_t>{1, 16, 16, 8}));
  EXPECT_TRUE(in.shape_known);
  // Without MatMul chains there are none.
  EXPECT_EQ(histogram(generate_cnn_graph(GenerateOptions{5000, 3, false}))["MatMul"], 0u);
}

TEST_F(GenTest, TheSameSeedGivesTheSameBytes) {
  std::string a = gen(300, 7, "a.yaml"), b = gen(300, 7, "b.yaml"), c = gen(300, 8, "c.yaml");
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_NE(slurp(a), slurp(c));
}

TEST_F(GenTest, GeneratedGraphsRunOnTheReferenceKernels) {
  // The stages are quarters of the budget, so any size ends in the last one (2x2x64).
  for (auto [nodes, seed] : {std::pair{60, 1}, std::pair{300, 2}, std::pair{300, 3}}) {
    std::string g = gen(static_cast<std::size_t>(nodes), seed, "g.yaml");
    CliRun r = run_cli("run " + g + " --kernels reference --threads 1");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "float32[1, 2, 2, 64]")) << nodes << " nodes, seed " << seed << ":\n" << r.out;
  }
}

TEST_F(GenTest, TheSeedRulesVerifyOnAGeneratedGraph) {
  CliRun r = run_cli("verify --rules " + src("rules/seed.yaml") + " " + gen(300, 5, "g.yaml") +
                     " --kernels reference --threads 1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "rules applied: conv2d_biasadd_relu ")) << r.out;
  EXPECT_TRUE(has(r.out, "PASS")) << r.out;
}

TEST_F(GenTest, TheBundledExampleIsTheDocumentedCommandsOutputAndVerifies) {
  // docs/cli.md: graphfuse gen --nodes 400 --seed 1 -o examples/cnn_400.yaml
  EXPECT_EQ(slurp(gen(400, 1, "cnn_400.yaml")), slurp(src("examples/cnn_400.yaml")))
      << "regenerate examples/cnn_400.yaml with the command in docs/cli.md";
  CliRun r = run_cli("verify --rules " + src("rules/seed.yaml") + " " + src("examples/cnn_400.yaml") +
                     " --kernels reference --threads 1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "PASS")) << r.out;
}

TEST(Generate, WideShapeHasFanOutLongChainsAndDenseFusions) {
  GenerateOptions opt{3000, 4, true};
  opt.shape = GraphShape::Wide;
  Graph g = generate_cnn_graph(opt);
  auto h = histogram(g);
  EXPECT_EQ(h["MatMul"], 0u);
  EXPECT_EQ(h["Conv2D"], h["ReLU"]);  // every convolution starts a fusible chain
  // The shared constants and each block's input feed 8 or more consumers.
  std::size_t wide = 0, chained = 0;
  for (NodeId n : g.nodes()) {
    wide += g.use_count(n) >= 8;
    const Node& nd = g.node(n);
    // A chain: a convolution reading a ReLU.
    chained += nd.op.name() == "Conv2D" && g.node(nd.inputs[0].node).op.name() == "ReLU";
  }
  EXPECT_GT(wide, 3 * 18u);
  EXPECT_GT(chained, 100u);
  // More than one fusion per four nodes (the Cnn shape has about one per eight).
  EXPECT_GT(h["Conv2D"] * 4, g.size());
  GenerateOptions again = opt;
  EXPECT_EQ(generate_cnn_graph(again).size(), g.size());
}

TEST_F(GenTest, TheWideShapeVerifiesWithTheSeedRule) {
  std::string path = (dir_ / "w.yaml").string();
  ASSERT_EQ(run_cli("gen -n 300 --seed 2 --shape wide -o " + path).code, 0);
  // Sums of 8-16 branches of chained convolutions reach magnitudes in the hundreds, where
  // float rounding alone is 1e-4 absolute: atol scaled to that (max|a-e| <= rtol*max|e| stays).
  CliRun r = run_cli("verify --rules " + src("rules/seed.yaml") + " " + path +
                     " --kernels reference --threads 1 --atol 1e-3");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "PASS")) << r.out;
}
