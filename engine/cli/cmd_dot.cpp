// `graphfuse dot`: write a graph as Graphviz DOT.
#include <iostream>

#include "cli/commands.h"
#include "graphfuse/io.h"

namespace graphfuse::cli {

namespace {
struct DotOptions {
  std::string input;
  std::string output;
};
}  // namespace

void register_dot(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<DotOptions>();
  CLI::App* cmd = app.add_subcommand("dot", "Write a graph as Graphviz DOT");
  cmd->add_option("INPUT", opt->input, "Graph file (.graph, .yaml, .json, .onnx)")->required();
  cmd->add_option("-o,--output", opt->output, "Output .dot file")->required();
  cmd->callback([opt, &run] {
    run = [opt] {
      Graph g = load_graph(opt->input);
      write_file_atomic(opt->output, write_graph_dot(g));
      std::cout << "wrote " << opt->output << " (" << g.size() << " nodes)\n";
      return 0;
    };
  });
}

}  // namespace graphfuse::cli
