// Why-not explanations: the failing pattern step, the legality reason, the conflict a
// candidate lost, and the `graphfuse explain` command.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

using namespace graphfuse;
namespace fs = std::filesystem;

namespace {

const char* kRules = R"yaml(rules:
  # ReLU(BiasAdd(y, b)) -> BiasRelu(y, b)
  - name: bias_relu
    pattern: |
      ba = BiasAdd(y, b)
      ReLU(ba)
    rewrite: BiasRelu(y, b)
  # ReLU(BiasAdd(Conv2D(x, w), b)) -> FusedConv2D_BiasAdd_ReLU(x, w, b)
  - name: conv2d_biasadd_relu
    benefit: 2
    pattern: |
      conv = Conv2D(x, w)
      bias = BiasAdd(conv, b) {data_format = "NHWC"}
      ReLU(bias)
    rewrite: FusedConv2D_BiasAdd_ReLU(x, w, b) {...conv, activation = "ReLU"}
  # Sigmoid(x) -> Logistic(x), not switched on
  - {name: off, enabled: false, pattern: "Sigmoid(x)", rewrite: "Logistic(x)"}
)yaml";

const char* kGraph = R"(input x
w = Const()
b = Const()
conv = Conv2D(x, w)
bias = BiasAdd(conv, b) {data_format = "NHWC"}
relu = ReLU(bias)
c2 = Conv2D(x, w)
b2 = BiasAdd(c2, b) {data_format = "NHWC"}
r2 = ReLU(b2)
t = Tanh(c2)
m = Mul(x, x)
r3 = ReLU(m)
c4 = Conv2D(x, w)
b4 = BiasAdd(c4, b) {data_format = "NCHW"}
r4 = Tanh(b4)
r5 = ReLU(b4)
s = Sigmoid(x)
output relu, r2, t, r3, r5, s
)";

struct Fixture {
  RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  Graph g = parse_graph_text(kGraph, "g.graph");
  std::string explain(const char* rule, const char* node) { return explain_candidate(g, rules, rule, node); }
};

std::string last_line(const std::string& text) {
  std::string t = text.substr(0, text.size() - 1);
  return t.substr(t.rfind('\n') + 1);
}

}  // namespace

TEST(Explain, AFiringCandidateSaysWhichRound) {
  Fixture f;
  std::string e = f.explain("conv2d_biasadd_relu", "relu");
  EXPECT_EQ(e,
            "rule t.yaml:9 conv2d_biasadd_relu, node 'relu' (ReLU) at g.graph:6:1\n"
            "input graph: matches; the match is legal\n"
            "round 1: applied\n"
            "verdict: fires in round 1\n");
}

TEST(Explain, LostConflictNamesTheWinnerAndWhyItWentFirst) {
  Fixture f;
  std::string e = f.explain("bias_relu", "relu");
  EXPECT_NE(e.find("round 1: matched, but lost a conflict over 'relu' (ReLU) to t.yaml:9 conv2d_biasadd_relu at "
                   "'relu' (it has the higher benefit, 2 > 1)\n"),
            std::string::npos)
      << e;
  EXPECT_EQ(last_line(e), "verdict: does not fire: lost a conflict to t.yaml:9 conv2d_biasadd_relu at 'relu'");
}

TEST(Explain, ExternalUseNamesTheNodeAndItsOtherReader) {
  Fixture f;
  std::string e = f.explain("conv2d_biasadd_relu", "r2");
  EXPECT_NE(e.find("input graph: matches, but is not legal: external_use\n"
                   "  'c2' (Conv2D), matched as pattern node `conv`, has 2 uses; the match accounts for 1; also read "
                   "by 't' (Tanh)\n"),
            std::string::npos)
      << e;
  // bias_relu then takes r2, which the explanation mentions along the way.
  EXPECT_NE(e.find("round 1: node 'r2' is rewritten by t.yaml:3 bias_relu (as the root of its match)"), std::string::npos) << e;
  EXPECT_EQ(last_line(e), "verdict: does not fire: matches, but is not legal: external_use");
}

TEST(Explain, FailingOpCheckShowsThePatternLineAndTheNode) {
  Fixture f;
  std::string e = f.explain("conv2d_biasadd_relu", "r3");
  EXPECT_NE(e.find("input graph: no match: pattern step 4 fails: the node there is 'm' (Mul)\n"
                   "  t.yaml:13: `bias = BiasAdd(conv, b) {data_format = \"NHWC\"}`\n"
                   "  step 4  check_op   n1(bias) in {BiasAdd}\n"),
            std::string::npos)
      << e;
  EXPECT_EQ(last_line(e), "verdict: does not fire: no match: pattern step 4 fails: the node there is 'm' (Mul)");
}

