// Differential test: the compiled matcher's embeddings == boost::vf2_subgraph_mono's, on
// random (graph, pattern) pairs: DAG patterns, shared leaves, alternatives, `*`,
// commutative ops, multi-output ports and attribute constraints (before legality).
#include <gtest/gtest.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/vf2_sub_graph_iso.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "graphfuse/boost_graph.h"
#include "graphfuse/rules.h"
#include "match/program.h"
#include "match/vm.h"

using namespace graphfuse;

namespace {

// The op alphabet: name, inputs, outputs, commutative. Small, so matches are frequent.
struct OpInfo {
  const char* name;
  int inputs, outputs;
  bool commutative;
};
const std::vector<OpInfo> kOps = {
    {"A", 2, 1, true}, {"M", 2, 1, true}, {"B", 2, 1, false}, {"C", 1, 1, false}, {"D", 1, 1, false}, {"S", 1, 2, false},
};
const OpInfo& info(std::string_view name) {
  for (const OpInfo& o : kOps)
    if (name == o.name) return o;
  throw std::logic_error("op");
}

// A pattern node as the generator made it (the oracle reads this, not the compiled program).
struct PArg {
  enum Kind { Wild, Leaf, Node } kind = Wild;
  std::string leaf;
  int node = -1;
  int port = 0;
};
struct PNodeSpec {
  std::vector<std::string> ops;  // empty: `*`
  int arity = 0;
  std::vector<PArg> args;
  // Attribute constraint on "k": none, or literal compare, or equal to another node's k.
  enum class K { None, Eq, Ne, In, Absent, Gt, SameAs } k = K::None;
  std::int64_t kv = 0, kv2 = 0;
  int other = -1;
  bool commutative() const { return !ops.empty() && info(ops[0]).commutative; }
};

Graph random_graph(std::mt19937_64& rng) {
  Graph g;
  std::uniform_int_distribution<int> size(20, 300);
  int n = size(rng);
  std::vector<ValueRef> values;
  int inputs = 3 + static_cast<int>(rng() % 4);
  for (int i = 0; i < inputs; ++i) values.push_back({g.add_input("in" + std::to_string(i)), 0});
  for (int i = inputs; i < n; ++i) {
    const OpInfo& o = kOps[rng() % kOps.size()];
    std::vector<ValueRef> ins;
    for (int k = 0; k < o.inputs; ++k) {
      // Mostly recent values, so chains and shared operands are common.
      std::size_t span = rng() % 2 ? std::min<std::size_t>(values.size(), 6) : values.size();
      ins.push_back(values[values.size() - 1 - rng() % span]);
    }
    Attributes a;
    if (rng() % 5) a.set("k", static_cast<std::int64_t>(rng() % 3));
    NodeId id = g.add_node("n" + std::to_string(i), OpType::intern(o.name), ins, a, static_cast<std::uint32_t>(o.outputs));
    for (int p = 0; p < o.outputs; ++p) values.push_back({id, static_cast<std::uint32_t>(p)});
  }
  return g;
}

std::vector<PNodeSpec> random_pattern(std::mt19937_64& rng) {
  int k = 1 + static_cast<int>(rng() % 4);
  std::vector<PNodeSpec> nodes(static_cast<std::size_t>(k));
  const char* leaves[] = {"x", "y", "z"};
  for (int i = 0; i < k; ++i) {
    PNodeSpec& s = nodes[static_cast<std::size_t>(i)];
    int pick = static_cast<int>(rng() % 10);
    if (pick == 0) s.ops = {"A", "M"};
    else if (pick == 1) s.ops = {"C", "D"};
    else if (pick == 2) s.ops = {};  // `*`
    else s.ops = {kOps[rng() % kOps.size()].name};
    s.arity = s.ops.empty() ? 1 + static_cast<int>(rng() % 2) : info(s.ops[0]).inputs;
    for (int a = 0; a < s.arity; ++a) {
      PArg arg;
      if (rng() % 5 < 4) {
        arg.kind = PArg::Leaf;
        arg.leaf = leaves[rng() % 3];
      }
      s.args.push_back(arg);
    }
    int c = static_cast<int>(rng() % 12);
    if (c < 6) s.k = static_cast<PNodeSpec::K>(c);
    s.kv = static_cast<std::int64_t>(rng() % 3);
    s.kv2 = static_cast<std::int64_t>(rng() % 3);
    if (s.k == PNodeSpec::K::SameAs) {
      if (k > 1) s.other = static_cast<int>(rng() % static_cast<unsigned>(k));
      if (s.other == i || s.other < 0) s.k = PNodeSpec::K::None;
    }
  }
  // A tree first (every node below the root read by an earlier one), then extra edges
  // to later nodes, which make the pattern a DAG with shared nodes.
  for (int j = 1; j < k; ++j) {
    std::vector<std::pair<int, std::size_t>> free;
    for (int i = 0; i < j; ++i)
      for (std::size_t a = 0; a < nodes[static_cast<std::size_t>(i)].args.size(); ++a)
        if (nodes[static_cast<std::size_t>(i)].args[a].kind != PArg::Node) free.emplace_back(i, a);
    if (free.empty()) {
      nodes.resize(static_cast<std::size_t>(j));
      k = j;
      break;
    }
    auto [i, a] = free[rng() % free.size()];
    nodes[static_cast<std::size_t>(i)].args[a] = PArg{PArg::Node, "", j, 0};
  }
  for (int i = 0; i + 1 < k; ++i)
    for (PArg& a : nodes[static_cast<std::size_t>(i)].args)
      if (a.kind != PArg::Node && rng() % 7 == 0)
        a = PArg{PArg::Node, "", i + 1 + static_cast<int>(rng() % static_cast<unsigned>(k - i - 1)), 0};
  for (PNodeSpec& s : nodes)
    if (s.k == PNodeSpec::K::SameAs && s.other >= k) s.k = PNodeSpec::K::None;
  // Ports: a reference to an S node reads output 0 or 1.
  for (PNodeSpec& s : nodes)
    for (PArg& a : s.args)
      if (a.kind == PArg::Node) {
        const auto& ops = nodes[static_cast<std::size_t>(a.node)].ops;
        if (ops.size() == 1 && ops[0] == std::string("S")) a.port = static_cast<int>(rng() % 2);
      }
  return nodes;
}

std::string pattern_text(const std::vector<PNodeSpec>& nodes) {
  std::string text;
  for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
    const PNodeSpec& s = nodes[static_cast<std::size_t>(i)];
    text += "n" + std::to_string(i) + " = ";
    if (s.ops.empty()) text += "*";
    for (std::size_t o = 0; o < s.ops.size(); ++o) text += (o ? "|" : "") + s.ops[o];
    text += "(";
    for (std::size_t a = 0; a < s.args.size(); ++a) {
      const PArg& arg = s.args[a];
      text += a ? ", " : "";
      if (arg.kind == PArg::Wild) text += "_";
      if (arg.kind == PArg::Leaf) text += arg.leaf;
      if (arg.kind == PArg::Node) text += "n" + std::to_string(arg.node) + (arg.port ? ":" + std::to_string(arg.port) : "");
    }
    text += ")";
    std::string kv = std::to_string(s.kv);
    switch (s.k) {
      case PNodeSpec::K::None: break;
      case PNodeSpec::K::Eq: text += " {k = " + kv + "}"; break;
      case PNodeSpec::K::Ne: text += " {k != " + kv + "}"; break;
      case PNodeSpec::K::In: text += " {k in [" + kv + ", " + std::to_string(s.kv2) + "]}"; break;
      case PNodeSpec::K::Absent: text += " {!k}"; break;
      case PNodeSpec::K::Gt: text += " {k > " + kv + "}"; break;
      case PNodeSpec::K::SameAs: text += " {k = n" + std::to_string(s.other) + ".k}"; break;
    }
    text += "\n";
  }
  return text;
}

