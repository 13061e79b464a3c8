// The `slice(x, axis, start, end)` builtin: a constant's sub-tensor, compared whole in
// constraints and written as a new constant by rewrites; and a rule folder whose files
// include each other loads every file once.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

using namespace graphfuse;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

NodeId constant(Graph& g, const std::string& id, std::vector<float> values, std::vector<std::int64_t> shape) {
  Attributes a;
  a.set("value", Tensor::from_floats(std::move(shape), values));
  return g.add_node(id, op("Const"), {}, a);
}

const char* kHalves =
    "rules:\n"
    "  # Use(x, c) -> UseHalf(x, c[:, :h]) when the two halves of c's last axis are equal\n"
    "  - name: halves\n"
    "    pattern: |\n"
    "      Use(x, c)\n"
    "    where: |\n"
    "      slice(c, 1, 0, dim(c, 1) / 2) == slice(c, -1, dim(c, 1) / 2, dim(c, 1))\n"
    "    rewrite: |\n"
    "      h = Const() {value = slice(c, -1, 0, dim(c, 1) / 2)}\n"
    "      UseHalf(x, h)\n";

std::size_t applied(const RewriteReport& r) {
  std::size_t n = 0;
  for (const RuleStats& s : r.rules) n += s.applied;
  return n;
}

}  // namespace

TEST(LangSlice, EqualHalvesFuseAndTheHalfBecomesAConstant) {
  RuleSet rs = load_rules_from_string(kHalves, "t.yaml");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId same = constant(g, "same", {1, 2, 1, 2, 3, 4, 3, 4}, {2, 4});
  NodeId differ = constant(g, "differ", {1, 2, 1, 2, 3, 4, 3, 5}, {2, 4});
  NodeId a = g.add_node("a", op("Use"), {{x, 0}, {same, 0}});
  NodeId b = g.add_node("b", op("Use"), {{x, 0}, {differ, 0}});
  NodeId c = g.add_node("c", op("Use"), {{x, 0}, {x, 0}});  // not a constant: unknown
  g.add_output({a, 0});
  g.add_output({b, 0});
  g.add_output({c, 0});
  RewriteReport r = rewrite_graph(g, rs);
  EXPECT_EQ(applied(r), 1u);
  EXPECT_EQ(g.node(a).op.name(), "UseHalf");
  EXPECT_EQ(g.node(b).op.name(), "Use");
  EXPECT_EQ(g.node(c).op.name(), "Use");
  const Tensor* h = g.node(g.node(a).inputs[1].node).attrs.get_if<Tensor>("value");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(*h, Tensor::from_floats({2, 2}, {1, 2, 3, 4}));
}

TEST(LangSlice, EmptyOrOutOfRangeSlicesAreUnknown) {
  Graph g;
  NodeId x = g.add_input("x");
  NodeId k = constant(g, "k", {1, 2, 3, 4, 5, 6}, {2, 3});
  NodeId u = g.add_node("u", op("Use"), {{x, 0}, {k, 0}});
  g.add_output({u, 0});
  for (const char* where : {"slice(c, 0, 0, 3) == slice(c, 0, 0, 3)", "slice(c, 2, 0, 1) == slice(c, 2, 0, 1)",
                            "slice(c, 1, 2, 2) == slice(c, 1, 2, 2)", "!(slice(c, 1, 0, 4) == slice(c, 1, 0, 1))"}) {
    std::string y = std::string("rules:\n  - name: r\n    pattern: Use(x, c)\n    where: [\"") + where +
                    "\"]\n    rewrite: Used(x)\n";
    Graph h = g;
    EXPECT_EQ(applied(rewrite_graph(h, load_rules_from_string(y, "t.yaml"))), 0u) << where;
  }
  std::string ok = "rules:\n  - name: r\n    pattern: Use(x, c)\n    where: [\"slice(c, 1, -1, 3) == slice(c, 1, 2, 3)\"]\n"
                   "    rewrite: Used(x)\n";
  Graph h = g;
  EXPECT_EQ(applied(rewrite_graph(h, load_rules_from_string(ok, "t.yaml"))), 1u);
}

