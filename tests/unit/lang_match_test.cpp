// The full pattern language on the match side: commutative ops, constants, value
// constraints, where-lists, variadics, multi-output and multi-root patterns, natives.
#include <gtest/gtest.h>

#include <set>

#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "match/program.h"
#include "match/vm.h"

using namespace graphfuse;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

std::string indent(const std::string& s, const std::string& pad) {
  std::string out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    out += pad + s.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

// A one-rule file: an optional `ops:` section, the pattern, optional where-lines.
RuleSet compile(const std::string& pattern, const std::string& where = "", const std::string& ops = "",
                const std::string& rewrite = "Matched()") {
  std::string y;
  if (!ops.empty()) y += "ops:\n" + indent(ops, "  ");
  y += "rules:\n  - name: r\n    pattern: |\n" + indent(pattern, "      ");
  if (!where.empty()) y += "    where: |\n" + indent(where, "      ");
  y += "    rewrite: |\n" + indent(rewrite, "      ");
  return load_rules_from_string(y, "t.yaml");
}

// Distinct embeddings at `root`, each as "id,id,...|v,v,..." (node regs, then value regs).
std::set<std::string> embeddings(const RuleSet& rs, const Graph& g, const char* root) {
  const match::MatchProgram& p = rs[0].compiled->match;
  match::VmState st;
  std::set<std::string> out;
  match::run_program(p, g, *g.find(root), st, [&](const match::Embedding& e) {
    std::string s;
    for (NodeId n : e.nodes) s += g.node(n).id + ",";
    s += "|";
    for (std::uint32_t v : p.leaf_regs)
      if (e.values[v].valid()) s += g.value_name(e.values[v]) + ",";
    out.insert(s);
    return true;
  });
  return out;
}

std::size_t count(const RuleSet& rs, const Graph& g, const char* root) { return embeddings(rs, g, root).size(); }

NodeId constant(Graph& g, const std::string& id, std::vector<float> values, std::vector<std::int64_t> shape = {}) {
  Attributes a;
  a.set("value", Tensor::from_floats(std::move(shape), values));
  return g.add_node(id, op("Const"), {}, a);
}

const char* kCommutative = "Add: {commutative: true}\nMul: {commutative: true}";

}  // namespace

TEST(LangMatch, CommutativeOperandOrders) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId r = g.add_node("r", op("Relu"), {{x, 0}});
  g.add_node("a1", op("Add"), {{x, 0}, {r, 0}});
  g.add_node("a2", op("Add"), {{r, 0}, {x, 0}});
  RuleSet plain = compile("Add(y, Relu(z))");
  EXPECT_EQ(count(plain, g, "a1"), 1u);
  EXPECT_EQ(count(plain, g, "a2"), 0u);  // order matters without a declaration
  RuleSet comm = compile("Add(y, Relu(z))", "", kCommutative);
  EXPECT_EQ(count(comm, g, "a1"), 1u);
  EXPECT_EQ(count(comm, g, "a2"), 1u);
  // One fork with two branches, not two copies of the rule.
  const match::MatchProgram& p = comm[0].compiled->match;
  ASSERT_EQ(p.forks.size(), 1u);
  EXPECT_EQ(p.forks[0].size(), 2u);
  // Identical operands are not permuted among themselves.
  EXPECT_TRUE(compile("Mul(y, y)", "", kCommutative)[0].compiled->match.forks.empty());
  // Leaves in both orders are two embeddings (the bindings differ).
  EXPECT_EQ(count(compile("Add(p, q)", "", kCommutative), g, "a1"), 2u);
}

TEST(LangMatch, FourCommutativeOpsFindEveryOrder) {
  // Add(Mul(a, b), Mul(Add(c, d), e)) written in every operand order in the graph.
  Graph g;
  NodeId a = g.add_input("a"), b = g.add_input("b"), c = g.add_input("c"), d = g.add_input("d"),
         e = g.add_input("e");
  int found = 0;
  for (int mask = 0; mask < 16; ++mask) {
    std::string k = std::to_string(mask);
    auto pair = [&](int bit, ValueRef l, ValueRef r) {
      return (mask >> bit) & 1 ? std::vector<ValueRef>{r, l} : std::vector<ValueRef>{l, r};
    };
    NodeId m1 = g.add_node("m1_" + k, op("Mul"), pair(0, {a, 0}, {b, 0}));
    NodeId a2 = g.add_node("a2_" + k, op("Add"), pair(1, {c, 0}, {d, 0}));
    NodeId m2 = g.add_node("m2_" + k, op("Mul"), pair(2, {a2, 0}, {e, 0}));
    g.add_node("root_" + k, op("Add"), pair(3, {m1, 0}, {m2, 0}));
  }
  RuleSet rs = compile("Add(Mul(p, q), Mul(Add(r, s), t))", "", kCommutative);
  for (int mask = 0; mask < 16; ++mask) found += count(rs, g, ("root_" + std::to_string(mask)).c_str()) > 0;
  EXPECT_EQ(found, 16);
}

