// scale_bench --fanout (issue 18): graphs where a few values have a large share of the
// graph as users, timed in fresh processes per format and size, checked byte-identical
// across thread counts, and (the chains form) run next to mlir-opt --canonicalize on the
// same program as an MLIR module.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <thread>

#include "proc_stats.h"
#include "scale_run.h"

namespace graphfuse::bench {

namespace {

bool same_bytes(const std::string& a, const std::string& b) {
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  std::istreambuf_iterator<char> end;
  return std::equal(std::istreambuf_iterator<char>(x), end, std::istreambuf_iterator<char>(y), end);
}

std::string mb(double bytes) { return fmt(bytes / 1e6, 0); }
std::string per_node(Figures& f, const char* key, double scale = 1e6) { return fmt(f[key] * scale / f["nodes"], 0); }

/// One row of the apply table.
std::string apply_row(const std::string& form, const std::string& format, int threads, Figures& f) {
  return "| " + form + " | " + fmt(f["nodes"], 0) + " | " + format + " | " + std::to_string(threads) + " | " +
         fmt(f["load_ms"]) + " (" + fmt(f["load_cpu_ms"]) + ") | " + fmt(f["rewrite_ms"]) + " (" +
         fmt(f["rewrite_cpu_ms"]) + ") | " + fmt(f["save_ms"]) + " | " + spread(f, "total_ms") + " | " +
         per_node(f, "load_cpu_ms") + " | " + per_node(f, "rewrite_cpu_ms") + " | " + per_node(f, "graph_bytes", 1) +
         " | " + per_node(f, "peak_bytes", 1) + " |";
}

/// The MLIR comparison at one size: mlir-opt, then `graphfuse apply` at 1 and 2 threads,
/// interleaved run by run so that a change in the machine's load hits all three alike.
/// Returns the table row; `out` is where apply writes (checked against the other runs).
std::string mlir_row(const std::string& self, CaseArgs a, const std::string& graph, const std::string& mlir,
                     const std::string& out, int reps) {
  std::vector<Figures> m, g1, g2;
  for (int k = 0; k < reps; ++k) {
    a.input = mlir;
    m.push_back(run_child(self, "mlir", a));
    a.input = graph;
    a.output = out;
    a.threads = 1;
    g1.push_back(run_child(self, "cli", a));
    a.threads = 2;
    g2.push_back(run_child(self, "cli", a));
  }
  Figures mm = median_of(m), a1 = median_of(g1), a2 = median_of(g2);
  std::cerr << "  mlir-opt n=" << fmt(a2["nodes"], 0) << ": parse " << fmt(mm["parse_ms"]) << " canonicalize "
            << fmt(mm["canonicalize_ms"]) << " process " << fmt(mm["process_ms"]) << " ms; graphfuse 2T rewrite "
            << fmt(a2["rewrite_ms"]) << " process " << fmt(a2["process_ms"]) << " ms\n";
  auto ratio = [](double x, double y) { return fmt(x / y, 1) + "x"; };
  return "| " + fmt(a2["nodes"], 0) + " | " + fmt(mm["parse_ms"]) + " / " + fmt(mm["canonicalize_ms"]) + " | " +
         fmt(mm["process_ms"]) + " / " + fmt(mm["process_cpu_ms"]) + " | " + mb(mm["peak_bytes"]) + " | " +
         fmt(a1["load_ms"]) + " / " + fmt(a1["rewrite_ms"]) + " | " + fmt(a1["process_ms"]) + " / " +
         fmt(a1["process_cpu_ms"]) + " | " + fmt(a2["load_ms"]) + " / " + fmt(a2["rewrite_ms"]) + " | " +
         fmt(a2["process_ms"]) + " / " + fmt(a2["process_cpu_ms"]) + " | " + mb(a2["peak_bytes"]) + " | " +
         ratio(mm["canonicalize_ms"], a1["rewrite_ms"]) + " / " + ratio(mm["canonicalize_ms"], a2["rewrite_ms"]) +
         " | " + ratio(mm["process_ms"], a1["process_ms"]) + " / " + ratio(mm["process_ms"], a2["process_ms"]) + " |\n";
}

}  // namespace

int run_fanout(const std::string& self, const Plan& plan) {
  std::filesystem::create_directories(plan.dir);
  std::cerr << "scale_bench --fanout: " << cpu_model() << ", " << std::thread::hardware_concurrency()
            << " cores, load average " << fmt(load_average(), 2) << "\n";
  const bool have_mlir = !find_mlir_opt().empty();
  if (!have_mlir) std::cerr << "  mlir-opt not found (Debian: mlir-14-tools, or set MLIR_OPT): no MLIR comparison\n";
  std::string t_apply, t_mlir, t_scale, t_same;
  for (const std::string& form : plan.fanout) {
    std::map<std::string, std::map<std::size_t, Figures>> at;  // format -> size -> 2-thread apply
    for (std::size_t n : plan.sizes) {
      CaseArgs a;
      a.rules = plan.rules;
      a.nodes = n;
      a.form = form;
      const std::string base = plan.dir + "/fan_" + form + "_" + std::to_string(n);
      const int reps = plan.reps > 0 ? plan.reps : n <= 1'000'000 ? 3 : 1;
      for (const std::string& format : plan.formats) {
        const bool compare = have_mlir && form == "chains" && format == "graph";
        a.input = base + "." + format;
        a.output = a.input;
        a.mlir = compare ? base + ".mlir" : "";
        run_child(self, "generate", a);
        a.mlir.clear();
        // Every text format at 2 threads; the .graph also at 1 (the MLIR comparison's
        // figures) and 8, which only checks that the output is the same.
        std::vector<int> threads = format == "graph" ? std::vector<int>{1, 2, 8} : std::vector<int>{2};
        std::map<int, std::string> outs;
        for (int t : threads) {
          a.threads = t;
          a.output = base + ".out" + std::to_string(t) + "." + format;
          std::vector<Figures> runs;
          for (int k = 0; k < (t == 8 ? 1 : reps); ++k) runs.push_back(run_child(self, "apply", a));
          Figures ap = median_of(runs);
          outs[t] = a.output;
          std::cerr << "  " << form << " n=" << n << " " << format << " " << t << "T: load " << fmt(ap["load_ms"])
                    << " rewrite " << fmt(ap["rewrite_ms"]) << " save " << fmt(ap["save_ms"]) << " ms\n";
          if (t == 8) continue;
          if (t == 2) at[format][n] = ap;
          t_apply += apply_row(form, format, t, ap) + "\n";
        }
        if (compare) t_mlir += mlir_row(self, a, a.input, base + ".mlir", base + ".cli.graph", reps);
        if (compare) outs[0] = base + ".cli.graph";
        bool same = true;
        for (auto& [t, path] : outs) same = same && same_bytes(outs.begin()->second, path);
        t_same += "| " + form + " | " + std::to_string(n) + " | " + format + " | " + std::to_string(outs.size()) +
                  " | " + (same ? "identical" : "**DIFFER**") + " |\n";
        for (auto& [t, path] : outs) std::filesystem::remove(path);
        std::filesystem::remove(a.input);
        std::filesystem::remove(base + ".mlir");
      }
    }
    for (auto& [format, by_n] : at) {
      if (by_n.size() < 2) continue;
      Figures& lo = by_n.begin()->second;
      Figures& hi = by_n.rbegin()->second;
      auto ratio = [&](const char* key) { return fmt((hi[key] / hi["nodes"]) / (lo[key] / lo["nodes"]), 2) + "x"; };
      t_scale += "| " + form + " | " + format + " | " + fmt(lo["nodes"], 0) + " -> " + fmt(hi["nodes"], 0) + " | " +
                 ratio("load_ms") + " (" + ratio("load_cpu_ms") + ") | " + ratio("rewrite_ms") + " (" +
                 ratio("rewrite_cpu_ms") + ") | " + ratio("save_ms") + " | " + ratio("peak_bytes") + " |\n";
    }
  }
  std::cout << "Machine: " << cpu_model() << ", " << std::thread::hardware_concurrency()
            << " cores; load average at the end " << fmt(load_average(), 2) << "\n\n"
            << "`apply` on fan-out graphs, in-process phases (wall ms, CPU ms in brackets), median of "
            << (plan.reps > 0 ? std::to_string(plan.reps) : std::string("3 (1 above 10^6 nodes)"))
            << " fresh processes:\n\n"
            << "| form | nodes | format | threads | load ms (CPU) | rewrite ms (CPU) | save ms | total ms | load CPU "
               "ns/node | rewrite CPU ns/node | graph B/node | peak B/node |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
            << t_apply;
  if (!t_scale.empty())
    std::cout << "\nPer node, largest size over smallest, 2 threads (wall, CPU in brackets):\n\n"
              << "| form | format | nodes | load | rewrite | save | peak memory |\n|---|---|---|---|---|---|---|\n"
              << t_scale;
  std::cout << "\nOutputs at 1, 2 and 8 threads (and of the CLI runs):\n\n"
            << "| form | nodes | format | outputs | bytes |\n|---|---|---|---|---|\n"
            << t_same;
  if (!t_mlir.empty())
    std::cout << "\nThe chains program as an MLIR module: `mlir-opt-14 --canonicalize -mlir-timing` next to "
                 "`graphfuse apply --threads T` on the .graph, whole processes (ms; process: wall / CPU):\n\n"
              << "| nodes | mlir-opt parse / canonicalize | mlir-opt process | mlir-opt peak MB | graphfuse 1T load / "
                 "rewrite | 1T process | 2T load / rewrite | 2T process | graphfuse 2T peak MB | canonicalize / "
                 "rewrite (1T / 2T) | mlir-opt / apply process (1T / 2T) |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
              << t_mlir;
  return 0;
}

}  // namespace graphfuse::bench
