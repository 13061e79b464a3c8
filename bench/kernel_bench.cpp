// Fused vs unfused Conv+Bias+ReLU, fast and reference kernels, 1 and 2 threads: GFLOP/s.
//
//   build-kernels/bench/kernel_bench [--seconds S] [--threads 1,2] [--no-reference] [--nchw]
//
// Unfused = the three kernels the executor runs for Conv2D -> BiasAdd -> ReLU, each
// writing its own buffer; fused = one call computing act(conv + b). Fused and unfused
// runs alternate so background load hits both alike; medians are reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/kernels/conv.h"
#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/isa.h"

namespace bench {
double fma_peak_gflops(double seconds);
double cpu_mhz();
}  // namespace bench

namespace {

namespace gk = graphfuse::kernels;
using Clock = std::chrono::steady_clock;

struct Shape {
  const char* name;
  const char* what;
  std::int64_t h, w, cin, cout, k, group, stride;
};

const Shape kShapes[] = {
    {"a", "3x3 conv 64->64 @56x56", 56, 56, 64, 64, 3, 1, 1},
    {"b", "1x1 conv 64->256 @112x112", 112, 112, 64, 256, 1, 1, 1},
    {"c", "depthwise 3x3 144ch @56x56", 56, 56, 144, 144, 3, 144, 1},
    // resnet18's stem: 3 input channels, which oneDNN below AVX-512 runs on its reference
    // loops in some layouts (kernels/fast/conv.cpp tries others).
    {"s", "7x7/2 conv 3->64 @224x224", 224, 224, 3, 64, 7, 1, 2},
};

std::vector<float> random_buffer(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Timing {
  double a_med, b_med, a_best, b_best;  // ms
};

// Alternates a and b until both ran `min_reps` times and `seconds` passed.
Timing time_pair(const std::function<void()>& a, const std::function<void()>& b, double seconds,
                 int min_reps) {
  a();
  b();  // warm-up: primitive creation, weight reorder, page faults
  std::vector<double> ta, tb;
  const auto start = Clock::now();
  while (static_cast<int>(ta.size()) < min_reps ||
         std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    auto t0 = Clock::now();
    a();
    auto t1 = Clock::now();
    b();
    auto t2 = Clock::now();
    ta.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    tb.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    if (ta.size() >= 200) break;
  }
  return {median(ta), median(tb), *std::min_element(ta.begin(), ta.end()),
          *std::min_element(tb.begin(), tb.end())};
}

// The best of a few short FMA-loop measurements on one thread: other jobs on the machine
// only ever lower it, so the maximum over the whole run is the machine's capability.
double sample_peak() {
  gk::ThreadScope one(1);
  double best = 0;
  for (int i = 0; i < 5; ++i) best = std::max(best, bench::fma_peak_gflops(0.03));
  return best;
}

struct Options {
  double seconds = 1.0;
  std::vector<int> threads{1, 2};
  bool reference = true;
  bool nchw = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) o.seconds = std::stod(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) {
      o.threads.clear();
      std::string s = argv[++i];
      for (std::size_t p = 0; p < s.size();) {
        const std::size_t q = s.find(',', p);
        o.threads.push_back(std::stoi(s.substr(p, q - p)));
        p = q == std::string::npos ? s.size() : q + 1;
      }
    } else if (a == "--no-reference") o.reference = false;
    else if (a == "--nchw") o.nchw = true;
    else {
      std::fprintf(stderr, "usage: kernel_bench [--seconds S] [--threads 1,2] [--no-reference] [--nchw]\n");
      std::exit(2);
    }
  }
  return o;
}

