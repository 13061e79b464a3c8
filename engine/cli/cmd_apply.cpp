// `graphfuse apply` placeholder until the rewriter lands.
#include "cli/commands.h"
namespace graphfuse::cli {
void register_apply(CLI::App& app, Handler&) { app.add_subcommand("apply", "Apply rule files (not built yet)"); }
}  // namespace graphfuse::cli
