// The parallel apply phase (RewriteOptions::parallel_apply_from): a round applied in
// groups side by side makes the decisions and the graph that applying it in order makes.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "match/matcher.h"
#include "rewrite/apply_groups.h"
#include "testing/report_counts.h"

using namespace graphfuse;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

/// Conv2D -> BiasAdd -> ReLU reading `in`, with a weight and a bias of its own (one match
/// of the seed rule); node ids end in `k`. Returns the ReLU.
NodeId seed_chain(Graph& g, const std::string& k, ValueRef in) {
  NodeId w = g.add_node("w" + k, op("Const"));
  NodeId b = g.add_node("b" + k, op("Const"));
  NodeId c = g.add_node("c" + k, op("Conv2D"), {in, {w, 0}});
  NodeId a = g.add_node("a" + k, op("BiasAdd"), {{c, 0}, {b, 0}});
  return g.add_node("r" + k, op("ReLU"), {{a, 0}});
}

/// The nodes the grouping flagged shared.
std::vector<NodeId> shared_nodes(const rewrite::ApplyGroups& groups, const Graph& g) {
  std::vector<NodeId> out;
  for (NodeId n = 0; n < g.capacity(); ++n)
    if (groups.shared(n)) out.push_back(n);
  return out;
}

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

Outcome run_rules(const Graph& base, const RuleSet& rules, int threads, bool grouped, std::optional<std::uint64_t> seed = {}) {
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
  Outcome ref = run_rules(base, rules, 1, false);
  EXPECT_EQ(ref.groups, 0u);
  for (int threads : {2, 8})
    for (std::optional<std::uint64_t> seed : seeds) {
      Outcome got = run_rules(base, rules, threads, true, seed);
      EXPECT_GE(got.groups, min_groups) << "threads " << threads;  // the grouped path ran
      EXPECT_EQ(got.graph, ref.graph) << "threads " << threads << " seed " << (seed ? *seed : 0);
      EXPECT_EQ(got.stats, ref.stats) << "threads " << threads << " seed " << (seed ? *seed : 0);
    }
  // With one thread there is nothing to apply side by side: rounds go in order.
  EXPECT_EQ(run_rules(base, rules, 1, true).groups, 0u);
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
        // The round had matches: the time to order them was taken (a grouped round's is
        // the check that it may be grouped; its groups are ordered within group_ms).
        EXPECT_GT(s.order_ms, 0.0);
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
    // apply --stats-json carries the same split, round by round.
    auto j = nlohmann::json::parse(stats_json(rep));
    ASSERT_EQ(j["per_round"].size(), rep.per_round.size());
    for (std::size_t i = 0; i < rep.per_round.size(); ++i) {
      const RoundStats& s = rep.per_round[i];
      const nlohmann::json& r = j["per_round"][i];
      EXPECT_EQ(r["apply_groups"].get<std::size_t>(), s.apply_groups) << "round " << i + 1;
      EXPECT_NEAR(r["order_ms"].get<double>(), s.order_ms, 0.006) << "round " << i + 1;
      EXPECT_NEAR(r["group_ms"].get<double>(), s.group_ms, 0.006) << "round " << i + 1;
    }
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
  Outcome ref = run_rules(g, rules, 1, false);
  Outcome got = run_rules(g, rules, 2, true);
  EXPECT_EQ(got.graph, ref.graph);
  EXPECT_EQ(got.stats, ref.stats);
  EXPECT_EQ(got.first_round_groups, 0u);
}

