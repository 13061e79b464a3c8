// The graphfuse subcommands: each registers its options and handler on the CLI app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace graphfuse::cli {

/// A number option's lower bound, with a message that says it (CLI11's PositiveNumber
/// prints the whole double range).
inline CLI::Validator at_least(double lo) {
  std::string lo_text = std::to_string(static_cast<long long>(lo));
  return CLI::Validator(
      [lo, lo_text](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || !(v >= lo)) return "must be >= " + lo_text + ", not " + s;
        return {};
      },
      ">=" + lo_text);
}

/// A subcommand's handler returns the process exit code; it may throw graphfuse::Error.
using Handler = std::function<int()>;

/// Each register_* adds one subcommand to `app` and stores its handler in `run`,
/// which main invokes when that subcommand was chosen.
void register_apply(CLI::App& app, Handler& run);
void register_info(CLI::App& app, Handler& run);
void register_dot(CLI::App& app, Handler& run);
void register_gen(CLI::App& app, Handler& run);
void register_test(CLI::App& app, Handler& run);
void register_check(CLI::App& app, Handler& run);
void register_verify(CLI::App& app, Handler& run);
void register_run(CLI::App& app, Handler& run);
void register_explain(CLI::App& app, Handler& run);
void register_diff(CLI::App& app, Handler& run);
void register_convert(CLI::App& app, Handler& run);
void register_report(CLI::App& app, Handler& run);
void register_calibrate(CLI::App& app, Handler& run);
void register_backend(CLI::App& app, Handler& run);

}  // namespace graphfuse::cli