TEST(LangMatch, ScalarConstantsWithTolerance) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId one = constant(g, "one", {1.0f, 1.0f, 1.0f}, {3});
  NodeId mixed = constant(g, "mixed", {1.0f, 2.0f}, {2});
  NodeId rt = constant(g, "rt", {0.70710678f});
  NodeId nodata = g.add_node("nodata", op("Const"));
  g.add_node("add1", op("Add"), {{x, 0}, {one, 0}});
  g.add_node("add2", op("Add"), {{x, 0}, {mixed, 0}});
  g.add_node("add3", op("Add"), {{x, 0}, {nodata, 0}});
  g.add_node("div", op("Div"), {{x, 0}, {rt, 0}});
  RuleSet rs = compile("Add(x, 1.0)");
  EXPECT_EQ(count(rs, g, "add1"), 1u);  // every element is 1.0
  EXPECT_EQ(count(rs, g, "add2"), 0u);
  EXPECT_EQ(count(rs, g, "add3"), 0u);  // a constant without data is not known to be 1
  EXPECT_EQ(count(compile("Add(x, 1)"), g, "add1"), 1u);  // ints compare by value
  EXPECT_EQ(count(compile("Div(x, 0.7071)"), g, "div"), 1u);  // 1e-4 relative tolerance
  EXPECT_EQ(count(compile("Div(x, 0.707)"), g, "div"), 0u);
  EXPECT_EQ(count(compile("Add(x, tensor(float32, [2], [1.0, 2.0]))"), g, "add2"), 1u);
}

TEST(LangMatch, ValueConstraints) {
  Graph g;
  NodeId x = g.add_input("x", ValueType{DType::Float32, {1, 3, 8, 8}, true, {}});
  NodeId w = constant(g, "w", std::vector<float>(27 * 4, 0.5f), {4, 3, 3, 3});
  NodeId v = g.add_input("v");
  g.add_node("c1", op("Conv"), {{x, 0}, {w, 0}});
  g.add_node("c2", op("Conv"), {{v, 0}, {v, 0}});
  EXPECT_EQ(count(compile("Conv(x, w)", "const(w)"), g, "c1"), 1u);
  EXPECT_EQ(count(compile("Conv(x, w)", "const(w)"), g, "c2"), 0u);
  EXPECT_EQ(count(compile("Conv(x, w)", "!const(x)\nrank(x) == 4\ndtype(x) == \"float32\""), g, "c1"), 1u);
  EXPECT_EQ(count(compile("Conv(x, w)", "rank(w) == 4\nshape(w) == [4, 3, 3, 3]\ndim(x, -1) == 8"), g, "c1"), 1u);
  // Unknown facts fail, negated or not.
  EXPECT_EQ(count(compile("Conv(x, w)", "rank(x) == 4"), g, "c2"), 0u);
  EXPECT_EQ(count(compile("Conv(x, w)", "rank(x) != 4"), g, "c2"), 0u);
  EXPECT_EQ(count(compile("Conv(x, w)", "value(w) == 0.5"), g, "c1"), 0u);  // not a scalar
  EXPECT_EQ(count(compile("Conv(x, w)", "len(values(w)) == 108\nuses(w) == 1"), g, "c1"), 1u);
}