// The grouping itself: split over threads in small chunks, it gives the groups, their
// order and the shared-node flags that one thread gives; and matches that match a common
// node, or read a common value, always share a group.
TEST(ParallelApply, GroupsDoNotDependOnTheThreadSplit) {
  RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  std::vector<char> active(rules.size(), 1), constant_roots;
  for (std::size_t r = 0; r < rules.size(); ++r) constant_roots.push_back(rewrite::root_can_be_constant(rules[r]) ? 1 : 0);
  match::Acceptor accept_all = [](std::uint32_t, const match::Embedding&) { return -1; };
  GenerateOptions gen;
  gen.nodes = 30000;
  gen.seed = 5;
  gen.shape = GraphShape::Wide;
  // Eight threads on any machine (oneTBB keeps one worker per CPU but one by default).
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  tbb::task_arena arena(8);
  for (const Graph& g : {overlapping_graph(11, 4000), generate_cnn_graph(gen)}) {
    std::vector<NodeId> all = g.nodes();
    match::MatchResults mr = match::find_matches(g, rules, active, all, accept_all, nullptr);
    ASSERT_GT(mr.found.size(), 2000u);
    // Matches in the order of their roots (one order; the grouping is correct for any).
    std::vector<std::uint32_t> in_order(mr.found.size());
    for (std::uint32_t i = 0; i < in_order.size(); ++i) in_order[i] = i;
    std::sort(in_order.begin(), in_order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::tie(mr.found[a].root, mr.found[a].rule) < std::tie(mr.found[b].root, mr.found[b].rule);
    });
    rewrite::ApplyGroups one;
    ASSERT_TRUE(rewrite::group_matches(g, mr, in_order, constant_roots, nullptr, one));
    EXPECT_GT(one.size(), 100u);
    EXPECT_LT(one.size(), mr.found.size());  // some matches do share a group
    const std::vector<NodeId> flags = shared_nodes(one, g);
    EXPECT_GT(flags.size(), 0u);
    for (int run = 0; run < 5; ++run) {
      rewrite::ApplyGroups split;
      ASSERT_TRUE(rewrite::group_matches(g, mr, in_order, constant_roots, &arena, split, 0));
      EXPECT_EQ(split.order, one.order);
      EXPECT_EQ(split.starts, one.starts);
      EXPECT_EQ(shared_nodes(split, g), flags);
    }
    // Every node matched, and every value read, by several matches lies in one group.
    std::vector<std::size_t> group_of(mr.found.size());
    for (std::size_t k = 0; k < one.size(); ++k)
      for (std::uint32_t p = one.starts[k]; p < one.starts[k + 1]; ++p) group_of[one.order[p]] = k;
    std::vector<std::size_t> matched_in(g.capacity(), SIZE_MAX), read_in(g.capacity(), SIZE_MAX);
    for (std::uint32_t f = 0; f < mr.found.size(); ++f) {
      match::EmbeddingView e = mr.embedding(mr.found[f]);
      for (NodeId n : e.nodes) {
        if (n == kNoNode) continue;
        if (matched_in[n] == SIZE_MAX) matched_in[n] = group_of[f];
        EXPECT_EQ(matched_in[n], group_of[f]) << "node " << g.node(n).id;
      }
      for (ValueRef v : e.values) {
        if (!v.valid() || std::find(e.nodes.begin(), e.nodes.end(), v.node) != e.nodes.end()) continue;
        if (read_in[v.node] == SIZE_MAX) read_in[v.node] = group_of[f];
        EXPECT_EQ(read_in[v.node], group_of[f]) << "value of " << g.node(v.node).id;
      }
    }
    // The driver's form, matches in found order without a list: the groups and flags of
    // the identity list, one thread or eight.
    std::vector<std::uint32_t> identity(mr.found.size());
    for (std::uint32_t i = 0; i < identity.size(); ++i) identity[i] = i;
    rewrite::ApplyGroups listed;
    ASSERT_TRUE(rewrite::group_matches(g, mr, identity, constant_roots, nullptr, listed));
    for (tbb::task_arena* a : {static_cast<tbb::task_arena*>(nullptr), &arena}) {
      rewrite::ApplyGroups implicit;
      ASSERT_TRUE(rewrite::group_matches(g, mr, constant_roots, a, implicit, 0));
      EXPECT_EQ(implicit.order, listed.order);
      EXPECT_EQ(implicit.starts, listed.starts);
      EXPECT_EQ(shared_nodes(implicit, g), shared_nodes(listed, g));
      // With lent slots (the driver lends its marks): the same groups and flags, and of
      // the lent words only the matched nodes' are written, each with the tag.
      constexpr std::uint32_t kUntouched = 0x1234567u;
      std::vector<std::uint32_t> lent(g.capacity(), kUntouched);
      rewrite::ApplyGroups borrowed;
      ASSERT_TRUE(rewrite::group_matches(g, mr, constant_roots, a, borrowed, 0, lent));
      EXPECT_EQ(borrowed.order, listed.order);
      EXPECT_EQ(borrowed.starts, listed.starts);
      EXPECT_EQ(shared_nodes(borrowed, g), shared_nodes(listed, g));
      for (NodeId n = 0; n < g.capacity(); ++n) {
        if (matched_in[n] == SIZE_MAX) {
          ASSERT_EQ(lent[n], kUntouched) << "node " << n;
        } else {
          ASSERT_NE(lent[n] & rewrite::kLentSlotTag, 0u) << "node " << n;
          ASSERT_LT(lent[n] & ~rewrite::kLentSlotTag, mr.found.size()) << "node " << n;
        }
      }
    }
  }
}