// An embedding as text: pattern node name -> node id, then leaf -> value (sorted).
using Key = std::string;

std::set<Key> vm_embeddings(const RuleSet& rs, const Graph& g) {
  const match::MatchProgram& p = rs[0].compiled->match;
  std::set<Key> out;
  match::VmState st;
  for (NodeId root : g.nodes())
    match::run_program(p, g, root, st, [&](const match::Embedding& e) {
      std::map<std::string, std::string> m;
      for (std::size_t r = 0; r < e.nodes.size(); ++r) m[p.node_names[r]] = g.node(e.nodes[r]).id;
      for (std::uint32_t v : p.leaf_regs) m["$" + p.value_names[v]] = g.value_name(e.values[v]);
      Key k;
      for (const auto& [a, b] : m) k += a + "=" + b + ";";
      out.insert(k);
      return true;
    });
  return out;
}

// ---- the oracle: VF2 on the live graph (graphfuse/boost_graph.h), then an exact check of
// slots, leaves and k. The pattern is a small Boost graph with one edge per (port, slot),
// like the live graph's edges, so both are multigraphs and VF2 maps each pattern edge to a
// distinct graph edge.
struct EP {
  int port = 0;
  int slot = 0;
};
using BG = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, EP>;

bool k_ok(const PNodeSpec& s, const std::optional<std::int64_t>& k) {
  switch (s.k) {
    case PNodeSpec::K::None: case PNodeSpec::K::SameAs: return true;
    case PNodeSpec::K::Eq: return k && *k == s.kv;
    case PNodeSpec::K::Ne: return k && *k != s.kv;
    case PNodeSpec::K::In: return k && (*k == s.kv || *k == s.kv2);
    case PNodeSpec::K::Absent: return !k;
    case PNodeSpec::K::Gt: return k && *k > s.kv;
  }
  return false;
}