// The seed pattern as a graph: x -> Conv2D(w) -> BiasAdd(b) -> ReLU, or the fused node.
graphfuse::Graph seed_graph(const Shape& s, bool fused) {
  using graphfuse::OpType;
  graphfuse::Graph g;
  graphfuse::ValueType t;
  t.dtype = graphfuse::DType::Float32;
  t.shape = {1, s.h, s.w, s.cin};
  t.shape_known = true;
  auto x = g.add_input("x", t);
  graphfuse::Attributes wa, ba, ca;
  wa.set("shape", std::vector<std::int64_t>{s.k, s.k, s.cin / s.group, s.cout});
  ba.set("shape", std::vector<std::int64_t>{s.cout});
  ca.set("strides", std::vector<std::int64_t>{s.stride, s.stride});
  ca.set("padding", std::string("SAME"));
  auto w = g.add_node("w", OpType::intern("Const"), {}, wa);
  auto b = g.add_node("b", OpType::intern("Const"), {}, ba);
  if (fused) {
    ca.set("activation", std::string("ReLU"));
    g.add_output({g.add_node("relu", OpType::intern("FusedConv2D_BiasAdd_ReLU"), {{x, 0}, {w, 0}, {b, 0}}, ca), 0});
  } else {
    auto c = g.add_node("conv", OpType::intern("Conv2D"), {{x, 0}, {w, 0}}, ca);
    auto bb = g.add_node("bias", OpType::intern("BiasAdd"), {{c, 0}, {b, 0}});
    g.add_output({g.add_node("relu", OpType::intern("ReLU"), {{bb, 0}}), 0});
  }
  return g;
}

