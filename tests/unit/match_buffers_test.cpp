// The matcher's per-thread chunks of match registers: every found match reads back the embedding
// the VM produced, serial and parallel passes agree, and merging results keeps both.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include <tbb/task_arena.h>

#include "graphfuse/generate.h"
#include "graphfuse/rules.h"
#include "match/matcher.h"

using namespace graphfuse;

namespace {

// Two rules on the same roots (ReLU), one with two pattern nodes, one with three, so the
// buffers hold embeddings of different sizes side by side.
const char* kRules = R"(rules:
  - name: bias_relu
    pattern: |
      bias = BiasAdd(x, b)
      ReLU(bias)
    rewrite: BiasRelu(x, b)
  - name: conv_bias_relu
    pattern: |
      conv = Conv2D(x, w)
      bias = BiasAdd(conv, b)
      ReLU(bias)
    rewrite: ConvBiasRelu(x, w, b)
)";

using Key = std::tuple<std::uint32_t, NodeId>;
using Regs = std::pair<std::vector<NodeId>, std::vector<ValueRef>>;

std::map<Key, Regs> by_key(const match::MatchResults& m) {
  std::map<Key, Regs> out;
  for (const match::Found& f : m.found) {
    match::EmbeddingView v = m.embedding(f);
    bool fresh = out.emplace(Key{f.rule, f.root}, Regs{{v.nodes.begin(), v.nodes.end()},
                                                       {v.values.begin(), v.values.end()}}).second;
    EXPECT_TRUE(fresh) << "two matches for one (rule, root)";
  }
  return out;
}

}  // namespace

TEST(MatchBuffers, EveryMatchReadsBackTheVmEmbedding) {
  Graph g = generate_cnn_graph(GenerateOptions{20000, 3, true});
  RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  std::vector<char> active(rules.size(), 1);
  std::vector<NodeId> all = g.nodes();
  match::Acceptor accept_all = [](std::uint32_t, const match::Embedding&) { return -1; };

  match::MatchResults serial = match::find_matches(g, rules, active, all, accept_all, nullptr);
  tbb::task_arena arena(2);
  match::MatchResults parallel = match::find_matches(g, rules, active, all, accept_all, &arena);
  ASSERT_GT(serial.found.size(), 1000u);
  // Embeddings fill chunks that never move; these span several, read back across the seams.
  EXPECT_GT(serial.buffers.size(), 2u);
  EXPECT_GT(parallel.buffers.size(), 2u);
  std::map<Key, Regs> s = by_key(serial), p = by_key(parallel);
  EXPECT_EQ(s, p);

  // Each stored embedding is the first one the VM reports at that root.
  match::VmState st;
  for (const auto& [key, regs] : s) {
    const auto& [rule, root] = key;
    match::Embedding first;
    match::run_program(rules[rule].compiled->match, g, root, st, [&](const match::Embedding& e) {
      first = e;
      return false;
    });
    ASSERT_EQ(regs.first, first.nodes) << "rule " << rule << " at " << g.node(root).id;
    ASSERT_EQ(regs.second, first.values);
    EXPECT_EQ(regs.first.size(), rules[rule].compiled->match.num_node_regs);
  }
}

TEST(MatchBuffers, AppendKeepsBothResultsReadable) {
  Graph g = generate_cnn_graph(GenerateOptions{6000, 5, true});
  RuleSet rules = load_rules_from_string(kRules, "t.yaml");
  std::vector<NodeId> all = g.nodes();
  match::Acceptor accept_all = [](std::uint32_t, const match::Embedding&) { return -1; };
  std::vector<char> first(rules.size(), 0), second(rules.size(), 0), both(rules.size(), 1);
  first[0] = 1;
  second[1] = 1;
  tbb::task_arena arena(2);
  match::MatchResults merged = match::find_matches(g, rules, first, all, accept_all, &arena);
  merged.append(match::find_matches(g, rules, second, all, accept_all, &arena));
  match::MatchResults together = match::find_matches(g, rules, both, all, accept_all, nullptr);
  EXPECT_EQ(by_key(merged), by_key(together));
}