TEST(LangSlice, AFolderWhoseFilesIncludeEachOtherLoadsEachFileOnce) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("graphfuse_include_folder_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.yaml") << "include: [b.yaml]\nrules:\n  - name: ra\n    pattern: A(x)\n    rewrite: B(x)\n";
  std::ofstream(dir / "b.yaml") << "rules:\n  - name: rb\n    pattern: B(x)\n    rewrite: C(x)\n";
  RuleSet rs = load_rule_files({dir.string()});
  EXPECT_EQ(rs.size(), 2u);
  RuleSet again = load_rule_files({(dir / "b.yaml").string(), (dir / "a.yaml").string()});
  EXPECT_EQ(again.size(), 2u);
  fs::remove_all(dir);
}

// join(axis, a, b, c): three constants concatenated along an axis (BERT's Q, K and V weights
// packed into one); a constant of another shape or a non-constant leaves it unknown.
TEST(LangJoin, ThreeConstantsJoinAlongAnAxisAndMismatchesAreUnknown) {
  const char* rules =
      "rules:\n"
      "  - name: pack\n"
      "    pattern: |\n"
      "      Use3(x, a, b, c)\n"
      "    rewrite: |\n"
      "      w = Const() {value = join(1, a, b, c)}\n"
      "      Packed(x, w)\n";
  RuleSet rs = load_rules_from_string(rules, "t.yaml");
  Graph g;
  NodeId x = g.add_input("x");
  NodeId a = constant(g, "a", {1, 2, 3, 4}, {2, 2});
  NodeId b = constant(g, "b", {5, 6}, {2, 1});
  NodeId c = constant(g, "c", {7, 8, 9, 10, 11, 12}, {2, 3});
  NodeId wide = constant(g, "wide", {1, 2, 3}, {3, 1});  // 3 rows: does not join with 2
  NodeId u = g.add_node("u", op("Use3"), {{x, 0}, {a, 0}, {b, 0}, {c, 0}});
  NodeId v = g.add_node("v", op("Use3"), {{x, 0}, {a, 0}, {wide, 0}, {c, 0}});
  NodeId w = g.add_node("w", op("Use3"), {{x, 0}, {a, 0}, {x, 0}, {c, 0}});
  g.add_output({u, 0});
  g.add_output({v, 0});
  g.add_output({w, 0});
  RewriteReport r = rewrite_graph(g, rs);
  EXPECT_EQ(applied(r), 1u);
  EXPECT_EQ(g.node(u).op.name(), "Packed");
  EXPECT_EQ(g.node(v).op.name(), "Use3");
  EXPECT_EQ(g.node(w).op.name(), "Use3");
  const Tensor* t = g.node(g.node(u).inputs[1].node).attrs.get_if<Tensor>("value");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(*t, Tensor::from_floats({2, 6}, {1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12}));
  // Along axis 0 the blocks follow each other whole.
  Graph h;
  NodeId hx = h.add_input("x");
  NodeId p = constant(h, "p", {1, 2}, {1, 2});
  NodeId q = constant(h, "q", {3, 4, 5, 6}, {2, 2});
  NodeId hu = h.add_node("u", op("Use3"), {{hx, 0}, {p, 0}, {q, 0}, {p, 0}});
  h.add_output({hu, 0});
  std::string axis0 = rules;
  axis0.replace(axis0.find("join(1"), 6, "join(0");
  EXPECT_EQ(applied(rewrite_graph(h, load_rules_from_string(axis0, "t.yaml"))), 1u);
  const Tensor* t0 = h.node(h.node(hu).inputs[1].node).attrs.get_if<Tensor>("value");
  ASSERT_NE(t0, nullptr);
  EXPECT_EQ(*t0, Tensor::from_floats({4, 2}, {1, 2, 3, 4, 5, 6, 1, 2}));
}
