// `graphfuse gen`: write a seeded synthetic CNN-like graph of N nodes.
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "graphfuse/generate.h"
#include "graphfuse/io.h"

namespace graphfuse::cli {

namespace {
struct GenOptions {
  GenerateOptions gen;
  std::string output;
};
}  // namespace

void register_gen(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<GenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gen", "Generate a seeded CNN-like graph (fusible chains, residuals, multi-consumer convs)");
  cmd->add_option("-n,--nodes", opt->gen.nodes, "Approximate node count")->default_val(1000);
  cmd->add_option("--seed", opt->gen.seed, "Random seed")->default_val(1);
  cmd->add_option("--shape", opt->gen.shape, "cnn (ResNet-like blocks) or wide (8-16 branches of fusible chains per block)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, GraphShape>{{"cnn", GraphShape::Cnn}, {"wide", GraphShape::Wide}}))
      ->default_str("cnn");
  cmd->add_option("-o,--output", opt->output, "Output graph file")->required();
  cmd->callback([opt, &run] {
    run = [opt] {
      Graph g = generate_cnn_graph(opt->gen);
      save_graph(g, opt->output);
      std::cout << "wrote " << opt->output << " (" << g.size() << " nodes)\n";
      return 0;
    };
  });
}

}  // namespace graphfuse::cli
