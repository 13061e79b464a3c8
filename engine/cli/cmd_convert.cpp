// `graphfuse convert`: a graph from one format to another (format by extension).
#include <iostream>

#include "cli/commands.h"
#include "cli/output_option.h"
#include "graphfuse/io.h"

namespace graphfuse::cli {

void register_convert(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<std::pair<std::string, std::string>>();
  auto save = std::make_shared<OnnxSaveOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert a graph between formats: .graph, .yaml/.yml, .json, .gfb, .onnx (and .dot out)");
  cmd->add_option("INPUT", opt->first, "Graph file (.graph, .yaml, .yml, .json, .gfb, .onnx)")->required();
  cmd->add_option("OUTPUT", opt->second, "Output file; format by extension (written atomically)")->required();
  add_output_options(cmd, *save);
  cmd->callback([opt, save, &run] {
    run = [opt, save] {
      Graph g = load_graph(opt->first);
      save_output(g, opt->second, *save);
      std::cout << "wrote " << opt->second << " (" << g.size() << " nodes)\n";
      return 0;
    };
  });
}

}  // namespace graphfuse::cli
