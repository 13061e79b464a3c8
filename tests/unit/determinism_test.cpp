// The rewrite result does not depend on thread count or on the order candidates are
// visited in: same graph, same statistics, same trace, same output bytes.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "testing/report_counts.h"

using namespace graphfuse;
namespace fs = std::filesystem;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

// Five rules whose matches overlap: three rooted at ReLU (benefits 1, 1, 2), one that
// erases Identity nodes (so neighbours change under other matches), one that makes two
// nodes from one (so new nodes get positions and ids in the middle of a round).
const char* kRules = R"yaml(rules:
  # ReLU(ReLU(x)) -> ReLU(x)
  - name: relu_relu
    pattern: |
      r = ReLU(x)
      ReLU(r)
    rewrite: ReLU(x)
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
      bias = BiasAdd(conv, b)
      ReLU(bias)
    rewrite: FusedConv2D_BiasAdd_ReLU(x, w, b) {...conv, activation = "ReLU"}
  # Identity(x) -> x
  - {name: drop_identity, pattern: "Identity(x)", rewrite: x}
  # Gelu(x) -> Mul(x, Sigmoid(x))
  - name: split_gelu
    pattern: Gelu(x)
    rewrite: Mul(x, Sigmoid(x))
)yaml";

// A seeded graph of small blocks over a pool of live values, so that blocks share
// producers (second consumers block fusions) and chains of one rule's root feed another's.
Graph overlapping_graph(unsigned seed, int blocks) {
  std::mt19937 rng(seed);
  Graph g;
  std::vector<ValueRef> live{{g.add_input("x"), 0}};
  auto pick = [&] { return live[std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng)]; };
  auto add = [&](const std::string& id, const char* o, std::vector<ValueRef> in) {
    return ValueRef{g.add_node(id, op(o), std::move(in)), 0};
  };
  for (int i = 0; i < blocks; ++i) {
    std::string p = "n" + std::to_string(i) + "_";
    ValueRef in = pick();
    switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
      case 0: case 1: {  // Conv2D -> BiasAdd -> ReLU, sometimes with a second consumer inside
        ValueRef c = add(p + "conv", "Conv2D", {in, add(p + "w", "Const", {})});
        ValueRef b = add(p + "bias", "BiasAdd", {c, add(p + "b", "Const", {})});
        live.push_back(add(p + "relu", "ReLU", {b}));
        if (rng() % 3 == 0) live.push_back(rng() % 2 ? c : b);
        break;
      }
      case 2:  // a ReLU stack: relu_relu overlaps with itself
        live.push_back(add(p + "r3", "ReLU", {add(p + "r2", "ReLU", {add(p + "r1", "ReLU", {in})})}));
        break;
      case 3:  // BiasAdd -> Identity -> ReLU: fuses only once the Identity is gone
        live.push_back(add(p + "relu", "ReLU", {add(p + "id", "Identity", {add(p + "bias", "BiasAdd", {in, pick()})})}));
        break;
      case 4:
        live.push_back(add(p + "add", "Add", {in, pick()}));
        break;
      case 5:
        live.push_back(add(p + "gelu", "Gelu", {in}));
        break;
      default:
        live.push_back(add(p + "relu", "ReLU", {add(p + "id", "Identity", {in})}));
        break;
    }
  }
  g.add_output(live.back());
  g.add_output(live[live.size() / 2]);
  return g;
}


std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Determinism, SameGraphStatsAndTraceForAnyThreadsAndOrder) {
  RuleSet rs = load_rules_from_string(kRules, "t.yaml");
  Graph base = overlapping_graph(11, 2500);
  ASSERT_GT(base.size(), 4096u);  // big enough for the parallel matching path
  for (bool incremental : {true, false}) {
    std::string graph, stats;
    for (int threads : {1, 2, 8}) {
      for (std::optional<std::uint64_t> seed : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{1},
                                                std::optional<std::uint64_t>{2}, std::optional<std::uint64_t>{977}}) {
        Graph g = base;
        RewriteOptions opt;
        opt.threads = threads;
        opt.incremental = incremental;
        opt.shuffle_seed = seed;
        opt.trace = true;
        RewriteReport rep = rewrite_graph(g, rs, opt);
        g.validate();
        ASSERT_TRUE(rep.converged);
        std::string got = write_graph_text(g), got_stats = graphfuse::testing::report_counts(rep);
        if (graph.empty()) {
          graph = got;
          stats = got_stats;
          // The rules really do compete: every kind of rejection the order decides occurs.
          std::size_t conflicts = 0, applied = 0;
          for (const RuleStats& s : rep.rules) {
            conflicts += s.rejected_by(RejectReason::Conflict) + s.rejected_by(RejectReason::Stale);
            applied += s.applied;
            EXPECT_GT(s.applied, 0u) << s.rule;
          }
          EXPECT_GT(conflicts, 50u);
          EXPECT_GT(applied, 1000u);
          EXPECT_GE(rep.rounds, 2);
        }
        EXPECT_EQ(got, graph) << "threads " << threads << " seed " << (seed ? *seed : 0) << " incremental " << incremental;
        EXPECT_EQ(got_stats, stats) << "threads " << threads << " seed " << (seed ? *seed : 0);
      }
    }
  }
}

TEST(Determinism, ApplyOutputIsByteIdenticalAcrossThreadsAndShuffles) {
  fs::path dir = fs::temp_directory_path() / "graphfuse_determinism";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "rules.yaml") << kRules;
  save_graph(overlapping_graph(5, 2500), (dir / "in.graph").string());
  std::string first;
  for (const char* args : {"--threads 1", "--threads 2", "--threads 8", "--threads 2 --shuffle-seed 1",
                           "--threads 8 --shuffle-seed 123456789", "--threads 1 --shuffle-seed 7"}) {
    fs::path out = dir / "out.graph";
    fs::remove(out);
    std::string cmd = std::string(GRAPHFUSE_CLI) + " apply -q --rules " + (dir / "rules.yaml").string() + " " +
                      (dir / "in.graph").string() + " -o " + out.string() + " " + args;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::string bytes = slurp(out);
    ASSERT_FALSE(bytes.empty());
    if (first.empty()) first = bytes;
    EXPECT_EQ(bytes, first) << args;
  }
  EXPECT_NE(first, slurp(dir / "in.graph"));
  fs::remove_all(dir);
}
