// `--target`: load the profile once, wrap it in the cost model's gate.
#include "cli/target_option.h"

#include "graphfuse/cost.h"
#include "graphfuse/target.h"

namespace graphfuse::cli {

void add_target_option(CLI::App* cmd, std::string& target) {
  cmd->add_option("--target", target,
                  "Target profile (a name from targets/, or a .yaml file): rewrite only into ops the target has, "
                  "and only where the cost model says it pays");
}

void apply_target(const std::string& target, RewriteOptions& opt, bool details) {
  if (target.empty()) return;
  auto model = std::make_shared<const CostModel>(load_target(target));
  opt.gate = make_target_gate(std::move(model), true, details);
}

}  // namespace graphfuse::cli