TEST(LangMatch, WhereListCrossNodeAndPresence) {
  Graph g;
  NodeId x = g.add_input("x");
  Attributes s1, s2;
  s1.set("strides", std::vector<std::int64_t>{1, 1});
  s2.set("strides", std::vector<std::int64_t>{2, 2});
  s2.set("group", std::int64_t{2});
  NodeId c1 = g.add_node("c1", op("Conv"), {{x, 0}}, s1);
  NodeId c2 = g.add_node("c2", op("Conv"), {{c1, 0}}, s1);
  NodeId c3 = g.add_node("c3", op("Conv"), {{c1, 0}}, s2);
  g.add_node("r2", op("Relu"), {{c2, 0}});
  g.add_node("r3", op("Relu"), {{c3, 0}});
  RuleSet same = compile("a = Conv(x)\nb = Conv(a)\nRelu(b)", "a.strides == b.strides\n!has(b.group)");
  EXPECT_EQ(count(same, g, "r2"), 1u);
  EXPECT_EQ(count(same, g, "r3"), 0u);
  RuleSet grp = compile("a = Conv(x)\nb = Conv(a)\nRelu(b)", "has(b.group)\nb.group in [2, 4]\na.op_type == b.op_type");
  EXPECT_EQ(count(grp, g, "r3"), 1u);
  // The check runs as soon as both nodes are bound, before the leaf below them loads.
  std::string listing = match::disassemble(same[0].compiled->match);
  EXPECT_NE(listing.find("check      n2(a).strides == n1(b).strides"), std::string::npos) << listing;
  EXPECT_LT(listing.find("!has(n1(b).group)"), listing.find("load       v1 = input 0 of n2(a)")) << listing;
}

TEST(LangMatch, VariadicInputs) {
  Graph g;
  NodeId a = g.add_input("a"), b = g.add_input("b"), c = g.add_input("c");
  NodeId r = g.add_node("r", op("Relu"), {{a, 0}});
  g.add_node("cat1", op("Concat"), {{r, 0}, {b, 0}, {c, 0}});
  g.add_node("cat2", op("Concat"), {{r, 0}});
  RuleSet rs = compile("Concat(Relu(x), xs...)", "len(xs) >= 1");
  EXPECT_EQ(count(rs, g, "cat1"), 1u);
  EXPECT_EQ(count(rs, g, "cat2"), 0u);
  EXPECT_EQ(count(compile("Concat(Relu(x), _...)"), g, "cat2"), 1u);  // zero or more
  EXPECT_EQ(count(compile("Concat(xs...)"), g, "cat1"), 1u);
}

