// `graphfuse apply`: load rules and a graph, rewrite to a fixed point, save atomically;
// optionally print statistics, a trace, and a progress line.
#include <chrono>
#include <exception>
#include <future>
#include <iomanip>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/fold_step.h"
#include "cli/output_option.h"
#include "cli/progress.h"
#include "cli/target_option.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse::cli {

namespace {
struct ApplyOptions {
  std::vector<std::string> rules;
  std::string input;
  std::string output;
  RewriteOptions rewrite;
  std::uint64_t shuffle_seed = 0;
  bool shuffle = false;
  bool stats = false;
  std::string stats_json;
  bool quiet = false;
  std::string fold = "auto";  ///< constant folding between rewrite passes (cli/fold_step.h)
  std::string target;  ///< --target (cli/target_option.h)
  OnnxSaveOptions save;  ///< --external-data (cli/output_option.h)
};

using Clock = std::chrono::steady_clock;
std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int run_apply(ApplyOptions o) {
  Progress progress(o.quiet);
  auto t0 = Clock::now();
  // The rules load on a second thread while this one loads the graph: the two are
  // independent, and either can be the longer (a rule library read back from the cache
  // against a model whose import builds libonnx's schema registry; docs/big-models.md,
  // "Ordinary models: load, rewrite, save beside ONNX Runtime").
  progress.phase("loading the rules and the graph");
  double rules_ms = 0;
  std::future<RuleSet> rules_loading = std::async(std::launch::async, [&o, &rules_ms, t0] {
    RuleSet loaded = load_rule_files_cached(o.rules);
    rules_ms = ms_since(t0);
    return loaded;
  });
  std::optional<Graph> loaded;
  std::exception_ptr graph_error;
  try {
    loaded.emplace(load_graph(o.input));
  } catch (...) {
    graph_error = std::current_exception();
  }
  // A broken rule file is reported before a broken graph, as when they loaded in turn.
  RuleSet rules = rules_loading.get();
  if (graph_error) std::rethrow_exception(graph_error);
  Graph g = std::move(*loaded);
  double load_ms = ms_since(t0);

  if (o.shuffle) o.rewrite.shuffle_seed = o.shuffle_seed;
  o.rewrite.rule_times = o.stats || !o.stats_json.empty();
  o.rewrite.throw_on_nonconvergence = false;  // report first, then fail
  apply_target(o.target, o.rewrite);
  if (progress.enabled())
    o.rewrite.progress = [&progress](const RewriteProgress& p) {
      bool match = p.phase == RewriteProgress::Phase::Match;
      // Match: how many nodes the round visits; Apply: the round's candidates as --stats
      // counts them, and a bar over the matches.
      std::string label = "round " + std::to_string(p.round) +
                          (match ? ": matching " + group_digits(p.total) + " nodes"
                                 : ": " + group_digits(p.candidates) + " candidates, applying");
      if (match) progress.phase(label);
      else progress.bar(label, p.done, p.total);
    };
  auto t1 = Clock::now();
  RewriteReport report = rewrite_with_fold(g, rules, o.rewrite, o.fold);
  if (!o.quiet)
    for (const std::string& note : report.notes) std::cout << note << "\n";
  if (!o.quiet && !report.fold.folded.empty())
    std::cout << "folded " << report.fold.folded.size() << " nodes into constants, removed "
              << report.fold.removed.size() << " unused constants\n";
  if (!o.quiet && !report.dead.empty())
    std::cout << "removed " << report.dead.size() << " nodes the rewrite left without a reader (" << report.merged
              << " merged into an identical one)\n";
  double rewrite_ms = ms_since(t1);

  auto write_reports = [&] {
    if (!o.stats_json.empty()) write_file_atomic(o.stats_json, stats_json(report));
    if (o.rewrite.trace)
      for (const std::string& line : report.trace) std::cout << line << "\n";
  };
  if (!report.converged) {
    // Nothing is written: OUTPUT keeps its previous contents (or stays absent).
    progress.finish();
    write_reports();
    if (o.stats) std::cout << format_stats(report);
    throw Error(report.stop_reason);
  }
  double save_ms = 0;
  if (!o.output.empty()) {
    progress.phase("saving " + o.output);
    auto t2 = Clock::now();
    save_output(g, o.output, o.save);
    save_ms = ms_since(t2);
  }
  progress.finish();
  write_reports();
  if (!o.quiet) {
    // Only the rules that fired: with a library of fifty rules, a line per idle rule
    // buries the few that did something (`--stats` still lists every rule).
    std::size_t total = 0, idle = 0;
    for (const RuleStats& s : report.rules) {
      total += s.applied;
      if (s.applied == 0) ++idle;
      else std::cout << s.rule << ": " << plural(s.applied, "rewrite") << "\n";
    }
    if (idle == report.rules.size()) std::cout << "no rule fired (" << plural(idle, "rule") << " loaded)\n";
    else if (idle != 0) std::cout << plural(idle, "other rule") << " did not fire\n";
    std::cout << "nodes: " << report.nodes_before << " -> " << report.nodes_after << " ("
              << plural(total, "rewrite") << " in " << plural(report.rounds, "round") << ")\n";
    std::cout << std::fixed << std::setprecision(2) << "time: load " << load_ms << " ms, rewrite "
              << rewrite_ms << " ms, save " << save_ms << " ms (the load: rules " << rules_ms << " ms)\n";
    if (o.output.empty()) std::cout << "dry run: nothing written (no -o)\n";
    else std::cout << "wrote " << o.output << "\n";
  }
  if (o.stats) std::cout << format_stats(report);
  return 0;
}
}  // namespace

void register_apply(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<ApplyOptions>();
  CLI::App* cmd = app.add_subcommand("apply", "Apply rule files to a graph until nothing matches");
  cmd->add_option("-r,--rules", opt->rules, "Rule file (repeatable)")->required()->allow_extra_args(false);
  cmd->add_option("INPUT", opt->input, "Input graph (.graph, .yaml, .yml, .json, .gfb, .onnx)")->required();
  cmd->add_option("-o,--output", opt->output,
                  "Output graph; format by extension. Without it nothing is written (a dry run, e.g. with --stats)");
  cmd->add_option("--threads", opt->rewrite.threads, "Matching threads (0 = all cores)")->check(at_least(0));
  cmd->add_option("--max-rounds", opt->rewrite.max_rounds, "Give up after this many rewriting rounds")
      ->check(at_least(1))
      ->capture_default_str();
  cmd->add_option("--max-nodes", opt->rewrite.max_nodes,
                  "Give up when the graph grows past this many nodes (0 = 8 x input + 4096)")
      ->capture_default_str();
  cmd->add_flag("--stats", opt->stats, "Print per-rule and per-round statistics");
  cmd->add_option("--stats-json", opt->stats_json, "Write the statistics as JSON to this file");
  cmd->add_flag("--trace", opt->rewrite.trace, "Print one line per rewrite (rule, root, nodes removed and added)");
  cmd->add_option("--shuffle-seed", opt->shuffle_seed,
                  "Visit candidates in an order shuffled with this seed (the output must not change)")
      ->each([opt](const std::string&) { opt->shuffle = true; });
  cmd->add_flag("-q,--quiet", opt->quiet, "Print nothing on success, and no progress line");
  cmd->add_option("--fold", opt->fold,
                  "Constant folding between rewrite passes: auto (nodes the rules created), all, off")
      ->capture_default_str();
  add_target_option(cmd, opt->target);
  add_output_options(cmd, opt->save);
  cmd->callback([opt, &run] { run = [opt] { return run_apply(*opt); }; });
}

}  // namespace graphfuse::cli
