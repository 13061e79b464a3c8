// `--target NAME|FILE` for the commands that rewrite: a target profile and its cost model
// become the rewrite's gate (engine/cost).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "graphfuse/rewrite.h"

namespace graphfuse::cli {

/// Adds --target to `cmd`, stored in `target`.
void add_target_option(CLI::App* cmd, std::string& target);
/// Loads the profile named by `target` (nothing when empty) and sets opt.gate; `details`:
/// the verdicts carry explain's sentences.
void apply_target(const std::string& target, RewriteOptions& opt, bool details = false);

}  // namespace graphfuse::cli
