// `graphfuse run`: execute a model (optionally after the rules) and, with --bench, time it per op type.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/fold_step.h"
#include "cli/target_option.h"
#include "graphfuse/io.h"
#include "graphfuse/rules.h"
#ifdef GRAPHFUSE_HAVE_KERNELS
#include "graphfuse/kernels/fold.h"
#include "graphfuse/kernels/isa.h"
#endif

namespace graphfuse::cli {

namespace {
struct RunOptions {
  std::string input;
  std::vector<std::string> rules;
  std::string kernels = "fast";
  int bench = 0;
  int threads = 0;
  std::uint64_t seed = 0;
  std::string fold = "auto";
  std::string target;  ///< --target (cli/target_option.h)
  std::string clock = "wall";
};

#ifdef GRAPHFUSE_HAVE_KERNELS
namespace gk = graphfuse::kernels;

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// One line per output: shape and, for float32, a few statistics to eyeball or diff.
void print_outputs(const Graph& g, const std::vector<Tensor>& outs) {
  char buf[200];
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const Tensor& t = outs[i];
    std::cout << "  " << g.value_name(g.outputs()[i]) << ": " << dtype_name(t.dtype) << shape_text(t.shape);
    if (t.dtype == DType::Float32 && t.has_data() && t.num_elements() > 0) {
      const float* p = t.as<float>();
      double sum = 0, lo = p[0], hi = p[0];
      for (std::int64_t k = 0; k < t.num_elements(); ++k) {
        sum += p[k];
        lo = std::min<double>(lo, p[k]);
        hi = std::max<double>(hi, p[k]);
      }
      std::snprintf(buf, sizeof buf, "  mean %.6g  min %.6g  max %.6g", sum / static_cast<double>(t.num_elements()),
                    lo, hi);
      std::cout << buf;
    }
    std::cout << "\n";
  }
}

void print_bench(const std::string& label, const gk::BenchReport& r) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s: median %.3f ms, best %.3f ms over %d runs\n", label.c_str(), r.median_ms,
                r.min_ms, r.runs);
  std::cout << buf;
  std::size_t width = 2;
  for (const auto& op : r.ops) width = std::max(width, op.op.size());
  for (const auto& op : r.ops) {
    std::snprintf(buf, sizeof buf, "  %-*s %4d x  %9.3f ms  %5.1f%%\n", static_cast<int>(width), op.op.c_str(),
                  op.count, op.median_ms, r.median_ms > 0 ? 100.0 * op.median_ms / r.median_ms : 0.0);
    std::cout << buf;
  }
}

// One warning per node that ran on a oneDNN reference implementation (no optimized
// kernel for its shape in any layout the fast kernels tried on this CPU).
void warn_reference_fallbacks() {
  for (const auto& f : gk::reference_fallbacks())
    std::cerr << "warning: node '" << f.node << "' (" << f.op << "): oneDNN " << f.primitive.primitive << " "
              << f.primitive.shape << " runs on its reference implementation " << f.primitive.impl
              << " (no optimized kernel for ISA " << gk::onednn_isa() << "); expect it to be slow\n";
}

int run_run(const RunOptions& o) {
  gk::ExecOptions exec;
  exec.set = gk::kernel_set_from_name(o.kernels);
  exec.threads = o.threads;
  exec.seed = o.seed;
  Graph original = load_graph(o.input);
  std::optional<Graph> rewritten;
  if (!o.rules.empty()) {
    RuleSet rules = load_rule_files_cached(o.rules);
    // Seeded constant data first, so the rewritten graph computes on the same weights
    // (and constant folding has data to evaluate).
    gk::materialize_constants(original, o.seed);
    rewritten = original;
    RewriteOptions ropt;
    ropt.threads = o.threads;
    apply_target(o.target, ropt);
    RewriteReport report = rewrite_with_fold(*rewritten, rules, ropt, o.fold);
    std::cout << "rules applied: " << rules_applied(report) << "\n";
    std::cout << "nodes: " << report.nodes_before << " -> " << rewritten->size() << " (folded " << report.fold.folded.size()
              << ")\n";
  }
  const auto inputs = gk::make_random_inputs(original, o.seed, exec);
  if (o.bench <= 0) {
    const auto t0 = std::chrono::steady_clock::now();
    const Graph& g = rewritten ? *rewritten : original;
    auto outs = gk::run_graph(g, inputs, exec);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "ran " << o.input << (rewritten ? " (rewritten)" : "") << " with the " << o.kernels
              << " kernels in " << ms << " ms\n";
    print_outputs(g, outs);
    warn_reference_fallbacks();
    return 0;
  }
  // Figures name their machine: oneDNN's instruction set (and any restriction of it).
  if (exec.set == gk::KernelSet::Fast) std::cout << "oneDNN ISA: " << gk::onednn_isa() << "\n";
  const gk::BenchClock clock = o.clock == "cpu" ? gk::BenchClock::Cpu : gk::BenchClock::Wall;
  if (!rewritten) {
    print_bench(o.input, gk::bench_graph(original, inputs, exec, o.bench, clock));
  } else {
    // Before and after interleaved run by run: load from other processes hits both alike.
    auto reps = gk::bench_graphs({&original, &*rewritten}, inputs, exec, o.bench, clock);
    const gk::BenchReport& before = reps[0];
    const gk::BenchReport& after = reps[1];
    print_bench("before rules", before);
    print_bench("after rules", after);
    char buf[160];
    const std::string threads =
        o.threads > 0 ? std::to_string(o.threads) + (o.threads == 1 ? " thread" : " threads") : "all cores";
    std::snprintf(buf, sizeof buf, "speedup: %.2fx (median %.3f -> %.3f ms, %s kernels, %s, %s time)\n",
                  after.median_ms > 0 ? before.median_ms / after.median_ms : 0.0, before.median_ms, after.median_ms,
                  o.kernels.c_str(), threads.c_str(), o.clock == "cpu" ? "CPU" : "wall");
    std::cout << buf;
  }
  warn_reference_fallbacks();
  return 0;
}
#else
int run_run(const RunOptions&) { throw Error("graphfuse was built without the kernels; run needs them"); }
#endif
}  // namespace

void register_run(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a model on seeded random inputs; --bench times it before and after rules");
  cmd->add_option("INPUT", opt->input, "Graph file (.graph, .yaml, .yml, .json, .gfb, .onnx)")->required();
  cmd->add_option("-r,--rules", opt->rules, "Rule file to apply first (repeatable)")->allow_extra_args(false);
  cmd->add_option("--kernels", opt->kernels, "Kernel set: reference or fast")->capture_default_str();
  cmd->add_option("--bench", opt->bench, "Time N runs (after a warm-up) and print median latency per op type")
      ->check(at_least(0));
  cmd->add_option("--threads", opt->threads, "Threads for the kernels and matching (0 = all cores)")
      ->check(at_least(0));
  cmd->add_option("--seed", opt->seed, "Seed of the random inputs and of constants without data")
      ->capture_default_str();
  cmd->add_option("--fold", opt->fold, "Constant folding after rewriting: auto, all, off")->capture_default_str();
  cmd->add_option("--clock", opt->clock,
                  "What --bench times a run's total by: wall, or cpu (the process's CPU time; use with --threads 1 "
                  "on a shared machine)")
      ->check(CLI::IsMember({"wall", "cpu"}))
      ->capture_default_str();
  add_target_option(cmd, opt->target);
  cmd->callback([opt, &run] { run = [opt] { return run_run(*opt); }; });
}

}  // namespace graphfuse::cli
