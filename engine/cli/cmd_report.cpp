// `graphfuse report`: rewrite a graph and write one self-contained HTML page showing what the
// rewrite did (cli/report_html.h), optionally with the numerical check and latencies.
#include <iostream>

#include "cli/commands.h"
#include "cli/fold_step.h"
#include "cli/report_html.h"
#include "graphfuse/io.h"
#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/fold.h"
#include "graphfuse/rules.h"

namespace graphfuse::cli {

namespace {
struct ReportOptions {
  std::vector<std::string> rules;
  std::string input;
  std::string output;
  int threads = 0;
  std::string fold = "auto";
  bool verify = false;
  int bench = 0;
  std::string kernels = "reference";
  std::uint64_t seed = 0;
};

int run_report(const ReportOptions& o) {
  namespace gk = graphfuse::kernels;
  RuleSet rules = load_rule_files_cached(o.rules);
  Graph before = load_graph(o.input);
  gk::ExecOptions exec;
  exec.set = gk::kernel_set_from_name(o.kernels);
  exec.threads = o.threads;
  exec.seed = o.seed;
  // Running the graphs needs the same weights in both: seeded data before rewriting, as verify does.
  if (o.verify || o.bench > 0) gk::materialize_constants(before, o.seed);
  Graph after = before;
  RewriteOptions ropt;
  ropt.threads = o.threads;
  ropt.throw_on_nonconvergence = false;  // the page shows why it stopped
  RewriteReport report = rewrite_with_fold(after, rules, ropt, o.fold);

  ReportExtras extras;
  extras.folded = report.fold.folded.size();
  bool pass = true;
  if (o.verify) {
    auto diffs = gk::verify_rewrite(before, after, exec, 1e-4, 1e-5);
    extras.verify.emplace();
    for (const auto& d : diffs) {
      extras.verify->push_back({d.name, d.max_abs, d.max_ref, d.pass});
      pass = pass && d.pass;
    }
    extras.verify_settings = o.kernels + " kernels, seeded inputs (seed " + std::to_string(o.seed) +
                             "), rtol 1e-4, atol 1e-5";
  }
  if (o.bench > 0) {
    auto inputs = gk::make_random_inputs(before, o.seed, exec);
    double b = gk::bench_graph(before, inputs, exec, o.bench).median_ms;
    double a = gk::bench_graph(after, inputs, exec, o.bench).median_ms;
    extras.bench_ms = {b, a};
    extras.bench_settings = o.kernels + " kernels, " + std::to_string(o.bench) + " runs, " +
                            (o.threads ? std::to_string(o.threads) : std::string("all")) + " threads";
  }
  write_file_atomic(o.output, render_report(o.input, o.rules, before, after, report, extras));
  std::cout << "wrote " << o.output << ": nodes " << report.nodes_before << " -> " << after.size() << ", "
            << rules_applied(report) << "\n";
  if (!report.converged) throw Error(report.stop_reason);
  if (!pass) {
    std::cout << "FAIL: the rewritten graph computes different numbers (see the report)\n";
    return 1;
  }
  return 0;
}
}  // namespace

void register_report(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Rewrite a graph and write a self-contained HTML report: before/after pictures, rules, ops");
  cmd->add_option("-r,--rules", opt->rules, "Rule file or directory (repeatable)")->required()->allow_extra_args(false);
  cmd->add_option("INPUT", opt->input, "Graph file (.graph, .yaml, .yml, .json, .gfb, .onnx)")->required();
  cmd->add_option("-o,--output", opt->output, "Output .html file")->required();
  cmd->add_option("--threads", opt->threads, "Threads for matching and kernels (0 = all cores)")->check(at_least(0));
  cmd->add_option("--fold", opt->fold, "Constant folding: auto (nodes the rules created), all, off")->capture_default_str();
  cmd->add_flag("--verify", opt->verify, "Run both graphs on seeded inputs and compare (as `graphfuse verify`)");
  cmd->add_option("--bench", opt->bench, "Time both graphs over this many runs (median)")->check(at_least(0));
  cmd->add_option("--kernels", opt->kernels, "Kernel set for --verify/--bench: reference or fast")->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Seed of the random inputs and of constants without data")->capture_default_str();
  cmd->callback([opt, &run] { run = [opt] { return run_report(*opt); }; });
}

}  // namespace graphfuse::cli
