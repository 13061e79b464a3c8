// libFuzzer target: `apply` end to end on a fixed rule set. The input is a graph in any
// format (chosen by content: "GFB1" -> .gfb, '{' or '[' -> JSON, else .graph text, and YAML
// when the text reader refuses it); the rules are rules/seed.yaml and the rules/tf and
// rules/onnx libraries, loaded once. After rewriting (bounded: 20 rounds, 4x growth, no
// exception on non-convergence) the graph must validate (no cycle, no dangling edge), keep
// every graph output, and pass the save/load/save checks of fuzz_common.h. The same
// rewrite on two threads, its rounds applied in groups side by side wherever the parallel
// apply phase may take them (RewriteOptions::parallel_apply_from = 0, where real graphs
// need 4096 matches), must give the same bytes, the same counts (testing/report_counts.h)
// or the same error.
#include <filesystem>

#include "fuzz_common.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "testing/report_counts.h"

#ifndef GRAPHFUSE_SOURCE_DIR
#error "GRAPHFUSE_SOURCE_DIR must name the source tree (for rules/)"
#endif

namespace {

const graphfuse::RuleSet& rules() {
  static const graphfuse::RuleSet set = [] {
    std::string src = GRAPHFUSE_SOURCE_DIR;
    if (const char* d = std::getenv("GRAPHFUSE_SOURCE_DIR")) src = d;
    return graphfuse::load_rule_files({src + "/rules/seed.yaml", src + "/rules/tf", src + "/rules/onnx"});
  }();
  return set;
}

graphfuse::Graph parse_any(std::string_view s) {
  if (s.substr(0, 4) == "GFB1") return graphfuse::parse_graph_binary(s, "<fuzz>.gfb");
  std::size_t i = s.find_first_not_of(" \t\r\n");
  if (i != std::string_view::npos && (s[i] == '{' || s[i] == '[')) return graphfuse::parse_graph_yaml(s, "<fuzz>.json");
  try {
    return graphfuse::parse_graph_text(s, "<fuzz>.graph");
  } catch (const graphfuse::Error&) {
    return graphfuse::parse_graph_yaml(s, "<fuzz>.yaml");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)rules();  // a broken rule library fails here, once, not as a finding per input
  return 0;
}

namespace {

/// The rewrite's result as bytes: the graph (.gfb) and the report's counts per rule and
/// per round, or the error.
std::string outcome(graphfuse::Graph& g, const graphfuse::RewriteOptions& opt, graphfuse::RewriteReport& rep) {
  try {
    rep = graphfuse::rewrite_graph(g, rules(), opt);
  } catch (const graphfuse::Error& e) {
    return std::string("error: ") + e.what();
  }
  return graphfuse::write_graph_binary(g) + "\n" + graphfuse::testing::report_counts(rep);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  graphfuse::Graph g;
  if (!fuzz::guarded("parse", [&] { g = parse_any(fuzz::bytes(data, size)); })) return 0;
  const std::vector<graphfuse::ValueRef> outputs = g.outputs();
  graphfuse::Graph grouped = g;
  graphfuse::RewriteOptions opt;
  opt.threads = 1;
  opt.max_rounds = 20;
  opt.max_nodes = 4 * g.size() + 64;
  opt.throw_on_nonconvergence = false;
  graphfuse::RewriteReport rep;
  std::string in_order;
  if (!fuzz::guarded("rewrite_graph", [&] { in_order = outcome(g, opt, rep); })) return 0;
  graphfuse::RewriteOptions par = opt;
  par.threads = 2;
  par.parallel_apply_from = 0;
  graphfuse::RewriteReport par_rep;
  std::string side_by_side;
  if (!fuzz::guarded("rewrite_graph on 2 threads", [&] { side_by_side = outcome(grouped, par, par_rep); })) return 0;
  if (side_by_side != in_order)
    fuzz::finding("2 threads, applied in groups, differ from 1 thread in order",
                  in_order.substr(0, 2000) + "\n--- 2 threads:\n" + side_by_side.substr(0, 2000));
  if (in_order.rfind("error: ", 0) == 0) return 0;
  // A rewrite keeps every graph output: same count, each still a live value (a root taken
  // over in place keeps its NodeId; an erased root's output moves to its replacement).
  if (g.outputs().size() != outputs.size())
    fuzz::finding("rewriting changed the number of graph outputs",
                  std::to_string(outputs.size()) + " -> " + std::to_string(g.outputs().size()));
  for (graphfuse::ValueRef v : g.outputs())
    if (!g.alive(v.node) || v.port >= g.node(v.node).outputs.size())
      fuzz::finding("a graph output is dangling after rewriting");
  fuzz::check_graph(g);
  return 0;
}