// A value's readers are found through its consumers' matcher slots (apply_groups.cpp).
// Two fused chains in a row: the second reads the first's root, which has one use (when
// `fork`, two). The two stay apart and that root is flagged
// shared, either way, with lent slots or without. The second root's one consumer is
// matched by nothing: a stale lent word there (one that names a match of this round)
// must not make it read.
TEST(ParallelApply, AOneUseLeafIsFoundThroughItsConsumer) {
  RuleSet rules = load_rule_files({GRAPHFUSE_SOURCE_DIR "/rules/seed.yaml"});  // Conv2D -> BiasAdd -> ReLU
  ASSERT_EQ(rules.size(), 1u);
  std::vector<char> active(1, 1), constant_roots(1, rewrite::root_can_be_constant(rules[0]) ? 1 : 0);
  match::Acceptor accept_all = [](std::uint32_t, const match::Embedding&) { return -1; };
  for (bool fork : {false, true}) {
    Graph g;
    NodeId x = g.add_input("x");
    NodeId r1 = seed_chain(g, "1", {x, 0});
    NodeId r2 = seed_chain(g, "2", {r1, 0});
    if (fork) g.add_output({g.add_node("t", op("Tanh"), {{r1, 0}}), 0});
    g.add_output({g.add_node("u", op("Tanh"), {{r2, 0}}), 0});
    match::MatchResults mr = match::find_matches(g, rules, active, g.nodes(), accept_all, nullptr);
    ASSERT_EQ(mr.found.size(), 2u);
    for (bool lend : {false, true}) {
      std::vector<std::uint32_t> words(g.capacity(), rewrite::kLentSlotTag | 1u);  // stale: "match 1"
      rewrite::ApplyGroups groups;
      ASSERT_TRUE(rewrite::group_matches(g, mr, constant_roots, nullptr, groups, 0,
                                         lend ? std::span<std::uint32_t>(words) : std::span<std::uint32_t>{}));
      EXPECT_EQ(groups.size(), 2u) << "fork " << fork << ", lend " << lend;
      for (NodeId n = 0; n < g.capacity(); ++n)
        EXPECT_EQ(groups.shared(n), n == r1) << g.node(n).id << ", fork " << fork << ", lend " << lend;
    }
  }
}

// Readers are found by walking a node's use list to its first consumer that a match
// holds (apply_groups.cpp); a node whose held consumers come after 64 others (a hub read
// by a few matches at the end of its list) is settled after the walk instead. Either way
// the groups and flags are the same: two chains reading a common input x share a group,
// and a third chain reading the first one's root stays apart, the root flagged shared.
TEST(ParallelApply, ReadersPastALongUseListAreGroupedTheSame) {
  RuleSet rules = load_rule_files({GRAPHFUSE_SOURCE_DIR "/rules/seed.yaml"});  // Conv2D -> BiasAdd -> ReLU
  ASSERT_EQ(rules.size(), 1u);
  std::vector<char> active(1, 1), constant_roots(1, rewrite::root_can_be_constant(rules[0]) ? 1 : 0);
  match::Acceptor accept_all = [](std::uint32_t, const match::Embedding&) { return -1; };
  tbb::task_arena arena(2);
  for (int padding : {0, 3, 200}) {
    Graph g;
    NodeId x = g.add_input("x");
    // Consumers no match holds, first in the use lists of x and of chain a's root.
    auto pad = [&](const std::string& k, NodeId of) {
      for (int i = 0; i < padding; ++i) g.add_output({g.add_node(k + std::to_string(i), op("Tanh"), {{of, 0}}), 0});
    };
    pad("px", x);
    NodeId ra = seed_chain(g, "a", {x, 0});
    pad("pr", ra);
    NodeId rb = seed_chain(g, "b", {x, 0});
    NodeId rc = seed_chain(g, "c", {ra, 0});
    for (NodeId r : {rb, rc}) g.add_output({r, 0});
    match::MatchResults mr = match::find_matches(g, rules, active, g.nodes(), accept_all, nullptr);
    ASSERT_EQ(mr.found.size(), 3u);
    auto match_of = [&](NodeId root) {
      for (std::uint32_t i = 0; i < mr.found.size(); ++i)
        if (mr.found[i].root == root) return i;
      return ~0u;
    };
    for (tbb::task_arena* a : {static_cast<tbb::task_arena*>(nullptr), &arena}) {
      rewrite::ApplyGroups groups;
      ASSERT_TRUE(rewrite::group_matches(g, mr, constant_roots, a, groups, 0));
      ASSERT_EQ(groups.size(), 2u) << "padding " << padding;
      std::vector<std::uint32_t> group_of(3);
      for (std::uint32_t k = 0; k < groups.size(); ++k)
        for (std::uint32_t p = groups.starts[k]; p < groups.starts[k + 1]; ++p) group_of[groups.order[p]] = k;
      EXPECT_EQ(group_of[match_of(ra)], group_of[match_of(rb)]) << "padding " << padding;
      EXPECT_NE(group_of[match_of(ra)], group_of[match_of(rc)]) << "padding " << padding;
      EXPECT_EQ(shared_nodes(groups, g), std::vector<NodeId>{ra}) << "padding " << padding;
    }
  }
}
