// `graphfuse apply`: load rules and a graph, rewrite to a fixed point, save atomically.
#include <chrono>
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse::cli {

namespace {
struct ApplyOptions {
  std::vector<std::string> rules;
  std::string input;
  std::string output;
  RewriteOptions rewrite;
  bool quiet = false;
};

using Clock = std::chrono::steady_clock;
std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int run_apply(const ApplyOptions& o) {
  auto t0 = Clock::now();
  RuleSet rules = load_rule_files(o.rules);
  Graph g = load_graph(o.input);
  double load_ms = ms_since(t0);
  auto t1 = Clock::now();
  // On failure rewrite_graph throws and nothing is written: OUTPUT stays untouched.
  RewriteReport report = rewrite_graph(g, rules, o.rewrite);
  double rewrite_ms = ms_since(t1);
  auto t2 = Clock::now();
  save_graph(g, o.output);
  double save_ms = ms_since(t2);
  if (o.quiet) return 0;
  std::size_t total = 0;
  for (const RuleStats& s : report.rules) {
    total += s.applied;
    std::cout << s.rule << ": " << plural(s.applied, "rewrite") << "\n";
  }
  std::cout << "nodes: " << report.nodes_before << " -> " << report.nodes_after << " ("
            << plural(total, "rewrite") << " in " << plural(report.rounds, "round") << ")\n";
  std::cout << std::fixed << std::setprecision(2) << "time: load " << load_ms << " ms, rewrite "
            << rewrite_ms << " ms, save " << save_ms << " ms\n";
  std::cout << "wrote " << o.output << "\n";
  return 0;
}
}  // namespace

void register_apply(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<ApplyOptions>();
  CLI::App* cmd = app.add_subcommand("apply", "Apply rule files to a graph until nothing matches");
  cmd->add_option("-r,--rules", opt->rules, "Rule file (repeatable)")->required()->allow_extra_args(false);
  cmd->add_option("INPUT", opt->input, "Input graph (.graph, .yaml, .json, .onnx)")->required();
  cmd->add_option("-o,--output", opt->output, "Output graph; format by extension")->required();
  cmd->add_option("--threads", opt->rewrite.threads, "Matching threads (0 = all cores)");
  cmd->add_option("--max-rounds", opt->rewrite.max_rounds, "Stop after this many rounds");
  cmd->add_flag("-q,--quiet", opt->quiet, "Print nothing on success");
  cmd->callback([opt, &run] { run = [opt] { return run_apply(*opt); }; });
}

}  // namespace graphfuse::cli
