// `graphfuse info`: node count, inputs/outputs and an op-type histogram.
#include <algorithm>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "graphfuse/io.h"

namespace graphfuse::cli {

namespace {
struct InfoOptions {
  std::string input;
};

int run_info(const InfoOptions& o) {
  Graph g = load_graph(o.input);
  std::map<std::string, std::size_t> histogram;
  g.for_each_node([&](NodeId n) { ++histogram[std::string(g.node(n).op.name())]; });
  std::vector<std::pair<std::string, std::size_t>> rows(histogram.begin(), histogram.end());
  // Most frequent first; ties by name so the output is deterministic.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::cout << o.input << ": " << g.size() << " nodes, " << g.inputs().size() << " inputs, "
            << g.outputs().size() << " outputs, " << rows.size() << " op types\n";
  std::size_t width = 0;
  for (const auto& [op, _] : rows) width = std::max(width, op.size());
  for (const auto& [op, count] : rows)
    std::cout << "  " << op << std::string(width - op.size() + 2, ' ') << count << "\n";
  return 0;
}
}  // namespace

void register_info(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Print node count and an op-type histogram");
  cmd->add_option("INPUT", opt->input, "Graph file (.graph, .yaml, .yml, .json, .gfb, .onnx)")->required();
  cmd->callback([opt, &run] { run = [opt] { return run_info(*opt); }; });
}

}  // namespace graphfuse::cli
