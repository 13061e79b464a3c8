// `graphfuse dot`: write a graph as Graphviz DOT, with attributes, shapes and the rules that
// made nodes on request.
#include <iostream>

#include "cli/commands.h"
#include "graphfuse/io.h"

namespace graphfuse::cli {

namespace {
struct DotCommandOptions {
  std::string input;
  std::string output;
  DotOptions dot;
  bool no_rules = false;
};
}  // namespace

void register_dot(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<DotCommandOptions>();
  CLI::App* cmd = app.add_subcommand("dot", "Write a graph as Graphviz DOT (fused nodes coloured by the rule that made them)");
  cmd->add_option("INPUT", opt->input, "Graph file (.graph, .yaml, .json, .gfb, .onnx)")->required();
  cmd->add_option("-o,--output", opt->output, "Output .dot file, or - for standard output")->required();
  cmd->add_flag("--attrs", opt->dot.attributes, "Show each node's attributes (long values shortened)");
  cmd->add_flag("--shapes", opt->dot.shapes, "Show each output's dtype and shape where known");
  cmd->add_flag("--no-rules", opt->no_rules, "Do not colour nodes made by rules (attribute _rule)");
  cmd->callback([opt, &run] {
    run = [opt] {
      Graph g = load_graph(opt->input);
      DotOptions dot = opt->dot;
      dot.rules = !opt->no_rules;
      std::string text = write_graph_dot(g, dot);
      if (opt->output == "-") {
        std::cout << text;
        return 0;
      }
      write_file_atomic(opt->output, text);
      std::cout << "wrote " << opt->output << " (" << g.size() << " nodes)\n";
      return 0;
    };
  });
}

}  // namespace graphfuse::cli
