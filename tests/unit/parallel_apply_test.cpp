// The parallel apply phase (RewriteOptions::parallel_apply_from): a round applied in
// groups side by side makes the decisions and the graph that applying it in order makes.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <sstream>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "testing/report_counts.h"

using namespace graphfuse;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

// Fusions only (one root taken over by one op), so every round can be grouped; they
// overlap: bias_relu and the conv fusion claim the same BiasAdd and ReLU, relu_relu
// claims its own output's producer, and wrap_const turns constants that the scale rule
// reads into something else (a reader of that constant then goes stale).
const char* kRules = R"yaml(rules:
  - name: conv2d_biasadd_relu
    benefit: 3
    pattern: |
      conv = Conv2D(x, w)
      bias = BiasAdd(conv, b)
      ReLU(bias)
    rewrite: FusedConv2D_BiasAdd_ReLU(x, w, b) {...conv, activation = "ReLU"}
  - name: bias_relu
    pattern: |
      ba = BiasAdd(y, b)
      ReLU(ba)
    rewrite: BiasRelu(y, b)
  - name: relu_relu
    pattern: |
      r = ReLU(x)
      ReLU(r)
    rewrite: ReLU(x)
  - name: wrap_const
    benefit: 2
    pattern: "Const() {_wrap = 1}"
    rewrite: Wrapped()
  - name: scale
    pattern: Mul(x, k)
    where: const(k)
    rewrite: Scale(x, k)
)yaml";

// Blocks over a pool of live values: blocks share producers (a second consumer blocks a
// fusion; a shared weight or input is read by many matches), one fusion's root feeds
// the next one's input, ReLU stacks overlap with themselves, and some constants are both
// wrapped and read by a Mul.
Graph overlapping_graph(unsigned seed, int blocks) {
  std::mt19937 rng(seed);
  Graph g;
  std::vector<ValueRef> live{{g.add_input("x"), 0}};
  std::vector<ValueRef> shared_w;
  auto pick = [&] { return live[std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng)]; };
  auto add = [&](const std::string& id, const char* o, std::vector<ValueRef> in, Attributes a = {}) {
    return ValueRef{g.add_node(id, op(o), std::move(in), std::move(a)), 0};
  };
  for (int i = 0; i < blocks; ++i) {
    std::string p = "n" + std::to_string(i) + "_";
    ValueRef in = rng() % 4 == 0 ? pick() : live.back();
    switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
      case 0: case 1: {
        ValueRef w = !shared_w.empty() && rng() % 2 ? shared_w[rng() % shared_w.size()] : add(p + "w", "Const", {});
        if (rng() % 5 == 0) shared_w.push_back(w);
        Attributes a;
        a.set("strides", std::vector<std::int64_t>{1, static_cast<std::int64_t>(1 + rng() % 2)});
        ValueRef c = add(p + "conv", "Conv2D", {in, w}, a);
        ValueRef b = add(p + "bias", "BiasAdd", {c, add(p + "b", "Const", {})});
        live.push_back(add(p + "relu", "ReLU", {b}));
        if (rng() % 4 == 0) live.push_back(rng() % 2 ? c : b);
        break;
      }
      case 2:
        live.push_back(add(p + "r3", "ReLU", {add(p + "r2", "ReLU", {add(p + "r1", "ReLU", {in})})}));
        break;
      case 3: {
        Attributes a;
        if (rng() % 2) a.set("_wrap", std::int64_t{1});
        ValueRef k = add(p + "k", "Const", {}, a);
        live.push_back(add(p + "mul", "Mul", {in, k}));
        if (rng() % 2) live.push_back(add(p + "mul2", "Mul", {pick(), k}));
        break;
      }
      case 4:
        live.push_back(add(p + "add", "Add", {in, pick()}));
        break;
      default:
        live.push_back(add(p + "relu", "ReLU", {add(p + "ba", "BiasAdd", {in, add(p + "b", "Const", {})})}));
        break;
    }
  }
  g.add_output(live.back());
  g.add_output(live[live.size() / 2]);
  return g;
}

// The order of every use list too: it is part of the graph (topological orders, and the
// writers that follow them, visit uses in it), though the text format does not show it.
std::string uses(const Graph& g) {
  std::ostringstream o;
  for (NodeId n : g.nodes()) {
    o << g.node(n).id << ':';
    for (const Use& u : g.uses(n)) o << ' ' << g.node(u.node).id << '.' << u.slot;
    o << '\n';
  }
  return o.str();
}


struct Outcome {
  std::string graph, stats;
  std::size_t groups = 0;  // summed over rounds
  std::size_t first_round_groups = 0;
};

Outcome rewrite(const Graph& base, const RuleSet& rules, int threads, bool grouped, std::optional<std::uint64_t> seed = {}) {
  Graph g = base;
  RewriteOptions opt;
  opt.threads = threads;
  opt.shuffle_seed = seed;
  opt.parallel_apply_from = grouped ? 0 : SIZE_MAX;
  RewriteReport rep = rewrite_graph(g, rules, opt);
  g.validate();
  EXPECT_TRUE(rep.converged);
  Outcome r{write_graph_text(g) + uses(g), graphfuse::testing::report_counts(rep)};
  for (const RoundStats& s : rep.per_round) r.groups += s.apply_groups;
  r.first_round_groups = rep.per_round.front().apply_groups;
  return r;
}

