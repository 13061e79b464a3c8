// `graphfuse verify`: rewrite a graph, run the original and the rewrite on the same seeded inputs, compare.
#include <chrono>
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "cli/target_option.h"
#include "cli/fold_step.h"
#include "graphfuse/io.h"
#include "graphfuse/rules.h"
#ifdef GRAPHFUSE_HAVE_KERNELS
#include "graphfuse/kernels/fold.h"
#endif

namespace graphfuse::cli {

namespace {
struct VerifyOptions {
  std::vector<std::string> rules;
  std::string input;
  std::uint64_t seed = 0;
  double rtol = 1e-4;
  double atol = 1e-5;
  std::string kernels = "reference";
  int threads = 0;
  std::string fold = "auto";
  std::string output;
  std::vector<std::string> only;
  std::string target;  ///< --target (cli/target_option.h)
};

#ifdef GRAPHFUSE_HAVE_KERNELS
int run_verify(const VerifyOptions& o) {
  namespace gk = graphfuse::kernels;
  using Clock = std::chrono::steady_clock;
  gk::ExecOptions exec;
  exec.set = gk::kernel_set_from_name(o.kernels);
  exec.threads = o.threads;
  exec.seed = o.seed;
  RuleSet rules = load_rule_files_cached(o.rules);
  Graph original = load_graph(o.input);
  // Both graphs must see the same weights, and folding needs data: give data-less
  // constants their seeded values before rewriting (what the executor would use).
  gk::materialize_constants(original, o.seed);
  Graph rewritten = original;
  RewriteOptions ropt;
  ropt.threads = o.threads;
  ropt.throw_on_nonconvergence = true;
  ropt.only_rules = o.only;
  apply_target(o.target, ropt);
  RewriteReport report = rewrite_with_fold(rewritten, rules, ropt, o.fold);
  std::cout << "rules applied: " << rules_applied(report) << "\n";
  std::cout << "nodes: " << report.nodes_before << " -> " << rewritten.size() << " (folded " << report.fold.folded.size()
            << ", removed " << report.fold.removed.size() << " constants)\n";
  const auto t0 = Clock::now();
  auto diffs = gk::verify_rewrite(original, rewritten, exec, o.rtol, o.atol);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::cout << gk::format_diffs(diffs);
  bool pass = true;
  for (const auto& d : diffs) pass = pass && d.pass;
  std::cout << (pass ? "PASS" : "FAIL") << " (" << diffs.size() << " output" << (diffs.size() == 1 ? "" : "s")
            << ", rtol " << o.rtol << ", atol " << o.atol << ", " << o.kernels << " kernels, seed " << o.seed
            << ", " << std::fixed << std::setprecision(0) << ms << " ms)\n";
  // OUT is written only once the rewrite has run and passed: a kernel error or a FAIL
  // leaves it as it was (docs/cli.md), like every other failed command.
  if (!pass) return 1;
  if (!o.output.empty()) {
    save_graph(rewritten, o.output);
    std::cout << "wrote " << o.output << "\n";
  }
  return 0;
}
#else
int run_verify(const VerifyOptions&) {
  throw Error("graphfuse was built without the kernels; verify needs them");
}
#endif
}  // namespace

void register_verify(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Rewrite a graph and check that the rewrite computes the same outputs (seeded random inputs)");
  cmd->add_option("-r,--rules", opt->rules, "Rule file (repeatable)")->required()->allow_extra_args(false);
  cmd->add_option("INPUT", opt->input, "Graph file (.graph, .yaml, .yml, .json, .gfb, .onnx)")->required();
  cmd->add_option("--seed", opt->seed, "Seed of the random inputs and of constants without data")
      ->capture_default_str();
  cmd->add_option("--rtol", opt->rtol,
                  "Relative tolerance: pass when every |a-e| <= atol + rtol*|e| and max|a-e| <= rtol*max|e|")
      ->check(at_least(0))
      ->capture_default_str();
  cmd->add_option("--atol", opt->atol, "Absolute tolerance")->check(at_least(0))->capture_default_str();
  cmd->add_option("--kernels", opt->kernels, "Kernel set: reference or fast")->capture_default_str();
  cmd->add_option("--threads", opt->threads, "Threads for matching and kernels (0 = all cores)")
      ->check(at_least(0));
  cmd->add_option("--fold", opt->fold,
                  "Constant folding between rewrite passes: auto (nodes the rules created), all, off")
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Also save the rewritten graph here");
  cmd->add_option("--only", opt->only, "Apply only this rule (repeatable), to verify rules one at a time")
      ->allow_extra_args(false);
  add_target_option(cmd, opt->target);
  cmd->callback([opt, &run] { run = [opt] { return run_verify(*opt); }; });
}

}  // namespace graphfuse::cli
