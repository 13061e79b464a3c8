// `graphfuse explain`: why a rule does or does not rewrite one node.
#include <iostream>

#include "cli/commands.h"
#include "cli/target_option.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse::cli {

namespace {
struct ExplainOptions {
  std::vector<std::string> rules;
  std::string input;
  std::string rule;
  std::string node;
  RewriteOptions rewrite;
  std::string target;  ///< --target (cli/target_option.h)
};
}  // namespace

void register_explain(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<ExplainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Say why a rule does or does not rewrite a node (failing pattern step, legality, conflict)");
  cmd->add_option("-r,--rules", opt->rules, "Rule file (repeatable)")->required()->allow_extra_args(false);
  cmd->add_option("INPUT", opt->input, "Input graph (.graph, .yaml, .yml, .json, .gfb, .onnx)")->required();
  cmd->add_option("--rule", opt->rule, "Rule name")->required();
  cmd->add_option("--node", opt->node, "Id of the candidate root node, or the name of a value it produces")->required();
  cmd->add_option("--threads", opt->rewrite.threads, "Matching threads (0 = all cores)")->check(at_least(0));
  cmd->add_option("--max-rounds", opt->rewrite.max_rounds, "Bound on rewriting rounds, as for apply")
      ->check(at_least(1))
      ->capture_default_str();
  add_target_option(cmd, opt->target);
  cmd->callback([opt, &run] {
    run = [opt] {
      apply_target(opt->target, opt->rewrite, true);  // explain prints the estimates
      RuleSet rules = load_rule_files_cached(opt->rules);
      Graph g = load_graph(opt->input);
      std::cout << explain_candidate(g, rules, opt->rule, opt->node, opt->rewrite);
      return 0;
    };
  });
}

}  // namespace graphfuse::cli
