// scale_bench: the rewriter at 10^4..10^7 nodes (issue 7). The parent runs every
// measurement in a fresh child process (so sizes do not share peak memory or heap
// state) and prints markdown tables for docs/performance.md.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "graphfuse/error.h"
#include "graphfuse/process_memory.h"
#include "proc_stats.h"
#include "scale_cases.h"
#include "scale_run.h"

namespace gb = graphfuse::bench;
using gb::Plan, gb::run_child, gb::median_of, gb::fmt, gb::spread, gb::cpu_model;

namespace {

std::size_t parse_size(const std::string& s) { return static_cast<std::size_t>(std::stod(s)); }

template <class T, class F>
std::vector<T> split(const std::string& s, F parse) {
  std::vector<T> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(parse(item));
  return out;
}

// Timings are medians: of 3 runs at least, more where a run is short (and most at 10^5,
// whose 20-ms rewrite is the reference of the time-per-node comparison).
int reps_for(std::size_t n) { return n <= 100'000 ? 9 : n <= 1'000'000 ? 5 : 3; }

int run_parent(const std::string& self, const Plan& plan) {
  std::filesystem::create_directories(plan.dir);
  std::cerr << "scale_bench: " << cpu_model() << ", " << std::thread::hardware_concurrency()
            << " cores, load average " << fmt(gb::load_average(), 2) << "\n";
  std::string t_rewrite, t_apply, t_vf2;
  int max_threads = plan.threads.back();
  std::map<std::size_t, double> ns_per_node;  // at max_threads, for the scaling line
  for (std::size_t n : plan.sizes) {
    gb::CaseArgs a;
    a.rules = plan.rules;
    a.shape = plan.shape;
    a.nodes = n;
    a.reps = reps_for(n);
    // Every rewrite run loads the same generated graph from a .gfb file (faster than
    // generating it again, and the graph a user's apply would see).
    const std::string gfb = plan.dir + "/g" + std::to_string(n) + ".gfb";
    a.output = gfb;
    run_child(self, "generate", a);
    a.output.clear();
    a.input = gfb;
    std::map<int, gb::Figures> by_t;
    for (int t : plan.threads) {
      a.threads = t;
      by_t[t] = run_child(self, "rewrite", a);
      std::cerr << "  rewrite n=" << n << " threads=" << t << ": " << fmt(by_t[t]["rewrite_ms"]) << " ms\n";
    }
    gb::Figures& lo = by_t[plan.threads.front()];
    gb::Figures& hi = by_t[max_threads];
    double nodes = hi["nodes"];
    ns_per_node[n] = hi["rewrite_ms"] * 1e6 / nodes;
    t_rewrite += "| " + fmt(nodes, 0) + " | " + fmt(hi["rewrites"], 0) + " | " + fmt(hi["rounds"], 0);
    for (int t : plan.threads) t_rewrite += " | " + spread(by_t[t], "rewrite_ms");
    t_rewrite += " | " + fmt(ns_per_node[n]) + " | " + fmt(lo["match_ms"]) + " | " + fmt(hi["match_ms"]) +
                 " | " + fmt(lo["match_ms"] / hi["match_ms"], 2) + "x | " +
                 fmt(lo["round1_match_ms"] / hi["round1_match_ms"], 2) + "x | " + fmt(hi["apply_ms"]) + " | " +
                 fmt(hi["apply_ms"] * 1e6 / nodes) + " |\n";
    a.input.clear();

    for (const std::string& format : plan.formats) {
      bool slow = format == "yaml" || format == "graph";
      if (slow && n > plan.slow_max) continue;
      a.output = plan.dir + "/g" + std::to_string(n) + "." + format;
      a.threads = max_threads;
      if (a.output != gfb) run_child(self, "generate", a);  // the rewrite runs' .gfb is still there
      a.input = a.output;
      a.output = plan.dir + "/out" + std::to_string(n) + "." + format;
      std::vector<gb::Figures> runs;
      for (int k = 0; k < 3; ++k) runs.push_back(run_child(self, "apply", a));
      gb::Figures ap = median_of(runs);
      double mb = static_cast<double>(std::filesystem::file_size(a.input)) / 1e6;
      double out_mb = static_cast<double>(std::filesystem::file_size(a.output)) / 1e6;
      std::filesystem::remove(a.input);
      std::filesystem::remove(a.output);
      std::cerr << "  apply n=" << n << " " << format << ": " << fmt(ap["total_ms"]) << " ms\n";
      auto per_node = [&](const char* key) { return fmt(ap[key] / ap["nodes"], 0); };
      t_apply += "| " + fmt(ap["nodes"], 0) + " | " + format + " | " + fmt(mb) + " | " + fmt(ap["load_ms"]) +
                 " | " + fmt(mb * 1e3 / ap["load_ms"], 0) + " | " + fmt(ap["rewrite_ms"]) + " | " + fmt(ap["save_ms"]) +
                 " | " + fmt(out_mb * 1e3 / ap["save_ms"], 0) + " | " + spread(ap, "total_ms") +
                 " | " + per_node("graph_bytes") + " | " + per_node("load_peak_bytes") + " / " +
                 per_node("rewrite_peak_bytes") + " / " + per_node("save_peak_bytes") + " | " +
                 per_node("peak_bytes") + " |\n";
      a.input.clear();
      a.output.clear();
    }
    std::filesystem::remove(gfb);

    if (std::find(plan.vf2_sizes.begin(), plan.vf2_sizes.end(), n) != plan.vf2_sizes.end()) {
      a.threads = 1;
      a.reps = 3;
      gb::Figures v = run_child(self, "vf2", a);
      std::cerr << "  vf2 n=" << n << ": " << fmt(v["vf2_ms"]) << " ms vs " << fmt(v["match_ms"], 2) << " ms\n";
      t_vf2 += "| " + fmt(v["nodes"], 0) + " | " + fmt(v["rules"], 0) + " | " + fmt(v["roots"], 0) +
               " (same) | " + fmt(v["vf2_ms"]) + " | " + fmt(v["match_ms"], 2) + " | " +
               fmt(v["vf2_ms"] / v["match_ms"], 0) + "x |\n";
    }
  }

  std::cout << "Machine: " << cpu_model() << ", " << std::thread::hardware_concurrency()
            << " cores; load average at the end " << fmt(gb::load_average(), 2) << "; graph shape: "
            << plan.shape << "\n\n";
  std::cout << "Rewrite to a fixed point, load and save excluded; median (fastest-slowest) of 9/9/5/3 runs:\n\n"
            << "| nodes | rewrites | rounds";
  for (int t : plan.threads) std::cout << " | " << t << (t == 1 ? " thread" : " threads") << " ms";
  std::cout << " | ns/node (" << max_threads << "T) | match " << plan.threads.front() << "T ms | match "
            << max_threads << "T ms | match speed-up | round-1 match speed-up | apply ms | apply ns/node |\n|";
  for (std::size_t i = 0; i < 10 + plan.threads.size(); ++i) std::cout << "---|";
  std::cout << "\n" << t_rewrite;
  if (ns_per_node.count(100'000) && ns_per_node.count(10'000'000))
    std::cout << "\nTime per node, 10^7 vs 10^5: "
              << fmt(ns_per_node[10'000'000] / ns_per_node[100'000], 2) << "x\n";
  if (!t_apply.empty())
    std::cout << "\n`apply` (load + rewrite + save, " << max_threads << " threads), median of 3 runs, each in a fresh\n"
              << "process; graph B/node: resident memory the loaded graph added; phase peaks: the\n"
              << "process's peak resident memory (VmHWM, everything included) during load / rewrite /\n"
              << "save; peak B/node: the largest; all over the input's node count; MB/s: of the file\n"
              << "read (load) or written (save):\n\n"
              << "| nodes | format | file MB | load ms | load MB/s | rewrite ms | save ms | save MB/s | total ms | graph B/node | phase peaks B/node | peak B/node |\n"
              << "|---|---|---|---|---|---|---|---|---|---|---|---|\n" << t_apply;
  if (!t_vf2.empty())
    std::cout << "\nVF2 baseline (boost::vf2_subgraph_mono per pattern) vs the matcher, 1 thread:\n\n"
              << "| nodes | rules | candidate roots | VF2 ms | matcher ms | ratio |\n"
              << "|---|---|---|---|---|---|\n" << t_vf2;
  return 0;
}

int run_case(const std::string& name, const gb::CaseArgs& a) {
  gb::Figures f;
  if (name == "rewrite") f = gb::case_rewrite(a);
  else if (name == "generate") f = gb::case_generate(a);
  else if (name == "apply") f = gb::case_apply(a);
  else if (name == "vf2") f = gb::case_vf2(a);
  else if (name == "mlir") f = gb::case_mlir(a);
  else if (name == "cli") f = gb::case_cli(a);
  else throw graphfuse::Error("unknown case '" + name + "'");
  std::cout << "RESULT";
  for (const auto& [k, v] : f) std::cout << " " << k << "=" << std::setprecision(12) << v;
  std::cout << std::endl;
  return 0;
}

const char* kUsage =
    "usage: scale_bench [--sizes 1e4,1e5,1e6,1e7] [--threads 1,2] [--formats gfb,json,yaml]\n"
    "                   [--slow-max 1e5] [--vf2-sizes 1e4,1e5] [--rules FILE]... [--dir DIR]\n"
    "                   [--shape cnn|wide]\n"
    "       scale_bench --case rewrite --input G.gfb [--threads N] [--reps N] [--target NAME|FILE]\n"
    "                   [--shapes yes] [--apply in-order|grouped] [--retain-memory yes|no]\n"
    "                   [--huge-pages yes|no]\n"
    "  --case rewrite: one measurement (RESULT line); --target gates it with a target's cost model;\n"
    "  --shapes yes gives every value a type first (the generator writes none);\n"
    "  --apply in-order applies every round's matches one after another (the default, grouped,\n"
    "  applies rounds of plain fusions in groups side by side: RewriteOptions::parallel_apply_from);\n"
    "  --retain-memory no leaves glibc's allocator as a library user has it (the default, yes, calls\n"
    "  retain_freed_memory() first, as the graphfuse command does); --huge-pages yes calls\n"
    "  reserve_huge_page_heap() next (it needs the first), as the command does with\n"
    "  GRAPHFUSE_HUGE_PAGES=1, which also sets this option's default (--huge-heap: the same option)\n"
    "       scale_bench --fanout chains,weights,shapes [--sizes 1e5,1e6,1e7] [--formats graph,json,yaml]\n"
    "                   [--reps N] [--rules FILE]... [--dir DIR]\n"
    "  --fanout: fan-out graphs (issue 18) with tests/rules/fanout.yaml; the chains form also\n"
    "  runs mlir-opt-14 --canonicalize on the same program (Debian: apt-get install mlir-14-tools;\n"
    "  skipped without it) next to the graphfuse CLI\n";

}  // namespace

int main(int argc, char** argv) try {
  Plan plan;
  gb::CaseArgs a;
  std::string case_name;
  bool retain_memory = true, huge_pages = graphfuse::huge_pages_from_environment();
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "-h" || k == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (i + 1 >= argc) throw graphfuse::Error("missing value after " + k + "\n" + kUsage);
    std::string v = argv[++i];
    if (k == "--sizes") plan.sizes = split<std::size_t>(v, parse_size), plan.sizes_given = true;
    else if (k == "--threads" && case_name.empty()) plan.threads = split<int>(v, [](auto& s) { return std::stoi(s); });
    else if (k == "--formats") plan.formats = split<std::string>(v, [](auto& s) { return s; }), plan.formats_given = true;
    else if (k == "--fanout") plan.fanout = split<std::string>(v, [](auto& s) { return s; });
    else if (k == "--form") a.form = v;
    else if (k == "--mlir") a.mlir = v;
    else if (k == "--slow-max") plan.slow_max = parse_size(v);
    else if (k == "--vf2-sizes") plan.vf2_sizes = split<std::size_t>(v, parse_size);
    else if (k == "--rules") plan.rules.push_back(v);
    else if (k == "--dir") plan.dir = v;
    else if (k == "--shape") plan.shape = a.shape = v;
    else if (k == "--case") case_name = v;
    else if (k == "--nodes") a.nodes = parse_size(v);
    else if (k == "--threads") a.threads = std::stoi(v);
    else if (k == "--reps") a.reps = plan.reps = std::stoi(v);
    else if (k == "--input") a.input = v;
    else if (k == "--output") a.output = v;
    else if (k == "--target") a.target = v;
    else if (k == "--shapes") a.shapes = v == "1" || v == "yes";
    else if (k == "--apply") a.in_order = v == "in-order";
    else if (k == "--retain-memory") retain_memory = v == "yes" || v == "1";
    else if (k == "--huge-pages" || k == "--huge-heap") huge_pages = v == "yes" || v == "1";
    else throw graphfuse::Error("unknown option " + k + "\n" + kUsage);
  }
  if (plan.rules.empty() && (!plan.fanout.empty() || !a.form.empty())) plan.rules.push_back(GRAPHFUSE_SOURCE_DIR "/tests/rules/fanout.yaml");
  if (plan.rules.empty()) {
    // The shipped rules for TF-style CNN graphs: the seed rule and the tf/ family.
    std::string root = GRAPHFUSE_SOURCE_DIR "/rules";
    plan.rules.push_back(root + "/seed.yaml");
    if (std::filesystem::is_directory(root + "/tf"))
      for (const auto& e : std::filesystem::directory_iterator(root + "/tf"))
        if (e.path().extension() == ".yaml") plan.rules.push_back(e.path().string());
    std::sort(plan.rules.begin() + 1, plan.rules.end());
  }
  a.rules = plan.rules;
  // As the graphfuse command does: the figures are what a user of the command sees.
  if (retain_memory) graphfuse::retain_freed_memory();
  if (retain_memory && huge_pages) graphfuse::reserve_huge_page_heap();
  if (!case_name.empty()) return run_case(case_name, a);
  std::cerr << "rules:";
  for (const auto& r : plan.rules) std::cerr << " " << r;
  std::cerr << "\n";
  std::string self = std::filesystem::canonical("/proc/self/exe").string();
  if (!plan.fanout.empty()) {
    if (!plan.sizes_given) plan.sizes = {100'000, 1'000'000, 10'000'000};
    if (!plan.formats_given) plan.formats = {"graph", "json", "yaml"};
    return gb::run_fanout(self, plan);
  }
  return run_parent(self, plan);
} catch (const std::exception& e) {
  std::cerr << "scale_bench: " << e.what() << "\n";
  return 1;
}