std::set<Key> oracle_embeddings(const std::vector<PNodeSpec>& pat, const Graph& g) {
  BG small(pat.size());
  for (std::size_t i = 0; i < pat.size(); ++i)
    for (std::size_t s = 0; s < pat[i].args.size(); ++s)
      if (pat[i].args[s].kind == PArg::Node)
        boost::add_edge(static_cast<std::size_t>(pat[i].args[s].node), i,
                        EP{pat[i].args[s].port, static_cast<int>(s)}, small);
  auto vertex_eq = [&](std::size_t p, NodeId b) {
    if (!g.alive(b)) return false;
    const PNodeSpec& s = pat[p];
    const Node& n = g.node(b);
    const std::string op(n.op.name());
    bool op_ok = s.ops.empty() || std::find(s.ops.begin(), s.ops.end(), op) != s.ops.end();
    const auto* k = n.attrs.get_if<std::int64_t>("k");
    return op_ok && s.arity == static_cast<int>(n.inputs.size()) && k_ok(s, k ? std::optional(*k) : std::nullopt);
  };
  auto edge_eq = [&](BG::edge_descriptor pe, GraphEdge be) {
    if (small[pe].port != static_cast<int>(be.port)) return false;
    // A commutative consumer's slots are free (every slot order is tried below).
    return pat[boost::target(pe, small)].commutative() || small[pe].slot == static_cast<int>(be.slot);
  };
  std::set<Key> out;
  auto found = [&](auto&& f, auto&&) {
    std::vector<NodeId> m(pat.size());
    for (std::size_t i = 0; i < pat.size(); ++i) m[i] = static_cast<NodeId>(get(f, i));
    for (std::size_t i = 0; i < pat.size(); ++i)
      if (pat[i].k == PNodeSpec::K::SameAs) {
        const auto* a = g.node(m[i]).attrs.get_if<std::int64_t>("k");
        const auto* b = g.node(m[static_cast<std::size_t>(pat[i].other)]).attrs.get_if<std::int64_t>("k");
        if (!a || !b || *a != *b) return true;
      }
    // Every slot assignment (all orders for commutative nodes), leaves consistent.
    std::vector<std::vector<int>> perm(pat.size());
    std::function<void(std::size_t)> assign = [&](std::size_t i) {
      if (i == pat.size()) {
        std::map<std::string, std::string> key;
        for (std::size_t j = 0; j < pat.size(); ++j) key["n" + std::to_string(j)] = g.node(m[j]).id;
        for (std::size_t j = 0; j < pat.size(); ++j)
          for (std::size_t a = 0; a < pat[j].args.size(); ++a) {
            const PArg& arg = pat[j].args[a];
            ValueRef v = g.node(m[j]).inputs[static_cast<std::size_t>(perm[j][a])];
            if (arg.kind == PArg::Node && v != ValueRef{m[static_cast<std::size_t>(arg.node)], static_cast<std::uint32_t>(arg.port)}) return;
            if (arg.kind != PArg::Leaf) continue;
            auto [it, fresh] = key.emplace("$" + arg.leaf, g.value_name(v));
            if (!fresh && it->second != g.value_name(v)) return;
          }
        Key k;
        for (const auto& [a, b] : key) k += a + "=" + b + ";";
        out.insert(k);
        return;
      }
      std::vector<int> p(pat[i].args.size());
      for (std::size_t s = 0; s < p.size(); ++s) p[s] = static_cast<int>(s);
      do {
        perm[i] = p;
        assign(i + 1);
      } while (pat[i].commutative() && std::next_permutation(p.begin(), p.end()));
    };
    assign(0);
    return true;
  };
  boost::vf2_subgraph_mono(small, g, found, boost::vertex_order_by_mult(small),
                           boost::edges_equivalent(edge_eq).vertices_equivalent(vertex_eq));
  return out;
}

