// The fixed-point driver: worklist cost per round, termination (rounds, oscillation,
// growth), statistics and trace, through the library and the `apply` command.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "unit/cli_helpers.h"

using namespace graphfuse;
using namespace graphfuse::testutil;
namespace fs = std::filesystem;

namespace {

OpType op(const char* n) { return OpType::intern(n); }
RuleSet rules_of(const std::string& yaml) { return load_rules_from_string(yaml, "t.yaml"); }

class DriverCli : public TempDirTest {};

const char* kOscillating =
    "rules:\n"
    "  # A(x) -> B(x)\n"
    "  - {name: a_to_b, pattern: \"A(x)\", rewrite: \"B(x)\"}\n"
    "  # B(x) -> A(x)\n"
    "  - {name: b_to_a, pattern: \"B(x)\", rewrite: \"A(x)\"}\n";

// Every A gains a fresh A below it each round: the node count doubles.
const char* kDoubling =
    "rules:\n"
    "  # A(x) -> A(A(x))\n"
    "  - {name: nest, pattern: \"A(x)\", rewrite: \"A(A(x))\"}\n";

// The A gains one B below it each round: growth by one node a round, forever.
const char* kCreeping =
    "rules:\n"
    "  # A(x) -> A(B(x))\n"
    "  - {name: creep, pattern: \"A(x)\", rewrite: \"A(B(x))\"}\n";

Graph one_a() {
  Graph g;
  NodeId x = g.add_input("x");
  g.add_output({g.add_node("n", op("A"), {{x, 0}}), 0});
  return g;
}

const char* kOneA = "input x\nn = A(x)\noutput n\n";

}  // namespace

// ---- the worklist ---------------------------------------------------------------------

// 20000 Z nodes that never match, and one X -> Z chain where rule `a` enables rule `b`
// in round 2: after the first round only the neighbourhood of the change is matched.
TEST(DriverWorklist, LateRewriteCostsItsNeighbourhoodNotTheGraph) {
  RuleSet rs = rules_of(
      "rules:\n"
      "  # X(x) -> Y(x)\n"
      "  - {name: a, pattern: \"X(x)\", rewrite: \"Y(x)\"}\n"
      "  # Z(Y(x)) -> W(x)\n"
      "  - name: b\n    pattern: |\n      y = Y(x)\n      Z(y)\n    rewrite: W(x)\n");
  Graph g;
  NodeId in = g.add_input("in");
  for (int i = 0; i < 20000; ++i) g.add_output({g.add_node("z" + std::to_string(i), op("Z"), {{in, 0}}), 0});
  NodeId x = g.add_input("x");
  NodeId xx = g.add_node("xx", op("X"), {{x, 0}});
  g.add_output({g.add_node("zz", op("Z"), {{xx, 0}}), 0});
  // A Y from the start, so that rule b is tried in round 1 (see OpPresence below).
  g.add_output({g.add_node("y0", op("Y"), {{in, 0}}), 0});
  for (bool incremental : {true, false}) {
    Graph h = g;
    RewriteOptions opt;
    opt.incremental = incremental;
    RewriteReport rep = rewrite_graph(h, rs, opt);
    ASSERT_EQ(rep.per_round.size(), 3u);  // a fires, b fires, nothing
    EXPECT_EQ(rep.per_round[0].applied, 1u);
    EXPECT_EQ(rep.per_round[1].applied, 1u);
    EXPECT_EQ(h.node(*h.find("zz")).op, op("W"));
    EXPECT_GE(rep.per_round[0].candidates, 20002u);
    if (incremental) {
      EXPECT_LE(rep.per_round[1].candidates, 2u);
      EXPECT_LE(rep.per_round[2].candidates, 2u);
    } else {
      EXPECT_GE(rep.per_round[1].candidates, 20001u);
    }
  }
}

