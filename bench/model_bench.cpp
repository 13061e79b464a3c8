// Whole-model latency with the executor: median of N runs, per op type, before and after rules.
//
//   build-kernels/bench/model_bench MODEL.onnx [--rules R.yaml ...] [--runs N] [--threads T]
//                                   [--kernels fast|reference] [--seed S] [--nchw]
//
// --nchw turns off the executor's channels-last mode (every convolution then reorders
// into and out of the layout oneDNN picks), to compare oneDNN's blocked kernels.
//
// With --rules the model is rewritten first (the rewrite library), and both graphs are
// timed in the same process; outputs are compared so a faster graph is also a right one.
// The first line names oneDNN's instruction set; a `stem` line times the first
// convolution alone (per FLOP, to compare ISAs: ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512
// machine).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "graphfuse/io.h"
#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/isa.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace gk = graphfuse::kernels;

namespace {
void print_report(const char* label, const gk::BenchReport& r, std::size_t nodes) {
  std::printf("%-8s median %8.3f ms  min %8.3f ms  (%zu nodes, %d runs)\n", label, r.median_ms, r.min_ms,
              nodes, r.runs);
  for (const auto& op : r.ops)
    std::printf("         %-36s x%-3d %8.3f ms\n", op.op.c_str(), op.count, op.median_ms);
}

// The first convolution of g in execution order (a CNN's stem): its median time over
// `runs` runs and its FLOP count (2 x multiply-adds).
void print_stem(const char* label, const graphfuse::Graph& g, const std::vector<graphfuse::Tensor>& inputs,
                const gk::ExecOptions& opt, int runs) {
  std::string id, op;
  double flops = 0;
  gk::Executor ex(g, opt);
  ex.set_node_observer([&](const graphfuse::Node& n, const gk::KernelCall& c, const std::vector<graphfuse::Tensor>& outs) {
    if (!id.empty() || (c.op != "Conv" && c.op != "com.microsoft.FusedConv") || outs.empty() || !c.input(1)) return;
    const auto& w = c.input(1)->shape;  // O x I/group x kh x kw
    const auto& y = outs[0].shape;      // N x O x OH x OW
    if (w.size() != 4 || y.size() != 4) return;
    id = n.id;
    op = std::string(c.op);
    flops = 2.0 * static_cast<double>(y[0] * y[1] * y[2] * y[3] * w[1] * w[2] * w[3]);
  });
  ex.run(inputs);  // warm-up, and finds the stem
  if (id.empty()) return;
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    gk::RunProfile prof;
    ex.run(inputs, &prof);
    for (const auto& nt : prof.nodes)
      if (g.node(nt.node).id == id) ms.push_back(nt.ms);
  }
  std::sort(ms.begin(), ms.end());
  const double med = ms[ms.size() / 2];
  std::printf("stem     %-6s node '%s' (%s): median %.3f ms, %.1f MFLOP, %.1f GFLOP/s\n", label, id.c_str(), op.c_str(),
              med, flops / 1e6, flops / 1e6 / med);
}

void print_fallbacks() {
  for (const auto& f : gk::reference_fallbacks())
    std::printf("warning  node '%s' (%s): oneDNN %s %s runs its reference implementation %s\n", f.node.c_str(),
                f.op.c_str(), f.primitive.primitive.c_str(), f.primitive.shape.c_str(), f.primitive.impl.c_str());
}
}  // namespace

int main(int argc, char** argv) {
  std::string model;
  std::vector<std::string> rules;
  int runs = 20;
  gk::ExecOptions opt{gk::KernelSet::Fast, 1, 0, {}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--rules") rules.push_back(next());
    else if (a == "--runs") runs = std::stoi(next());
    else if (a == "--threads") opt.threads = std::stoi(next());
    else if (a == "--kernels") opt.set = gk::kernel_set_from_name(next());
    else if (a == "--seed") opt.seed = std::stoull(next());
    else if (a == "--nchw") opt.channels_last = false;
    else if (model.empty() && a[0] != '-') model = a;
    else {
      std::fprintf(stderr, "usage: model_bench MODEL [--rules R]... [--runs N] [--threads T] [--kernels K] [--seed S] [--nchw]\n");
      return 2;
    }
  }
  try {
    const graphfuse::Graph g = graphfuse::load_graph(model);
    // Rules load first, so a bad rule file fails before minutes of timing.
    const graphfuse::RuleSet ruleset = graphfuse::load_rule_files(rules);
    const auto inputs = gk::make_random_inputs(g, opt.seed, opt);
    std::printf("%s: %s kernels, %d thread(s), oneDNN ISA %s\n", model.c_str(),
                std::string(gk::kernel_set_name(opt.set)).c_str(), opt.threads, gk::onednn_isa().c_str());
    const auto before = gk::bench_graph(g, inputs, opt, runs);
    print_report("before", before, g.size());
    print_stem("before", g, inputs, opt, runs);
    if (rules.empty()) {
      print_fallbacks();
      return 0;
    }
    graphfuse::Graph fused = g;
    const auto report = graphfuse::rewrite_graph(fused, ruleset);
    std::printf("rewrite  %zu -> %zu nodes in %d round(s)\n", report.nodes_before, report.nodes_after, report.rounds);
    const auto after = gk::bench_graph(fused, inputs, opt, runs);
    print_report("after", after, fused.size());
    print_stem("after", fused, inputs, opt, runs);
    const auto diffs = gk::compare_outputs(gk::run_graph(fused, inputs, opt), gk::run_graph(g, inputs, opt), 1e-4, 1e-5);
    for (const auto& d : diffs)
      std::printf("check    %s max_abs %.3g max_rel %.3g %s\n", d.name.c_str(), d.max_abs, d.max_rel,
                  d.pass ? "PASS" : "FAIL");
    std::printf("speedup  %.2fx (median before / after)\n", before.median_ms / after.median_ms);
    print_fallbacks();
  } catch (const graphfuse::Error& e) {
    std::fprintf(stderr, "model_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
