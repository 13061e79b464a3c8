// `graphfuse calibrate`: measure this machine with the fast kernels (per-node overhead,
// bandwidth, peak FLOP/s, efficiency of conv / matmul / eltwise by size) and write a
// target profile the cost model reads (docs/cost-model.md).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "graphfuse/io.h"
#include "graphfuse/target.h"
#ifdef GRAPHFUSE_HAVE_KERNELS
#include "graphfuse/kernels/executor.h"
#endif

namespace graphfuse::cli {

namespace {

struct CalibrateOptions {
  std::string output;
  std::string base = "onednn-cpu";
  std::string name = "calibrated";
  int threads = 1;
  double budget_s = 60;
};

#ifdef GRAPHFUSE_HAVE_KERNELS
namespace gk = graphfuse::kernels;
using Clock = std::chrono::steady_clock;

ValueType f32(std::vector<std::int64_t> shape) { return ValueType{DType::Float32, std::move(shape), true, {}}; }

NodeId constant(Graph& g, const std::string& id, std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> data(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 7919) % 97) / 97.0f - 0.5f;
  Attributes a;
  a.set("value", Tensor::from_floats(shape, data));
  NodeId c = g.add_node(id, OpType::intern("Const"), {}, std::move(a));
  g.output_infos(c)[0].type = f32(shape);
  return c;
}

/// Process CPU time in microseconds: on a shared machine, wall time measures the
/// scheduler as much as the kernels; single-threaded runs' CPU time does not.
double cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

class Timer {
 public:
  Timer(int threads, double budget_s) : threads_(threads), budget_s_(budget_s) {}
  /// Median time of one run of g in microseconds (CPU time with one thread, wall time
  /// otherwise) over repeated runs: at least 5, about `share` seconds, after a warm-up.
  double median_us(const Graph& g, double share = 0.3) {
    gk::ExecOptions exec;
    exec.set = gk::KernelSet::Fast;
    exec.threads = threads_;
    gk::Executor ex(g, exec);
    const auto inputs = gk::make_random_inputs(g, 1, exec);
    ex.run(inputs);
    auto once = [&] {
      double c0 = cpu_us();
      auto w0 = Clock::now();
      ex.run(inputs);
      return threads_ == 1 ? cpu_us() - c0 : std::chrono::duration<double, std::micro>(Clock::now() - w0).count();
    };
    double first = std::max(once(), 1.0);
    int runs = std::clamp(static_cast<int>(share * 1e6 / first), 5, 400);
    if (elapsed() > budget_s_) runs = 5;
    std::vector<double> t;
    for (int r = 0; r < runs; ++r) t.push_back(once());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

 private:
  int threads_;
  double budget_s_;
  Clock::time_point t0_ = Clock::now();
};

// k chained Relus on a 16-element tensor: almost pure per-node cost.
double overhead_us(Timer& t) {
  const int k = 64;
  Graph g;
  NodeId x = g.add_input("x", f32({1, 16}));
  ValueRef v{x, 0};
  for (int i = 0; i < k; ++i) v = ValueRef{g.add_node("r" + std::to_string(i), OpType::intern("Relu"), {v}), 0};
  g.add_output(v);
  return t.median_us(g) / k;
}

// One pass of `op` over n floats (a Relu: the plain elementwise curve; a Sigmoid: "math").
double eltwise_us(Timer& t, const char* op, std::int64_t n, double* bytes) {
  Graph g;
  NodeId x = g.add_input("x", f32({n}));
  NodeId r = g.add_node("r", OpType::intern(op), {ValueRef{x, 0}});
  g.add_output(ValueRef{r, 0});
  *bytes = 8.0 * static_cast<double>(n);
  return t.median_us(g);
}

// A Transpose of an n x n matrix.
double transpose_us(Timer& t, std::int64_t n, double* bytes) {
  Graph g;
  NodeId x = g.add_input("x", f32({n, n}));
  Attributes a;
  a.set("perm", std::vector<std::int64_t>{1, 0});
  NodeId r = g.add_node("t", OpType::intern("Transpose"), {ValueRef{x, 0}}, std::move(a));
  g.add_output(ValueRef{r, 0});
  *bytes = 8.0 * static_cast<double>(n) * static_cast<double>(n);
  return t.median_us(g);
}

double matmul_us(Timer& t, std::int64_t m, double* flops) {
  Graph g;
  NodeId a = g.add_input("a", f32({m, m}));
  NodeId w = constant(g, "w", {m, m});
  NodeId mm = g.add_node("mm", OpType::intern("MatMul"), {ValueRef{a, 0}, ValueRef{w, 0}});
  g.add_output(ValueRef{mm, 0});
  *flops = 2.0 * static_cast<double>(m) * m * m;
  return t.median_us(g);
}

// A c -> c convolution over hw x hw, k x k; depthwise (group = c) when `depthwise`.
double conv_us(Timer& t, std::int64_t c, std::int64_t hw, std::int64_t k, bool depthwise, double* flops) {
  Graph g;
  NodeId x = g.add_input("x", f32({1, c, hw, hw}));
  NodeId w = constant(g, "w", {c, depthwise ? 1 : c, k, k});
  Attributes a;
  a.set("pads", std::vector<std::int64_t>{k / 2, k / 2, k / 2, k / 2});
  a.set("kernel_shape", std::vector<std::int64_t>{k, k});
  if (depthwise) a.set("group", c);
  NodeId cv = g.add_node("conv", OpType::intern("Conv"), {ValueRef{x, 0}, ValueRef{w, 0}}, std::move(a));
  g.add_output(ValueRef{cv, 0});
  *flops = 2.0 * static_cast<double>(c) * (depthwise ? 1 : c) * k * k * hw * hw;
  return t.median_us(g);
}

std::string uptime() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return "load average " + a + ", " + b + ", " + c;
}

int run_calibrate(const CalibrateOptions& o) {
  TargetProfile t = load_target(o.base);
  t.name = o.name;
  t.doc = "this machine, measured by graphfuse calibrate with the fast kernels (ops of " + o.base + ")";
  Timer timer(o.threads, o.budget_s);
  std::cout << "calibrating with the fast kernels (" << uptime() << ")\n";
  MachineFigures& m = t.machine;
  m.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::cout << "  timing: " << (o.threads == 1 ? "process CPU time, one thread" : "wall time") << ", medians\n";
  m.kernel_overhead_us = overhead_us(timer);
  std::printf("  per-node overhead: %.2f us\n", m.kernel_overhead_us);

  auto net = [&](double us) { return std::max(us - m.kernel_overhead_us, 0.05); };
  // Memory-bound kinds: bytes moved per microsecond at sizes from cache-resident to DRAM.
  // The largest Relu pass gives the bandwidth; every curve is relative to it (above 1
  // where a pass fits in cache, below for kinds that move bytes more slowly).
  auto memory_curve = [&](const char* what, auto&& run, std::vector<std::int64_t> sizes) {
    std::vector<std::pair<double, double>> pts;  // bytes, bytes/us
    for (std::int64_t n : sizes) {
      double bytes = 0, us = run(n, &bytes);
      pts.push_back({bytes, bytes / net(us)});
      std::printf("  %-9s %9.0f KB: %9.1f us  %7.2f GB/s\n", what, bytes / 1024, us, bytes / net(us) / 1e3);
    }
    return pts;
  };
  const std::vector<std::int64_t> elt_sizes = {std::int64_t{1} << 10, std::int64_t{1} << 14, std::int64_t{1} << 17,
                                               std::int64_t{1} << 20, std::int64_t{1} << 22, std::int64_t{1} << 24};
  auto elt = memory_curve("eltwise", [&](std::int64_t n, double* b) { return eltwise_us(timer, "Relu", n, b); }, elt_sizes);
  auto math = memory_curve("math", [&](std::int64_t n, double* b) { return eltwise_us(timer, "Sigmoid", n, b); },
                           {std::int64_t{1} << 10, std::int64_t{1} << 14, std::int64_t{1} << 17, std::int64_t{1} << 20,
                            std::int64_t{1} << 22});
  auto tr = memory_curve("transpose", [&](std::int64_t n, double* b) { return transpose_us(timer, n, b); },
                         {32, 128, 512, 1024, 2048});
  m.bandwidth_gbs = elt.back().second / 1e3;
  auto memory = [&](const std::vector<std::pair<double, double>>& pts) {
    std::vector<EfficiencyPoint> out;
    for (auto [bytes, rate] : pts) out.push_back({bytes, std::clamp(rate / elt.back().second, 0.01, 4.0)});
    return out;
  };
  m.efficiency["eltwise"] = memory(elt);
  m.efficiency["math"] = memory(math);
  m.efficiency["transpose"] = memory(tr);

  // Compute-bound kinds: FLOPs per microsecond by size, relative to the best seen (peak).
  std::vector<std::pair<double, double>> mm, cv, pw, dw;  // flops, flops/us
  for (std::int64_t n : {32, 64, 128, 256, 512, 1024}) {
    double flops = 0, us = matmul_us(timer, n, &flops);
    mm.push_back({flops, flops / net(us)});
    std::printf("  matmul %4lld:        %9.1f us  %7.2f GFLOP/s\n", static_cast<long long>(n), us, flops / net(us) / 1e3);
  }
  struct ConvShape {
    std::int64_t c, hw, k;
    bool depthwise;
    std::vector<std::pair<double, double>>* curve;
  };
  const ConvShape shapes[] = {{16, 28, 3, false, &cv},  {32, 56, 3, false, &cv},  {64, 28, 3, false, &cv},
                              {128, 14, 3, false, &cv}, {256, 14, 3, false, &cv}, {256, 28, 3, false, &cv},
                              {16, 28, 1, false, &pw},  {32, 56, 1, false, &pw},  {64, 56, 1, false, &pw},
                              {128, 28, 1, false, &pw}, {256, 14, 1, false, &pw}, {512, 14, 1, false, &pw},
                              {32, 28, 3, true, &dw},   {144, 56, 3, true, &dw},  {384, 14, 3, true, &dw},
                              {960, 7, 3, true, &dw},   {256, 56, 3, true, &dw}};
  for (const ConvShape& s : shapes) {
    double flops = 0, us = conv_us(timer, s.c, s.hw, s.k, s.depthwise, &flops);
    s.curve->push_back({flops, flops / net(us)});
    std::printf("  conv %3lldx%-3lld k%lld%s: %9.1f us  %7.2f GFLOP/s\n", static_cast<long long>(s.c),
                static_cast<long long>(s.hw), static_cast<long long>(s.k), s.depthwise ? " dw" : "   ", us,
                flops / net(us) / 1e3);
  }
  double peak = 0;
  for (const auto* pts : {&mm, &cv, &pw})
    for (auto [f, r] : *pts) peak = std::max(peak, r);
  m.peak_gflops = {{DType::Float32, peak / 1e3}};
  auto curve = [&](std::vector<std::pair<double, double>> pts) {
    std::sort(pts.begin(), pts.end());
    std::vector<EfficiencyPoint> out;
    for (auto [f, r] : pts)
      if (out.empty() || f > out.back().size) out.push_back({f, std::clamp(r / peak, 0.001, 1.0)});
    return out;
  };
  m.efficiency["matmul"] = curve(mm);
  m.efficiency["conv"] = curve(cv);
  m.efficiency["conv1x1"] = curve(pw);
  m.efficiency["dwconv"] = curve(dw);
  std::printf("peak %.1f GFLOP/s float32, bandwidth %.2f GB/s, overhead %.2f us, %d threads; %.1f s (%s)\n",
              peak / 1e3, m.bandwidth_gbs, m.kernel_overhead_us, m.threads, timer.elapsed(), uptime().c_str());
  std::string yaml = "# Written by `graphfuse calibrate` (" + uptime() + "); see docs/cost-model.md.\n" + target_yaml(t);
  if (o.output.empty()) std::cout << yaml;
  else {
    write_file_atomic(o.output, yaml);
    std::cout << "wrote " << o.output << "\n";
  }
  return 0;
}
#else
int run_calibrate(const CalibrateOptions&) { throw Error("graphfuse was built without the kernels; calibrate needs them"); }
#endif

}  // namespace

void register_calibrate(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure this machine with the fast kernels and write a target profile for --target");
  cmd->add_option("-o,--output", opt->output, "Profile file to write (default: print it)");
  cmd->add_option("--base", opt->base, "Profile whose op list the calibrated one keeps (name or file)")
      ->capture_default_str();
  cmd->add_option("--name", opt->name, "The written profile's target name")->capture_default_str();
  cmd->add_option("--threads", opt->threads,
                  "Kernel threads to measure with (0 = all cores); with 1 (the default) runs are timed in CPU time")
      ->check(at_least(0))
      ->capture_default_str();
  cmd->callback([opt, &run] { run = [opt] { return run_calibrate(*opt); }; });
}

}  // namespace graphfuse::cli