// `Op(...)...`: every remaining input from its own Op node with the attributes asked; the
// element lists in input order; elements distinct; len() and the rewrite see the lists.
TEST(LangMatch, EachRemainingInput) {
  Graph g;
  NodeId a = g.add_input("a"), b = g.add_input("b"), c = g.add_input("c");
  Attributes p10, p01;
  p10.set("perm", std::vector<std::int64_t>{1, 0});
  p01.set("perm", std::vector<std::int64_t>{0, 1});
  NodeId t = g.add_node("t", op("Transpose"), {{a, 0}}, p10);
  NodeId u = g.add_node("u", op("Transpose"), {{b, 0}}, p10);
  NodeId v = g.add_node("v", op("Transpose"), {{c, 0}}, p10);
  NodeId w = g.add_node("w", op("Transpose"), {{c, 0}}, p01);
  g.add_node("all", op("Concat"), {{t, 0}, {u, 0}, {v, 0}});
  g.add_node("one", op("Concat"), {{t, 0}});
  g.add_node("other_perm", op("Concat"), {{t, 0}, {u, 0}, {w, 0}});
  g.add_node("twice", op("Concat"), {{t, 0}, {u, 0}, {u, 0}});
  g.add_node("first_again", op("Concat"), {{t, 0}, {t, 0}});
  g.add_node("not_transposed", op("Concat"), {{t, 0}, {b, 0}});
  const char* pat = "t1 = Transpose(x1)\nConcat(t1, Transpose(xs) {perm = t1.perm}...)";
  RuleSet rs = compile(pat, "len(xs) == 2");
  EXPECT_EQ(count(rs, g, "all"), 1u);
  EXPECT_EQ(count(rs, g, "one"), 0u);  // len(xs) == 0
  RuleSet any = compile(pat);
  EXPECT_EQ(count(any, g, "one"), 1u);  // zero elements
  EXPECT_EQ(count(any, g, "other_perm"), 0u);
  EXPECT_EQ(count(any, g, "twice"), 0u);        // elements are distinct nodes
  EXPECT_EQ(count(any, g, "first_again"), 0u);  // and distinct from the pattern's nodes
  EXPECT_EQ(count(any, g, "not_transposed"), 0u);
  EXPECT_EQ(count(compile("Concat(Transpose(xs) {perm = [0, 1]}...)"), g, "other_perm"), 0u);
  EXPECT_EQ(count(compile("Concat(Transpose(xs) {perm = [1, 0]}...)"), g, "all"), 1u);
  EXPECT_EQ(count(compile("Concat(*(_)...)"), g, "all"), 1u);
  // The program checks the elements after every pattern node is bound.
  std::string listing = match::disassemble(any[0].compiled->match);
  EXPECT_NE(listing.find("each       inputs 1.. of n0 from nodes in {Transpose} with 1 inputs, perm == n1(t1).perm"),
            std::string::npos)
      << listing;

  // Rewritten: the elements go, the list keeps the input order.
  RuleSet rw = compile(pat, "", "", "y = Concat(x1, xs...) {axis = len(xs)}\nTranspose(y) {...t1}");
  Graph h;
  NodeId ha = h.add_input("a"), hb = h.add_input("b"), hc = h.add_input("c");
  NodeId ht = h.add_node("t", op("Transpose"), {{ha, 0}}, p10);
  NodeId hu = h.add_node("u", op("Transpose"), {{hb, 0}}, p10);
  NodeId hv = h.add_node("v", op("Transpose"), {{hc, 0}}, p10);
  NodeId cat = h.add_node("cat", op("Concat"), {{ht, 0}, {hu, 0}, {hv, 0}});
  h.add_output({cat, 0});
  RewriteReport rep = rewrite_graph(h, rw);
  EXPECT_TRUE(rep.converged);
  EXPECT_EQ(h.size(), 5u);  // 3 inputs, the new Concat, the Transpose taking over `cat`
  const Node& top = h.node(*h.find("cat"));
  EXPECT_EQ(top.op, op("Transpose"));
  const Node& y = h.node(top.inputs[0].node);
  ASSERT_EQ(y.inputs.size(), 3u);
  EXPECT_EQ(y.inputs[0].node, ha);
  EXPECT_EQ(y.inputs[1].node, hb);
  EXPECT_EQ(y.inputs[2].node, hc);
  EXPECT_EQ(*y.attrs.get_if<std::int64_t>("axis"), 2);
}

TEST(LangMatch, MultiOutputBindings) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId s = g.add_node("s", op("Split"), {{x, 0}}, {}, 2);
  NodeId s3 = g.add_node("s3", op("Split"), {{x, 0}}, {}, 3);
  g.add_node("m", op("Mul"), {{s, 0}, {s, 1}});
  g.add_node("m2", op("Mul"), {{s, 1}, {s, 0}});
  g.add_node("m3", op("Mul"), {{s3, 0}, {s3, 1}});
  RuleSet rs = compile("a, b = Split(x)\nMul(a, b)");
  EXPECT_EQ(count(rs, g, "m"), 1u);
  EXPECT_EQ(count(rs, g, "m2"), 0u);
  EXPECT_EQ(count(rs, g, "m3"), 0u);  // exactly two outputs
  EXPECT_EQ(count(compile("sp = Split(x)\nMul(sp:1, sp)"), g, "m2"), 1u);
}