// A rule checking an op the graph does not have is not tried (0 candidates) until a
// rewrite makes one; then the worklist finds its match: the same graph as matching
// everything, with a fraction of the candidates.
TEST(DriverWorklist, RulesNeedingAnAbsentOpAreNotTriedUntilItAppears) {
  RuleSet rs = rules_of(
      "rules:\n"
      "  # X(x) -> Y(x)\n"
      "  - {name: a, pattern: \"X(x)\", rewrite: \"Y(x)\"}\n"
      "  # Z(Y(x)) -> W(x)\n"
      "  - name: b\n    pattern: |\n      y = Y(x)\n      Z(y)\n    rewrite: W(x)\n"
      "  # Z(V(x)) -> W(x), never: the graph has no V\n"
      "  - name: c\n    pattern: |\n      v = V(x)\n      Z(v)\n    rewrite: W(x)\n");
  Graph g;
  NodeId in = g.add_input("in");
  for (int i = 0; i < 100; ++i) g.add_output({g.add_node("z" + std::to_string(i), op("Z"), {{in, 0}}), 0});
  NodeId xx = g.add_node("xx", op("X"), {{g.add_input("x"), 0}});
  g.add_output({g.add_node("zz", op("Z"), {{xx, 0}}), 0});
  RewriteReport rep = rewrite_graph(g, rs);
  ASSERT_EQ(rep.per_round.size(), 3u);  // a fires, b fires, nothing
  EXPECT_EQ(g.node(*g.find("zz")).op, op("W"));
  EXPECT_EQ(rep.per_round[0].candidates, 1u);  // only the X: no Y yet for b, no V for c
  EXPECT_EQ(rep.rules[1].candidates, 1u);      // b: the Z below the new Y, in round 2
  EXPECT_EQ(rep.rules[1].applied, 1u);
  EXPECT_EQ(rep.rules[2].candidates, 0u);
}

// Three-ReLU stacks: 5000 of them change 5000 places in round 1, few enough for the
// worklist and wide enough for it to be expanded by several threads; 20000 of them
// change more than an eighth of the graph, so the next round matches everything
// instead. Either way the rounds and the result are the same as without a worklist.
TEST(DriverWorklist, WideAndHugeFrontiersGiveTheSameRounds) {
  RuleSet rs = rules_of("rules:\n  # ReLU(ReLU(x)) -> ReLU(x)\n  - name: rr\n    pattern: |\n      r = ReLU(x)\n      ReLU(r)\n    rewrite: ReLU(x)\n");
  for (std::size_t stacks : {5000u, 20000u}) {
    Graph g;
    NodeId x = g.add_input("x");
    for (std::size_t i = 0; i < stacks; ++i) {
      std::string p = "s" + std::to_string(i) + "_";
      NodeId a = g.add_node(p + "a", op("ReLU"), {{x, 0}});
      NodeId b = g.add_node(p + "b", op("ReLU"), {{a, 0}});
      g.add_output({g.add_node(p + "c", op("ReLU"), {{b, 0}}), 0});
    }
    std::string expected;
    for (int threads : {1, 2})
      for (bool incremental : {true, false}) {
        Graph h = g;
        RewriteOptions opt;
        opt.threads = threads;
        opt.incremental = incremental;
        RewriteReport rep = rewrite_graph(h, rs, opt);
        ASSERT_EQ(rep.per_round.size(), 3u);
        EXPECT_EQ(rep.per_round[0].applied, stacks);  // b's match; c's lost the conflict
        EXPECT_EQ(rep.per_round[1].applied, stacks);
        // The b's and c's either way: the a's are gone and nothing else roots a rule.
        EXPECT_EQ(rep.per_round[1].candidates, 2 * stacks);
        std::string got = write_graph_text(h);
        if (expected.empty()) expected = got;
        EXPECT_EQ(got, expected) << threads << " " << incremental;
        EXPECT_EQ(h.size(), stacks + 1);
      }
  }
}

