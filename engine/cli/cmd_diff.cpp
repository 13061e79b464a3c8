// `graphfuse diff A B`: structural comparison of two graphs (the rule tests' comparison):
// exit 0 when equal, 1 when they differ, 2 when a file cannot be read (as diff(1) does).
#include <iostream>

#include "cli/commands.h"
#include "graphfuse/compare.h"
#include "graphfuse/io.h"

namespace graphfuse::cli {

namespace {
struct DiffOptions {
  std::string a, b;
  bool quiet = false;
};

int run_diff(const DiffOptions& o) {
  Graph a, b;
  try {
    a = load_graph(o.a);
    b = load_graph(o.b);
  } catch (const Error& e) {
    std::cerr << e.pretty() << "\n";
    return 2;
  }
  GraphComparison c = compare_graphs(a, b);
  if (c.equal()) {
    if (!o.quiet) std::cout << "graphs are equal (" << a.size() << " nodes)\n";
    return 0;
  }
  if (!o.quiet) {
    std::cout << "--- " << o.a << "\n+++ " << o.b << "\n" << c.render();
    std::cout << c.differences.size() << " difference" << (c.differences.size() == 1 ? "" : "s") << " (" << a.size()
              << " vs " << b.size() << " nodes)\n";
  }
  return 1;
}
}  // namespace

void register_diff(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<DiffOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Compare two graphs structurally (ops, attributes, input order, outputs, ids); exit 0 equal, 1 differ, 2 error");
  cmd->add_option("A", opt->a, "First (expected) graph, any format")->required();
  cmd->add_option("B", opt->b, "Second (actual) graph, any format")->required();
  cmd->add_flag("-q,--quiet", opt->quiet, "Print nothing; the exit code says it");
  cmd->callback([opt, &run] { run = [opt] { return run_diff(*opt); }; });
}

}  // namespace graphfuse::cli
