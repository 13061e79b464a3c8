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
  std::string fanout;  // a FanoutForm name, or empty for the CNN-like graph
  std::string output;
};
}  // namespace

void register_gen(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<GenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gen", "Generate a seeded CNN-like graph (fusible chains, residuals, multi-consumer convs), or a fan-out graph");
  cmd->add_option("-n,--nodes", opt->gen.nodes, "Approximate node count")->default_val(1000);
  cmd->add_option("--seed", opt->gen.seed, "Random seed")->default_val(1);
  CLI::Option* shape = cmd->add_option("--shape", opt->gen.shape, "cnn (ResNet-like blocks) or wide (8-16 branches of fusible chains per block)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, GraphShape>{{"cnn", GraphShape::Cnn}, {"wide", GraphShape::Wide}}))
      ->default_str("cnn");
  cmd->add_option("--fanout", opt->fanout,
                  "A fan-out graph instead: chains (Mul/Add/Xor chains over shared inputs and scalar "
                  "constants), weights (MatMul/Add over one shared weight and bias) or shapes "
                  "(Reshape pairs over two shared shape constants)")
      ->check(CLI::IsMember({"chains", "weights", "shapes"}))
      ->excludes(shape);
  cmd->add_option("-o,--output", opt->output, "Output graph file")->required();
  cmd->callback([opt, &run] {
    run = [opt] {
      Graph g = opt->fanout.empty()
                    ? generate_cnn_graph(opt->gen)
                    : generate_fanout_graph(FanoutOptions{opt->gen.nodes, *fanout_form(opt->fanout), 1000});
      save_graph(g, opt->output);
      std::cout << "wrote " << opt->output << " (" << g.size() << " nodes)\n";
      return 0;
    };
  });
}

}  // namespace graphfuse::cli
