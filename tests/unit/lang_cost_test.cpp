// The matching cost of commutative ops: one rule with 4 commutative ops (operand-order
// forks) against the same rule without them and against the 16 cloned rules that spell
// out every operand order (what rewriters without commutativity make authors write).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <random>
#include <set>

#include "graphfuse/rules.h"
#include "match/program.h"
#include "match/vm.h"

using namespace graphfuse;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

// Add/Mul trees over a few inputs, operands in random order: many near-misses, some hits.
Graph arithmetic_graph(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Graph g;
  std::vector<ValueRef> values;
  for (int i = 0; i < 8; ++i) values.push_back({g.add_input("in" + std::to_string(i)), 0});
  for (std::size_t i = 0; values.size() < n; ++i) {
    std::size_t span = std::min<std::size_t>(values.size(), 12);
    ValueRef a = values[values.size() - 1 - rng() % span], b = values[values.size() - 1 - rng() % span];
    NodeId id = g.add_node("n" + std::to_string(i), op(rng() % 2 ? "Add" : "Mul"), {a, b});
    values.push_back({id, 0});
  }
  return g;
}

struct Cost {
  std::uint64_t steps = 0;
  std::set<NodeId> roots;
  double ms = 0;
};

Cost measure(const RuleSet& rs, const Graph& g) {
  Cost c;
  match::VmState st;
  auto t0 = std::chrono::steady_clock::now();
  for (const Rule& r : rs.rules())
    for (NodeId n : g.nodes()) {
      if (g.node(n).op != r.root_ops[0]) continue;
      std::size_t found = match::run_program(r.compiled->match, g, n, st, [](const match::Embedding&) { return false; });
      if (found) c.roots.insert(n);
    }
  c.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  c.steps = st.steps;
  return c;
}

std::string rule_file(const std::vector<std::string>& patterns, bool commutative) {
  std::string y = commutative ? "ops:\n  Add: {commutative: true}\n  Mul: {commutative: true}\n" : "";
  y += "rules:\n";
  for (std::size_t i = 0; i < patterns.size(); ++i)
    y += "  - {name: r" + std::to_string(i) + ", pattern: \"" + patterns[i] + "\", rewrite: \"X(p)\"}\n";
  return y;
}

}  // namespace

TEST(LangCost, FourCommutativeOpsAgainstClonedRules) {
  const std::string pattern = "Add(Mul(p, q), Mul(Add(r, s), t))";
  // The 16 operand orders, spelled out.
  std::vector<std::string> clones;
  for (int m = 0; m < 16; ++m) {
    auto ord = [&](int bit, const std::string& a, const std::string& b) {
      return (m >> bit) & 1 ? b + ", " + a : a + ", " + b;
    };
    std::string inner = "Add(" + ord(0, "r", "s") + ")";
    std::string m2 = "Mul(" + ord(1, inner, "t") + ")";
    std::string m1 = "Mul(" + ord(2, "p", "q") + ")";
    clones.push_back("Add(" + ord(3, m1, m2) + ")");
  }
  Graph g = arithmetic_graph(20000, 7);
  RuleSet comm = load_rules_from_string(rule_file({pattern}, true), "comm.yaml");
  RuleSet plain = load_rules_from_string(rule_file({pattern}, false), "plain.yaml");
  RuleSet cloned = load_rules_from_string(rule_file(clones, false), "cloned.yaml");
  Cost c = measure(comm, g), p = measure(plain, g), k = measure(cloned, g);
  std::cout << "[ cost     ] 20000-node Add/Mul graph, pattern " << pattern << " (4 commutative ops):\n"
            << "[ cost     ]   declared commutative (1 program, forks): " << c.steps << " VM steps, " << c.roots.size()
            << " roots matched, " << c.ms << " ms\n"
            << "[ cost     ]   not declared (1 program):               " << p.steps << " VM steps, " << p.roots.size()
            << " roots matched, " << p.ms << " ms\n"
            << "[ cost     ]   16 cloned rules (every operand order):  " << k.steps << " VM steps, " << k.roots.size()
            << " roots matched, " << k.ms << " ms\n";
  RecordProperty("commutative_steps", std::to_string(c.steps));
  RecordProperty("plain_steps", std::to_string(p.steps));
  RecordProperty("cloned_steps", std::to_string(k.steps));
  EXPECT_EQ(c.roots, k.roots);  // the same matches as spelling out every order
  EXPECT_LT(p.roots.size(), c.roots.size());
  EXPECT_LT(c.steps, k.steps);  // forks share the work the clones repeat
  EXPECT_EQ(comm[0].compiled->match.forks.size(), 4u);
}
