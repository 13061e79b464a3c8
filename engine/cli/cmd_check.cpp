// `graphfuse check FILE...`: parse and compile rule files without a graph.
#include <iostream>

#include "cli/commands.h"
#include "graphfuse/rules.h"
#include "match/program.h"

namespace graphfuse::cli {

namespace {

struct CheckOptions {
  std::vector<std::string> files;
  bool programs = false;
};

// Each file loads on its own (with its includes), so one broken file does not hide
// the errors of the next.
int run_check(const CheckOptions& o) {
  int failed = 0;
  for (const std::string& path : o.files) {
    try {
      RuleSet rules = load_rule_files({path});
      std::size_t disabled = rules.size() - rules.enabled().size();
      std::cout << path << ": " << rules.size() << (rules.size() == 1 ? " rule" : " rules");
      if (disabled) std::cout << " (" << disabled << " disabled)";
      std::cout << ", ok\n";
      if (!o.programs) continue;
      for (const Rule& r : rules.rules())
        std::cout << "\n" << r.label() << "\n" << match::disassemble(r.compiled->match);
    } catch (const Error& e) {
      std::cerr << e.pretty() << "\n";
      ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

void register_check(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand("check", "Parse and compile rule files (no graph needed); report errors with positions");
  cmd->add_option("FILES", opt->files, "Rule files")->required();
  cmd->add_flag("--programs", opt->programs, "Also print each rule's compiled match program");
  cmd->callback([opt, &run] { run = [opt] { return run_check(*opt); }; });
}

}  // namespace graphfuse::cli