TEST_F(DriverCli, StatsShowCandidatesPerRound) {
  fs::path rules = write("r.yaml", "rules:\n  # X(x) -> Y(x)\n  - {name: a, pattern: \"X(x)\", rewrite: \"Y(x)\"}\n");
  std::string graph = "input in\n";
  for (int i = 0; i < 50; ++i) graph += "x" + std::to_string(i) + " = Tanh(in)\n";
  graph += "t = X(in)\noutput t\n";
  fs::path in = write("in.graph", graph);
  CliRun r = run_cli("apply --rules " + rules.string() + " " + in.string() + " -o " + (dir_ / "o.graph").string() +
                     " --stats --stats-json " + (dir_ / "s.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("round  candidates"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stop: fixed point"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(slurp(dir_ / "s.json"));
  EXPECT_EQ(j["converged"], true);
  EXPECT_EQ(j["stop"], "fixed_point");
  ASSERT_EQ(j["per_round"].size(), 2u);
  EXPECT_EQ(j["per_round"][0]["candidates"], 1);  // only X roots rule a
  EXPECT_EQ(j["per_round"][0]["applied"], 1);
  EXPECT_EQ(j["per_round"][1]["candidates"], 0);  // Y roots nothing
  ASSERT_EQ(j["rules"].size(), 1u);
  EXPECT_EQ(j["rules"][0]["rule"], "a");
  EXPECT_EQ(j["rules"][0]["loc"], rules.string() + ":3:5");
  EXPECT_EQ(j["rules"][0]["applied"], 1);
  EXPECT_EQ(j["rules"][0]["rejected"]["external_use"], 0);
  EXPECT_TRUE(j["rules"][0]["match_ms"].is_number());
}

// ---- termination ----------------------------------------------------------------------

TEST(DriverTermination, OscillationIsDetectedAndNamesBothRules) {
  RuleSet rs = rules_of(kOscillating);
  Graph g = one_a();
  try {
    rewrite_graph(g, rs);
    FAIL() << "oscillation not reported";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "error: oscillation: the graph after round 5 is the same as after round 3; "
              "rules still firing: t.yaml:3 a_to_b, t.yaml:5 b_to_a");
  }
  RewriteOptions opt;
  opt.throw_on_nonconvergence = false;
  Graph h = one_a();
  RewriteReport rep = rewrite_graph(h, rs, opt);
  EXPECT_FALSE(rep.converged);
  EXPECT_EQ(rep.stop, StopKind::Oscillation);
  EXPECT_EQ(rep.rounds, 5);  // well before the default bound of 100 rounds
  EXPECT_EQ(rep.firing, (std::vector<std::string>{"t.yaml:3 a_to_b", "t.yaml:5 b_to_a"}));
  h.validate();
}

TEST(DriverTermination, ExponentialGrowthIsStoppedAtTheNodeLimit) {
  RuleSet rs = rules_of(kDoubling);
  RewriteOptions opt;
  opt.throw_on_nonconvergence = false;
  Graph g = one_a();
  RewriteReport rep = rewrite_graph(g, rs, opt);  // default limit: 8 x 2 + 4096 nodes
  EXPECT_EQ(rep.stop, StopKind::Growth);
  EXPECT_EQ(g.size(), 4113u);  // stopped by the rewrite that crossed the limit
  EXPECT_LT(rep.rounds, 14);
  EXPECT_EQ(rep.firing, std::vector<std::string>{"t.yaml:3 nest"});
  EXPECT_NE(rep.stop_reason.find("unbounded growth: 4113 nodes in round"), std::string::npos) << rep.stop_reason;
  opt.max_nodes = 100;
  Graph h = one_a();
  rep = rewrite_graph(h, rs, opt);
  EXPECT_EQ(rep.stop, StopKind::Growth);
  EXPECT_EQ(h.size(), 101u);
  EXPECT_NE(rep.stop_reason.find("over the limit of 100"), std::string::npos) << rep.stop_reason;
}

TEST(DriverTermination, SteadyGrowthHitsMaxRoundsAndSaysItGrew) {
  RuleSet rs = rules_of(kCreeping);
  RewriteOptions opt;
  opt.max_rounds = 10;
  opt.throw_on_nonconvergence = false;
  Graph g = one_a();
  RewriteReport rep = rewrite_graph(g, rs, opt);
  EXPECT_EQ(rep.stop, StopKind::MaxRounds);
  EXPECT_EQ(rep.rounds, 10);
  EXPECT_EQ(g.size(), 12u);
  EXPECT_EQ(rep.stop_reason,
            "no fixed point after 10 rounds (the graph grew in each of the last 10 rounds, to 12 nodes); "
            "rules still firing: t.yaml:3 creep");
}

// A long but finite rewrite must not be mistaken for an oscillation.
TEST(DriverTermination, LongConvergenceIsNotAnOscillation) {
  RuleSet rs = rules_of("rules:\n  # ReLU(ReLU(x)) -> ReLU(x)\n  - name: rr\n    pattern: |\n      r = ReLU(x)\n      ReLU(r)\n    rewrite: ReLU(x)\n");
  Graph g;
  ValueRef v{g.add_input("x"), 0};
  for (int i = 0; i < 200; ++i) v = {g.add_node("r" + std::to_string(i), op("ReLU"), {v}), 0};
  g.add_output(v);
  RewriteReport rep = rewrite_graph(g, rs);
  EXPECT_TRUE(rep.converged);
  EXPECT_GT(rep.rounds, 5);
  EXPECT_EQ(g.size(), 2u);
}

TEST_F(DriverCli, EachNonTerminationExitsOneAndLeavesTheOutputAlone) {
  struct Case {
    const char* rules;
    const char* extra;
    const char* expect;
  };
  for (const Case& c : {Case{kOscillating, "", "oscillation: the graph after round 5 is the same as after round 3"},
                        Case{kDoubling, " --max-nodes 50", "unbounded growth: 51 nodes"},
                        Case{kCreeping, " --max-rounds 7", "no fixed point after 7 rounds"}}) {
    fs::path rules = write("r.yaml", c.rules);
    fs::path in = write("in.graph", kOneA);
    fs::path out = dir_ / "out.graph";
    std::ofstream(out) << "SENTINEL";
    CliRun r = run_cli("apply --rules " + rules.string() + " " + in.string() + " -o " + out.string() + c.extra +
                       " --stats-json " + (dir_ / "s.json").string());
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rules still firing: " + rules.string() + ":3 "), std::string::npos) << r.out;
    EXPECT_EQ(slurp(out), "SENTINEL");
    auto j = nlohmann::json::parse(slurp(dir_ / "s.json"));  // the statistics are still written
    EXPECT_EQ(j["converged"], false);
    EXPECT_FALSE(j["firing"].empty());
  }
}

// ---- statistics, trace, output --------------------------------------------------------

TEST(DriverStats, TextReportHasARowPerRuleAndPerRound) {
  RuleSet rs = rules_of(kCreeping);
  RewriteOptions opt;
  opt.max_rounds = 2;
  opt.throw_on_nonconvergence = false;
  opt.rule_times = true;
  Graph g = one_a();
  RewriteReport rep = rewrite_graph(g, rs, opt);
  std::string text = format_stats(rep);
  EXPECT_NE(text.find("t.yaml:3 creep"), std::string::npos) << text;
  EXPECT_NE(text.find("\n    1           1           1           1           3"), std::string::npos) << text;
  EXPECT_NE(text.find("stop: no fixed point after 2 rounds"), std::string::npos) << text;
  EXPECT_EQ(rep.rules[0].candidates, 3u);  // round 1, round 2 and the confirming round
  EXPECT_GE(rep.rules[0].match_ms, 0.0);
}

TEST_F(DriverCli, TraceQuietAndNoProgressInPipes) {
  fs::path in = write("in.graph", "input x\nw = Const()\nb = Const()\nconv = Conv2D(x, w)\nbias = BiasAdd(conv, b)\n"
                                  "relu = ReLU(bias)\noutput relu\n");
  std::string rules = std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml";
  fs::path out = dir_ / "o.graph";
  CliRun r = run_cli("apply --rules " + rules + " " + in.string() + " -o " + out.string() + " --trace");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("round 1: " + rules + ":4 conv2d_biasadd_relu at 'relu': FusedConv2D_BiasAdd_ReLU replaces "
                       "ReLU; removed 'bias', 'conv'\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos);  // no progress line: stderr is a pipe
  r = run_cli("apply -q --rules " + rules + " " + in.string() + " -o " + out.string());
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
}

// On a terminal the run shows a progress line on stderr; `script` provides one. (The
// line normally waits a quarter second; the test makes it show at once.)
TEST_F(DriverCli, ProgressLineOnATerminalOnly) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no `script` to make a terminal";
  fs::path in = write("in.graph", "input x\nw = Const()\nb = Const()\nconv = Conv2D(x, w)\nbias = BiasAdd(conv, b)\n"
                                  "relu = ReLU(bias)\noutput relu\n");
  std::string rules = std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml";
  std::string apply = std::string(GRAPHFUSE_CLI) + " apply --rules " + rules + " " + in.string() + " -o " +
                      (dir_ / "o.graph").string();
  std::string log = (dir_ / "tty.log").string();
  std::string tty = "env -u CI TERM=xterm GRAPHFUSE_PROGRESS_DELAY_MS=0 script -qec '";
  ASSERT_EQ(std::system((tty + apply + " >/dev/null' " + log + " >/dev/null 2>&1").c_str()), 0);
  std::string shown = slurp(log);
  EXPECT_NE(shown.find("graphfuse: loading"), std::string::npos) << shown;
  EXPECT_NE(shown.find("\r\033[K"), std::string::npos) << shown;  // the line is erased at the end
  ASSERT_EQ(std::system((tty + apply + " -q' " + log + " >/dev/null 2>&1").c_str()), 0);
  EXPECT_EQ(slurp(log).find("graphfuse: "), std::string::npos);
  // Not a terminal: nothing, even with the delay at zero.
  setenv("GRAPHFUSE_PROGRESS_DELAY_MS", "0", 1);
  CliRun r = run_cli("apply --rules " + rules + " " + in.string() + " -o " + (dir_ / "o.graph").string());
  unsetenv("GRAPHFUSE_PROGRESS_DELAY_MS");
  EXPECT_EQ(r.out.find("graphfuse: "), std::string::npos) << r.out;
}
