// The seed-corpus helper of fuzz/seed-corpus.sh (not a fuzz target): converts a graph file
// to another format, or writes a generated graph; formats by extension as load_graph/save_graph.
//   seed_convert IN OUT
//   seed_convert --gen NODES SEED OUT
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"

int main(int argc, char** argv) {
  try {
    if (argc == 5 && std::string(argv[1]) == "--gen") {
      graphfuse::GenerateOptions opt;
      opt.nodes = std::strtoull(argv[2], nullptr, 10);
      opt.seed = std::strtoull(argv[3], nullptr, 10);
      graphfuse::save_graph(graphfuse::generate_cnn_graph(opt), argv[4]);
      return 0;
    }
    if (argc != 3) {
      std::fprintf(stderr, "usage: seed_convert IN OUT | seed_convert --gen NODES SEED OUT\n");
      return 2;
    }
    graphfuse::save_graph(graphfuse::load_graph(argv[1]), argv[2]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
