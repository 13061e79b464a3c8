// `graphfuse test`: run the rule-file regression tests in files and folders.
#include <iostream>

#include "cli/commands.h"
#include "cli/fold_step.h"
#include "graphfuse/rule_tests.h"

namespace graphfuse::cli {

namespace {
struct TestOptions {
  std::vector<std::string> paths;
  RuleTestOptions run;
  bool no_verify = false;
};
}  // namespace

void register_test(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<TestOptions>();
  CLI::App* cmd = app.add_subcommand("test", "Run rule-file test cases (input + rules -> expected graph)");
  cmd->add_option("PATHS", opt->paths, "Rule files, test files or folders")->required();
  cmd->add_option("--filter", opt->run.filter, "Run only cases whose name contains this");
  cmd->add_flag("--update", opt->run.update,
                "Rewrite `expect` of failing cases with the actual graph (passing cases untouched)");
  cmd->add_flag("--no-verify", opt->no_verify, "Check structure only, also for cases with `verify: true`");
  cmd->callback([opt, &run] {
    run = [opt] {
      // Cases with `verify: true` run both graphs on the kernels (see cli/fold_step.h).
      if (!opt->no_verify) opt->run.verifier = rule_test_verifier();
      RuleTestCounts c = run_rule_tests(opt->paths, opt->run, std::cout);
      return c.failed == 0 ? 0 : 1;
    };
  });
}

}  // namespace graphfuse::cli
