// graphfuse command line: parses the subcommand and turns errors into exit code 1.
#include <iostream>

#include "cli/commands.h"
#include "graphfuse/error_list.h"
#include "graphfuse/error.h"
#include "graphfuse/process_memory.h"
#include "graphfuse/version.h"

int main(int argc, char** argv) {
  using namespace graphfuse;
  // A command runs one job and exits: keeping freed memory for reuse costs it nothing and
  // spares it unmaps and fresh page faults between loading, rewriting and saving. Huge
  // pages only when asked for: they spare a big graph most of its page faults where the
  // memory behind them is at hand, and cost a one-shot run on a VM that hands free memory
  // back to its host several times what they save (process_memory.h).
  retain_freed_memory();
  try {
    if (huge_pages_from_environment()) reserve_huge_page_heap();
  } catch (const Error& e) {
    std::cerr << e.pretty() << "\n";
    return 1;
  }
  CLI::App app{"graphfuse: declarative operator fusion for ML computation graphs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("graphfuse ") + kVersion);
  cli::Handler run;
  cli::register_apply(app, run);
  cli::register_info(app, run);
  cli::register_dot(app, run);
  cli::register_gen(app, run);
  cli::register_test(app, run);
  cli::register_check(app, run);
  cli::register_verify(app, run);
  cli::register_run(app, run);
  cli::register_explain(app, run);
  cli::register_report(app, run);
  cli::register_diff(app, run);
  cli::register_convert(app, run);
  cli::register_calibrate(app, run);
  cli::register_backend(app, run);
  // CLI11 answers an unknown subcommand with "A subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "error: unknown command '" << argv[1] << "' (commands: " << names << "; see graphfuse --help)\n";
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 1;
  }
  try {
    return run ? run() : 1;
  } catch (const Error& e) {
    for (const Error& each : all_errors(e)) std::cerr << each.pretty() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