TEST(Explain, FailingConstraintShowsTheAttribute) {
  Fixture f;
  std::string e = f.explain("conv2d_biasadd_relu", "r5");
  EXPECT_NE(e.find("'b4' (BiasAdd) has data_format = \"NCHW\""), std::string::npos) << e;
  EXPECT_NE(e.find("data_format"), std::string::npos) << e;
}

TEST(Explain, WrongRootOpAndDisabledRule) {
  Fixture f;
  std::string e = f.explain("conv2d_biasadd_relu", "t");
  EXPECT_NE(e.find("no match: pattern step 0 fails: the node there is 't' (Tanh)"), std::string::npos) << e;
  e = f.explain("off", "s");
  EXPECT_NE(e.find("input graph: matches; the match is legal"), std::string::npos) << e;
  EXPECT_EQ(last_line(e), "verdict: does not fire: the rule does not run (it is disabled, enabled: false)");
  RewriteOptions only;
  only.only_rules = {"off"};
  e = explain_candidate(f.g, f.rules, "off", "s", only);
  EXPECT_EQ(last_line(e), "verdict: fires in round 1");
}

TEST(Explain, UnknownRuleOrNodeIsAnError) {
  Fixture f;
  EXPECT_THROW(f.explain("nope", "relu"), Error);
  EXPECT_THROW(f.explain("bias_relu", "nope"), Error);
}

TEST(Explain, Command) {
  fs::path dir = fs::temp_directory_path() / "graphfuse_explain_cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "r.yaml") << kRules;
  std::ofstream(dir / "g.graph") << kGraph;
  auto run = [&](const std::string& args, int& code) {
    std::string cmd = std::string(GRAPHFUSE_CLI) + " explain --rules " + (dir / "r.yaml").string() + " " +
                      (dir / "g.graph").string() + " " + args + " 2>&1";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    int status = pclose(p);
    code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
  };
  int code = -1;
  std::string out = run("--rule bias_relu --node relu", code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("verdict: does not fire: lost a conflict to " + (dir / "r.yaml").string() +
                     ":9 conv2d_biasadd_relu at 'relu'"),
            std::string::npos)
      << out;
  out = run("--rule bias_relu --node missing", code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("error: no node or value 'missing'"), std::string::npos) << out;
  fs::remove_all(dir);
}

TEST(Explain, FailingWhereLineInTheAuthorsWords) {
  RuleSet rules = load_rules_from_string(R"yaml(rules:
  - name: conv_1x1
    pattern: |
      c = Conv(x, w)
    where: |
      const(w)
      dim(w, 2) == 1
      rank(x) == 4
    rewrite: Conv1x1(x, w) {...c}
)yaml",
                                         "t.yaml");
  Graph g = parse_graph_text(R"(input x: float32[1, 3, 8, 8]
input u
w3 = Const() {value = tensor(float32, [8, 3, 3, 3])}
w1 = Const() {value = tensor(float32, [8, 3, 1, 1])}
a = Conv(x, w3)
b = Conv(x, x)
c = Conv(u, w1)
output a, b, c
)",
                             "g.graph");
  // The line quoted is the `where:` line (t.yaml:7), in the names the author wrote (`w`),
  // with the value the graph has.
  std::string e = explain_candidate(g, rules, "conv_1x1", "a");
  EXPECT_NE(e.find("input graph: no match: a constraint does not hold: `dim(w, 2)` is 3, want == 1\n"
                   "  t.yaml:7: `dim(w, 2) == 1`\n"),
            std::string::npos)
      << e;
  e = explain_candidate(g, rules, "conv_1x1", "b");
  EXPECT_NE(e.find("a constraint does not hold: `const(w)` is false, want true\n  t.yaml:6: `const(w)`\n"), std::string::npos)
      << e;
  // Unknown is not false: an input without a known shape is said to be one.
  e = explain_candidate(g, rules, "conv_1x1", "c");
  EXPECT_NE(e.find("a constraint does not hold: `rank(x)` is unknown ('u' has no known shape), want == 4; an unknown "
                   "fact fails the constraint, negated or not\n  t.yaml:8: `rank(x) == 4`\n"),
            std::string::npos)
      << e;
}

TEST(Explain, NodeByValueName) {
  // ONNX names nodes and values apart (`y = Relu(c) as r`): --node takes either.
  RuleSet rules = load_rules_from_string("rules:\n  - {name: relu_tanh, pattern: \"Relu(x)\", rewrite: \"Tanh(x)\"}\n", "t.yaml");
  Graph g = parse_graph_text("input x\ny = Relu(x) as r\noutput y\n", "g.graph");
  std::string e = explain_candidate(g, rules, "relu_tanh", "y");
  EXPECT_EQ(e.substr(0, e.find('\n')), "rule t.yaml:2 relu_tanh, node 'r' (Relu), which produces 'y' at g.graph:2:1");
  EXPECT_EQ(last_line(e), "verdict: fires in round 1");
  EXPECT_EQ(explain_candidate(g, rules, "relu_tanh", "r").substr(0, 40), e.substr(0, 40));
}