TEST(LangMatch, MultiRootThroughASharedLeaf) {
  Graph g;
  NodeId x = g.add_input("x"), y = g.add_input("y");
  Attributes a1, a2;
  a1.set("k", std::int64_t{1});
  a2.set("k", std::int64_t{2});
  NodeId w1 = g.add_node("w1", op("Const")), w2 = g.add_node("w2", op("Const")), w3 = g.add_node("w3", op("Const"));
  g.add_node("c1", op("Conv"), {{x, 0}, {w1, 0}}, a1);
  g.add_node("c2", op("Conv"), {{x, 0}, {w2, 0}}, a1);
  g.add_node("c3", op("Conv"), {{x, 0}, {w3, 0}}, a2);
  g.add_node("c4", op("Conv"), {{y, 0}, {w3, 0}}, a1);
  RuleSet rs = compile("p = Conv(x, w)\nq = Conv(x, v) {k = p.k}\np, q", "", "", "A(x), B(x)");
  EXPECT_EQ(embeddings(rs, g, "c1"), (std::set<std::string>{"c1,c2,|x,w1,w2,"}));
  EXPECT_EQ(embeddings(rs, g, "c2"), (std::set<std::string>{"c2,c1,|x,w2,w1,"}));
  EXPECT_TRUE(embeddings(rs, g, "c3").empty());
  EXPECT_TRUE(embeddings(rs, g, "c4").empty());
  const match::MatchProgram& p = rs[0].compiled->match;
  EXPECT_EQ(p.roots, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(rs[0].depth, 1);  // the shared leaf's producer is one step above the first root
}

TEST(LangMatch, NativePredicatesAndFunctions) {
  register_predicate("lang_test_even_k", [](const Graph& g, std::span<const NativeArg> args) {
    const auto* k = g.node(args[0].node).attrs.get_if<std::int64_t>("k");
    return k && *k % 2 == 0;
  });
  register_function("lang_test_twice", [](const Graph&, std::span<const NativeArg> args) -> std::optional<AttrValue> {
    if (!args[0].literal) return std::nullopt;
    const auto* k = std::get_if<std::int64_t>(&*args[0].literal);
    if (!k) return std::nullopt;
    return *k * 2;
  });
  Graph g;
  NodeId x = g.add_input("x");
  for (std::int64_t k : {1, 2}) {
    Attributes a;
    a.set("k", k);
    g.add_node("n" + std::to_string(k), op("Op"), {{x, 0}}, a);
  }
  RuleSet rs = compile("n = Op(x)", "lang_test_even_k(n)");
  EXPECT_EQ(count(rs, g, "n1"), 0u);
  EXPECT_EQ(count(rs, g, "n2"), 1u);
  EXPECT_EQ(count(compile("n = Op(x)", "lang_test_twice(n.k) == 4"), g, "n2"), 1u);
  EXPECT_EQ(count(compile("n = Op(x)", "lang_test_twice(n.k) == 4"), g, "n1"), 0u);
}

TEST(LangMatch, ExpressionsAndThreeValuedLogic) {
  Graph g;
  NodeId x = g.add_input("x", ValueType{DType::Float32, {1, 3, 8, 8}, true, {}});
  NodeId w = constant(g, "w", std::vector<float>(27 * 6, 0.5f), {6, 3, 3, 3});
  NodeId v = g.add_input("v");  // no known type
  g.add_node("c1", op("Conv"), {{x, 0}, {w, 0}});
  g.add_node("c2", op("Conv"), {{v, 0}, {w, 0}});
  auto n = [&](const char* where, const char* root) { return count(compile("Conv(x, w)", where), g, root); };
  EXPECT_EQ(n("dim(w, 0) == 2 * dim(x, 1)", "c1"), 1u);
  EXPECT_EQ(n("dim(w, 0) / 4 == 1 && dim(w, 0) % 4 == 2 && -dim(x, 1) == -3", "c1"), 1u);
  EXPECT_EQ(n("shape(x) * 2 == [2, 6, 16, 16] && shape(w) - shape(x) == [5, 0, -5, -5]", "c1"), 1u);
  EXPECT_EQ(n("(dim(x, 2) + 1) * 2 == 18", "c1"), 1u);
  // Unknown is not false: `true || unknown` holds, `false || unknown`, `!unknown` and
  // `unknown && true` do not.
  EXPECT_EQ(n("const(w) || rank(x) == 4", "c2"), 1u);
  EXPECT_EQ(n("const(x) || rank(x) == 4", "c2"), 0u);
  EXPECT_EQ(n("!(rank(x) == 4)", "c2"), 0u);
  EXPECT_EQ(n("!(rank(x) == 4 || const(x))", "c2"), 0u);
  EXPECT_EQ(n("rank(x) == 4 && const(w)", "c2"), 0u);
  EXPECT_EQ(n("!(const(x) && rank(x) == 4)", "c2"), 1u);  // false && unknown is false
  // Values that cannot be computed are unknown.
  EXPECT_EQ(n("dim(x, 1) / 0 == 0", "c1"), 0u);
  EXPECT_EQ(n("!(dim(x, 1) / 0 == 0)", "c1"), 0u);
  EXPECT_EQ(n("shape(x) + [1, 2] == [2, 5]", "c1"), 0u);  // lengths differ
}