// The reference is applying in order on one thread; every grouped run must equal it.
void expect_grouped_equals_in_order(const Graph& base, const RuleSet& rules, std::size_t min_groups,
                                    std::vector<std::optional<std::uint64_t>> seeds) {
  Outcome ref = rewrite(base, rules, 1, false);
  EXPECT_EQ(ref.groups, 0u);
  for (int threads : {2, 8})
    for (std::optional<std::uint64_t> seed : seeds) {
      Outcome got = rewrite(base, rules, threads, true, seed);
      EXPECT_GE(got.groups, min_groups) << "threads " << threads;  // the grouped path ran
      EXPECT_EQ(got.graph, ref.graph) << "threads " << threads << " seed " << (seed ? *seed : 0);
      EXPECT_EQ(got.stats, ref.stats) << "threads " << threads << " seed " << (seed ? *seed : 0);
    }
  // With one thread there is nothing to apply side by side: rounds go in order.
  EXPECT_EQ(rewrite(base, rules, 1, true).groups, 0u);
}

}  // namespace

TEST(ParallelApply, OverlappingFusionsGiveTheInOrderGraphAndDecisions) {
  RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  Graph base = overlapping_graph(7, 3000);
  // The decisions the order makes really occur: conflicts, stale matches (a constant a
  // match reads was wrapped first), every rule applied.
  Graph g = base;
  RewriteOptions opt;
  opt.threads = 2;
  opt.parallel_apply_from = 0;
  RewriteReport rep = rewrite_graph(g, rules, opt);
  std::size_t conflicts = 0, stale = 0;
  for (const RuleStats& s : rep.rules) {
    conflicts += s.rejected_by(RejectReason::Conflict);
    stale += s.rejected_by(RejectReason::Stale);
    EXPECT_GT(s.applied, 0u) << s.rule;
  }
  EXPECT_GT(conflicts, 20u);
  EXPECT_GT(stale, 5u);
  expect_grouped_equals_in_order(base, rules, 100, {std::nullopt, 3, 99});
}

// RoundStats splits each round's apply_ms: the ordering, the grouping (only in rounds applied
// side by side) and what is left, the applying.
TEST(ParallelApply, RoundStatsSayWhatOrderingAndGroupingTook) {
  RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  Graph base = overlapping_graph(7, 3000);
  for (int threads : {1, 2}) {
    Graph g = base;
    RewriteOptions opt;
    opt.threads = threads;
    opt.parallel_apply_from = 0;
    RewriteReport rep = rewrite_graph(g, rules, opt);
    std::size_t grouped_rounds = 0;
    for (const RoundStats& s : rep.per_round) {
      if (s.matched > 0) {
        EXPECT_GT(s.order_ms, 0.0);  // the round had matches to order: the time was taken
      }
      EXPECT_LE(s.order_ms + s.group_ms, s.apply_ms);
      if (s.apply_groups > 0) {
        ++grouped_rounds;
        EXPECT_GT(s.group_ms, 0.0);
      } else {
        EXPECT_EQ(s.group_ms, 0.0);
      }
    }
    EXPECT_EQ(grouped_rounds > 0, threads > 1) << "threads " << threads;
  }
}

TEST(ParallelApply, GeneratedGraphsGiveTheInOrderGraph) {
  RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  // Big enough (tens of thousands of fusions) that the second thread joins in and the
  // groups really are applied side by side, interleaved in time.
  for (GraphShape shape : {GraphShape::Cnn, GraphShape::Wide}) {
    GenerateOptions gen;
    gen.nodes = shape == GraphShape::Wide ? 200000 : 100000;
    gen.seed = 3;
    gen.shape = shape;
    // The wide shape's blocks share one weight and one bias: a block is one group; the
    // CNN shape's fusions each stand alone, though one's root is the next one's input.
    expect_grouped_equals_in_order(generate_cnn_graph(gen), rules, shape == GraphShape::Wide ? 1000 : 5000,
                                   {std::nullopt});
  }
}

TEST(ParallelApply, RoundsWithOtherRewritesAreAppliedInOrder) {
  // An erase-style rule matches in the first round: that round is not grouped.
  std::string rules_text = std::string(kRules) + "  - {name: drop_identity, pattern: \"Identity(x)\", rewrite: x}\n";
  RuleSet rules = load_rules_from_string(rules_text, "t.yaml");
  Graph g = overlapping_graph(9, 500);
  ValueRef last = g.outputs().front();
  NodeId id = g.add_node("extra_identity", op("Identity"), {last});
  g.set_outputs({{id, 0}});
  Outcome ref = rewrite(g, rules, 1, false);
  Outcome got = rewrite(g, rules, 2, true);
  EXPECT_EQ(got.graph, ref.graph);
  EXPECT_EQ(got.stats, ref.stats);
  EXPECT_EQ(got.first_round_groups, 0u);
}