// The soak (`cmake --build build --target vf2_soak`) raises the count and may vary the seed.
int case_count() {
  if (const char* s = std::getenv("GRAPHFUSE_VF2_CASES")) return std::max(1, std::atoi(s));
  return 1000;
}
std::uint64_t seed() {
  if (const char* s = std::getenv("GRAPHFUSE_VF2_SEED")) return std::strtoull(s, nullptr, 10);
  return 20240611;
}

}  // namespace

TEST(Vf2Differential, MatcherEqualsVf2OnRandomPairs) {
  const int cases = case_count();
  std::mt19937_64 rng(seed());
  auto t0 = std::chrono::steady_clock::now();
  std::size_t total = 0, nonempty = 0;
  for (int c = 0; c < cases; ++c) {
    Graph g = random_graph(rng);
    std::vector<PNodeSpec> pat = random_pattern(rng);
    std::string text = pattern_text(pat);
    std::string yaml = "ops:\n  A: {commutative: true}\n  M: {commutative: true}\nrules:\n  - name: r\n    pattern: |\n";
    for (std::size_t s = 0, e; s < text.size(); s = e + 1) {
      e = text.find('\n', s);
      yaml += "      " + text.substr(s, e - s) + "\n";
    }
    yaml += "    rewrite: X()\n";
    RuleSet rs = load_rules_from_string(yaml, "case.yaml");
    std::set<Key> vm = vm_embeddings(rs, g), vf2 = oracle_embeddings(pat, g);
    ASSERT_EQ(vm, vf2) << "case " << c << " of seed " << seed() << " (" << g.size() << " nodes), pattern:\n" << text;
    total += vm.size();
    nonempty += !vm.empty();
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ vf2      ] " << cases << " random (graph, pattern) pairs, " << total << " embeddings ("
            << nonempty << " pairs with at least one), identical sets, " << s << " s\n";
  RecordProperty("cases", cases);
  RecordProperty("seconds", std::to_string(s));
  EXPECT_GT(nonempty, static_cast<std::size_t>(cases) / 4);  // the alphabet keeps matches frequent
}