// Graph level: what `graphfuse run` sees, output allocation included.
void executor_table(const Options& opt) {
  std::printf("\nexecutor, fast kernels (graphs Conv2D -> BiasAdd -> ReLU vs FusedConv2D_BiasAdd_ReLU)\n");
  std::printf("%-5s %3s | %9s | %9s | %6s\n", "shape", "thr", "fused ms", "unfus. ms", "ratio");
  for (const Shape& s : kShapes) {
    const graphfuse::Graph gu = seed_graph(s, false), gf = seed_graph(s, true);
    for (int threads : opt.threads) {
      gk::ExecOptions eo{gk::KernelSet::Fast, threads, 1, {}};
      gk::Executor eu(gu, eo), ef(gf, eo);
      const auto in = gk::make_random_inputs(gu, 1);
      const Timing t = time_pair([&] { ef.run(in); }, [&] { eu.run(in); }, opt.seconds, 10);
      std::printf("%-5s %3d | %9.3f | %9.3f | %5.2fx\n", s.name, threads, t.a_med, t.b_med, t.b_med / t.a_med);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  const double mhz = bench::cpu_mhz();
  double peak1 = sample_peak();
  struct ConvBest {
    std::string label;
    int threads;
    double gflops;
  };
  std::vector<ConvBest> bests;
  std::printf("oneDNN ISA: %s\n", gk::onednn_isa().c_str());
  std::printf("medians of alternating runs; GFLOP/s count the convolution's 2*MACs for every column\n");
  std::printf("%-5s %-28s %-9s %3s | %9s %8s | %9s %8s | %6s | %s\n", "shape", "", "kernels", "thr",
              "fused ms", "GFLOP/s", "unfus. ms", "GFLOP/s", "ratio", "conv alone: median / best GFLOP/s");
  for (const Shape& s : kShapes) {
    gk::ConvParams p;
    p.layout = opt.nchw ? gk::ConvLayout::NchwOihw : gk::ConvLayout::NhwcHwio;
    p.h = s.h, p.w = s.w, p.c_in = s.cin, p.c_out = s.cout, p.kh = p.kw = s.k, p.group = s.group;
    p.stride_h = p.stride_w = s.stride;
    p.pad_t = p.pad_l = p.pad_b = p.pad_r = s.k / 2;  // SAME at stride 1, torchvision's stem at 2
    p.finalize();
    gk::ConvParams fused = p, plain = p;
    fused.has_bias = true;
    fused.act = gk::parse_activation("Relu");
    const auto nx = static_cast<std::size_t>(p.n * p.c_in * p.h * p.w);
    const auto nw = static_cast<std::size_t>(p.c_out * (p.c_in / p.group) * p.kh * p.kw);
    const auto ny = static_cast<std::size_t>(p.n * p.c_out * p.out_h * p.out_w);
    const auto x = random_buffer(nx, 1);
    // The weights are owned like a graph constant's, so fast kernels cache their reorder.
    auto w = std::make_shared<const std::vector<float>>(random_buffer(nw, 2));
    const auto b = random_buffer(static_cast<std::size_t>(p.c_out), 3);
    std::vector<float> y(ny), y1(ny), y2(ny), y3(ny);
    // Outer/inner split of the output for BiasAdd: channel-last or channel-first.
    const std::int64_t outer = opt.nchw ? p.n : p.n * p.out_h * p.out_w;
    const std::int64_t inner = opt.nchw ? p.out_h * p.out_w : 1;
    for (gk::KernelSet set : {gk::KernelSet::Fast, gk::KernelSet::Reference}) {
      if (set == gk::KernelSet::Reference && !opt.reference) continue;
      for (int threads : opt.threads) {
        // The reference kernels are single-threaded: one row is enough.
        if (set == gk::KernelSet::Reference && threads != opt.threads.front()) continue;
        gk::ThreadScope scope(threads);
        const bool f = set == gk::KernelSet::Fast;
        auto conv = f ? [](const gk::ConvParams& q, const float* a, const float* wt, const float* bb, float* out,
                           const std::shared_ptr<const void>& owner) { gk::fast::conv2d(q, a, wt, bb, nullptr, out, owner); }
                      : [](const gk::ConvParams& q, const float* a, const float* wt, const float* bb, float* out,
                           const std::shared_ptr<const void>&) { gk::reference::conv2d(q, a, wt, bb, nullptr, out); };
        auto run_fused = [&] { conv(fused, x.data(), w->data(), b.data(), y.data(), w); };
        auto run_unfused = [&] {
          conv(plain, x.data(), w->data(), nullptr, y1.data(), w);
          (f ? gk::fast::bias_add : gk::reference::bias_add)(y1.data(), b.data(), y2.data(), outer, p.c_out, inner);
          (f ? gk::fast::activation : gk::reference::activation)(fused.act, y2.data(), y3.data(),
                                                                   static_cast<std::int64_t>(ny));
        };
        const Timing t = time_pair(run_fused, run_unfused, f ? opt.seconds : 0.0, f ? 10 : 3);
        // The convolution alone (no epilogue), alternated with the fused run.
        const Timing tc = time_pair([&] { conv(plain, x.data(), w->data(), nullptr, y1.data(), w); },
                                    run_fused, f ? opt.seconds / 2 : 0.0, f ? 10 : 1);
        if (f) peak1 = std::max(peak1, sample_peak());
        const double gf = p.flops() / 1e6;  // MFLOP / ms = GFLOP/s
        std::printf("%-5s %-28s %-9s %3d | %9.3f %8.1f | %9.3f %8.1f | %5.2fx | %8.1f / %.1f\n", s.name, s.what,
                    std::string(gk::kernel_set_name(set)).c_str(), threads, t.a_med, gf / t.a_med, t.b_med,
                    gf / t.b_med, t.b_med / t.a_med, gf / tc.a_med, gf / tc.a_best);
        if (f) bests.push_back({std::string(s.name) + " " + s.what, threads, gf / tc.a_best});
        std::fflush(stdout);
        // Keep the optimizer honest: results must agree.
        if (std::memcmp(y.data(), y3.data(), ny * sizeof(float)) != 0) {
          double md = 0;
          for (std::size_t i = 0; i < ny; ++i) md = std::max(md, static_cast<double>(std::abs(y[i] - y3[i])));
          if (md > 1e-3) std::printf("      warning: fused and unfused differ by %g\n", md);
        }
      }
    }
  }
  std::printf("\npeak fp32, one core: %.1f GFLOP/s = best AVX-512 FMA loop (12 independent chains, "
              "2 FMA ports x 16 lanes x 2 flops) sampled throughout the run, i.e. %.2f GHz effective;\n"
              "/proc/cpuinfo's nominal %.0f MHz would give %.1f GFLOP/s.\n",
              peak1, peak1 / 64, mhz, mhz * 64 / 1000);
  for (const auto& bc : bests)
    std::printf("  fast conv %-34s %d thr: best %6.1f GFLOP/s = %3.0f%% of %d x one-core peak\n",
                bc.label.c_str(), bc.threads, bc.gflops, 100.0 * bc.gflops / (peak1 * bc.threads), bc.threads);
  executor_table(opt);
  return 0;
}
