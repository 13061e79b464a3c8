// Embedding graphfuse: a program that rewrites a non-ML graph, a boolean circuit, through the
// library API and links graphfuse::engine only (no ONNX, no kernels). docs/library.md walks
// through it. Usage: circuit RULES.yaml [BITS]
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "graphfuse/version.h"

namespace gf = graphfuse;

// An n-bit comparator written the naive way: per bit Not(Xor(a_i, b_i)), an And chain for
// "all equal", an Or chain negated for "both zero", a parity chain behind a double negation
// Xor-ed with "all equal", and "not (equal and both zero)" written as Not(And).
gf::Graph build_comparator(int bits) {
  gf::Graph g;
  const gf::OpType And = gf::OpType::intern("And"), Or = gf::OpType::intern("Or"),
                   Xor = gf::OpType::intern("Xor"), Not = gf::OpType::intern("Not");
  gf::ValueRef all_equal, any_set, parity;
  for (int i = 0; i < bits; ++i) {
    std::string k = std::to_string(i);
    gf::NodeId a = g.add_input("a" + k), b = g.add_input("b" + k);
    gf::NodeId x = g.add_node("xor" + k, Xor, {{a, 0}, {b, 0}});
    gf::NodeId eq = g.add_node("eq" + k, Not, {{x, 0}});
    gf::NodeId either = g.add_node("or" + k, Or, {{a, 0}, {b, 0}});
    if (i == 0) {
      all_equal = {eq, 0}, any_set = {either, 0}, parity = {x, 0};
      continue;
    }
    all_equal = {g.add_node("all" + k, And, {all_equal, {eq, 0}}), 0};
    any_set = {g.add_node("any" + k, Or, {any_set, {either, 0}}), 0};
    parity = {g.add_node("par" + k, Xor, {parity, {x, 0}}), 0};
  }
  gf::NodeId odd = g.add_node("odd", Not, {parity});
  gf::NodeId even = g.add_node("even", Not, {{odd, 0}});
  // (A double negation right at a graph output goes too: the surviving gate takes over the
  // output's name. This one feeds another gate.)
  gf::NodeId flag = g.add_node("even_xor_equal", Xor, {{even, 0}, all_equal});
  gf::NodeId zero = g.add_node("both_zero", Not, {any_set});
  gf::NodeId both = g.add_node("equal_and_zero", And, {all_equal, {zero, 0}});
  gf::NodeId nand = g.add_node("not_equal_and_zero", Not, {{both, 0}});
  g.add_output(all_equal);
  g.add_output({flag, 0});
  g.add_output({nand, 0});
  g.validate();
  return g;
}

void print_report(const gf::RewriteReport& r) {
  for (const gf::RuleStats& s : r.rules)
    std::cout << "  " << s.rule << ": " << s.applied << " rewrites (" << s.candidates << " candidates)\n";
  std::cout << "  nodes " << r.nodes_before << " -> " << r.nodes_after << " in " << r.rounds << " rounds, "
            << r.stop_reason << "\n";
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " RULES.yaml [BITS]\n";
    return 2;
  }
  const int bits = argc > 2 ? std::atoi(argv[2]) : 4;
  std::cout << "graphfuse " << gf::kVersion << "\n";
  try {
    // 1. Rules from a file, compiled once; a RuleSet is immutable and shareable.
    gf::RuleSet rules = gf::load_rule_files({argv[1]});
    gf::Graph g = build_comparator(bits);
    std::cout << "comparator, " << bits << " bits: " << g.size() << " nodes\n";

    // 2. Rewrite to a fixed point. Any thread count gives the same graph.
    gf::RewriteOptions options;
    options.threads = 2;
    gf::RewriteReport report = gf::rewrite_graph(g, rules, options);
    std::cout << "with " << argv[1] << ":\n";
    print_report(report);

    // 3. More rules from a string: drop double negations.
    gf::RuleSet extra = gf::load_rules_from_string(R"(
ops:
  Not: {inputs: 1}
rules:
  # Not(Not(x)) -> x
  - name: double_not
    pattern: |
      inner = Not(x)
      Not(inner)
    rewrite: x
)", "<double_not>");
    report = gf::rewrite_graph(g, extra, options);
    std::cout << "with <double_not>:\n";
    print_report(report);
    std::cout << gf::write_graph_text(g).substr(0, 400) << "...\n";

    // 4. Errors carry file:line:column; pretty() adds the source line and a caret.
    try {
      gf::load_rules_from_string("rules:\n  - name: broken\n    pattern: Not(\n    rewrite: x\n", "<broken>");
    } catch (const gf::Error& e) {
      std::cout << "a broken rule is reported as: " << e.what() << "\n";
    }
    return 0;
  } catch (const gf::Error& e) {
    std::cerr << e.pretty() << "\n";
    return 1;
  }
}
