// cost_bench: how well a target profile's cost model predicts fusion on this machine.
// For each candidate (a small graph and the rule that fuses it) it measures the unfused and
// the greedily fused graph with the fast kernels (interleaved runs, medians) and compares
// with the model's verdict: decision agreement where the measured times differ by more than
// 5%, and whether the predicted time ratio is within 25% of the measured one.
//
//   cost_bench --target FILE [--threads N] [--reps N] [--filter SUBSTRING] [--models DIR]
//
// Then whole graphs: greedy fusion against fusion with the target, on the shipped examples
// where greedy fusion hurts and on the ONNX models of --models DIR.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "graphfuse/cost.h"
#include "graphfuse/io.h"
#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/fold.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

using namespace graphfuse;
namespace gk = graphfuse::kernels;

namespace {

using I = std::int64_t;
using Shape = std::vector<I>;

ValueType f32(Shape s) { return ValueType{DType::Float32, std::move(s), true, {}}; }

struct Builder {
  Graph g;
  int next = 0;
  NodeId input(Shape s) {
    NodeId x = g.add_input("x" + std::to_string(next++), f32(s));
    return x;
  }
  NodeId constant(Shape s) {
    I n = 1;
    for (I d : s) n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 101) / 101.0f - 0.5f;
    Attributes a;
    a.set("value", Tensor::from_floats(s, v));
    NodeId c = g.add_node("c" + std::to_string(next++), OpType::intern("Const"), {}, std::move(a));
    g.output_infos(c)[0].type = f32(s);
    return c;
  }
  NodeId op(const std::string& op, std::vector<NodeId> in, Shape out, Attributes a = {}) {
    std::vector<ValueRef> refs;
    for (NodeId n : in) refs.push_back({n, 0});
    NodeId n = g.add_node("n" + std::to_string(next++), OpType::intern(op), refs, std::move(a));
    g.output_infos(n)[0].type = f32(out);
    return n;
  }
  NodeId conv(NodeId x, I cin, I cout, I hw, I k, I group, bool bias = true) {
    Attributes a;
    a.set("kernel_shape", std::vector<I>{k, k});
    a.set("pads", std::vector<I>{k / 2, k / 2, k / 2, k / 2});
    if (group > 1) a.set("group", group);
    std::vector<NodeId> in{x, constant({cout, cin / group, k, k})};
    if (bias) in.push_back(constant({cout}));
    return op("Conv", in, {1, cout, hw, hw}, std::move(a));
  }
  NodeId act(const std::string& kind, NodeId x, Shape s) {
    if (kind == "Clip") return op("Clip", {x, constant({}), constant({})}, s);
    return op(kind, {x}, s);
  }
  void out(NodeId n) { g.add_output({n, 0}); }
};

struct Case {
  std::string family, name;
  std::function<Graph()> build;
  const RuleSet* rules;
  std::vector<std::string> only;
};

// Wraps the target gate: records each verdict and lets every legal match through, so one
// rewrite gives both the greedily fused graph and the model's prediction for it.
class Recorder final : public RewriteGate {
 public:
  explicit Recorder(std::shared_ptr<const RewriteGate> inner) : inner_(std::move(inner)) {}
  GateVerdict decide(const Graph& g, const GateCandidate& c) const override {
    GateVerdict v = inner_->decide(g, c);
    std::lock_guard<std::mutex> lock(m_);
    saving_ms += v.saving;
    applies = applies && v.apply;
    no_kernel = no_kernel || v.summary.rfind("no_kernel", 0) == 0;
    detail = v.detail;
    return GateVerdict{true, v.saving, {}, v.detail};
  }
  mutable double saving_ms = 0;
  mutable bool applies = true, no_kernel = false;
  mutable std::string detail;

 private:
  std::shared_ptr<const RewriteGate> inner_;
  mutable std::mutex m_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// Process CPU time in ms: with one kernel thread it is what the kernels cost, whatever else
// the (shared) machine is doing; wall time would measure the scheduler too.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Interleaved runs of both graphs; medians in ms (CPU time with one thread, else wall).
std::pair<double, double> measure(const Graph& a, const Graph& b, int threads, int reps) {
  gk::ExecOptions o;
  o.set = gk::KernelSet::Fast;
  o.threads = threads;
  auto inputs = gk::make_random_inputs(a, 1, o);
  gk::Executor ea(a, o), eb(b, o);
  ea.run(inputs);
  eb.run(inputs);
  using C = std::chrono::steady_clock;
  std::vector<double> ta, tb;
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < 2; ++k) {
      gk::Executor& e = (r + k) % 2 ? eb : ea;
      auto t0 = C::now();
      double c0 = cpu_ms();
      e.run(inputs);
      double ms = threads == 1 ? cpu_ms() - c0 : std::chrono::duration<double, std::milli>(C::now() - t0).count();
      ((r + k) % 2 ? tb : ta).push_back(ms);
    }
  }
  return {median(ta), median(tb)};
}

std::vector<Case> cases(const RuleSet& conv, const RuleSet& matmul, const RuleSet& dup, const RuleSet& horiz) {
  std::vector<Case> out;
  struct CS {
    I cin, cout, hw, k, group;
  };
  // Convolution shapes of the shared models: resnet18's 3x3 stages, mobilenet_v2's
  // pointwise and depthwise convolutions, the stem.
  const std::vector<CS> dense = {{64, 64, 56, 3, 1},  {128, 128, 28, 3, 1}, {256, 256, 14, 3, 1}, {512, 512, 7, 3, 1},
                                 {32, 16, 112, 1, 1}, {96, 24, 56, 1, 1},   {3, 32, 112, 3, 1}};
  auto label = [](const CS& s) {
    return std::to_string(s.cin) + "->" + std::to_string(s.cout) + " " + std::to_string(s.hw) + "^2 k" + std::to_string(s.k) +
           (s.group > 1 ? " dw" : "");
  };
  // x -> Conv -> activation, fused by rules/onnx/conv.yaml.
  auto conv_act = [&](const char* family, const CS& s, std::string a) {
    out.push_back({family, label(s) + " " + a, [s, a] {
                     Builder b;
                     NodeId x = b.input({1, s.cin, s.hw, s.hw});
                     b.out(b.act(a, b.conv(x, s.cin, s.cout, s.hw, s.k, s.group), {1, s.cout, s.hw, s.hw}));
                     return b.g;
                   }, &conv, {}});
  };
  for (const CS& s : dense)
    for (const char* a : {"Relu", "Clip"}) conv_act("conv+act", s, a);
  for (const CS& s : {dense[0], dense[4]}) conv_act("conv+act", s, "Sigmoid");
  const std::vector<CS> depthwise = {{144, 144, 56, 3, 144}, {384, 384, 14, 3, 384}, {960, 960, 7, 3, 960}};
  for (const CS& s : depthwise)
    for (const char* a : {"Relu", "Clip"}) conv_act("depthwise+act", s, a);
  for (const CS& s : {dense[0], dense[1], dense[2], dense[3], dense[4]})
    out.push_back({"residual add", label(s), [s] {
                     Builder b;
                     NodeId x = b.input({1, s.cin, s.hw, s.hw});
                     NodeId z = b.input({1, s.cout, s.hw, s.hw});
                     Shape o{1, s.cout, s.hw, s.hw};
                     b.out(b.op("Add", {b.conv(x, s.cin, s.cout, s.hw, s.k, s.group), z}, o));
                     return b.g;
                   }, &conv, {"onnx_conv_add_residual"}});
  // Attention-style products: MatMul(a, Transpose(b)) with b computed (not a weight).
  for (auto [m, k, n] : std::vector<std::array<I, 3>>{{128, 64, 128}, {128, 512, 512}, {64, 64, 64}, {512, 64, 512}})
    out.push_back({"matmul+transpose", std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n), [m, k, n] {
                     Builder b;
                     NodeId a = b.input({m, k});
                     NodeId bt = b.input({n, k});
                     Attributes p;
                     p.set("perm", std::vector<I>{1, 0});
                     NodeId t = b.op("Transpose", {bt}, {k, n}, std::move(p));
                     b.out(b.op("MatMul", {a, t}, {m, n}));
                     return b.g;
                   }, &matmul, {}});
  // Duplicate on external use: the convolution has a second consumer, so fusing its Relu
  // computes it twice.
  const std::vector<CS> dups = {dense[0], dense[2], dense[4], {8, 8, 16, 1, 1}, {16, 16, 32, 1, 1}, {4, 4, 8, 3, 1}};
  for (const CS& s : dups)
    out.push_back({"duplicate", label(s), [s] {
                     Builder b;
                     NodeId x = b.input({1, s.cin, s.hw, s.hw});
                     Shape o{1, s.cout, s.hw, s.hw};
                     NodeId c = b.conv(x, s.cin, s.cout, s.hw, s.k, s.group);
                     b.out(b.act("Relu", c, o));
                     b.out(b.op("Sigmoid", {c}, o));
                     return b.g;
                   }, &dup, {}});
  // Horizontal: two NHWC Conv2Ds of one input merged into one and split by channel.
  struct HS {
    I hw, c, c1, c2, k;
  };
  for (const HS& s : std::vector<HS>{{56, 64, 64, 64, 1}, {28, 128, 32, 32, 1}, {14, 256, 256, 256, 3},
                                     {7, 512, 64, 64, 1}, {112, 16, 8, 8, 1}, {56, 32, 16, 16, 3}})
    out.push_back({"horizontal", std::to_string(s.c) + "->" + std::to_string(s.c1) + "+" + std::to_string(s.c2) + " " +
                                     std::to_string(s.hw) + "^2 k" + std::to_string(s.k),
                   [s] {
                     Builder b;
                     NodeId x = b.input({1, s.hw, s.hw, s.c});
                     Attributes a;
                     a.set("strides", std::vector<I>{1, 1, 1, 1});
                     a.set("padding", std::string("SAME"));
                     NodeId c1 = b.op("Conv2D", {x, b.constant({s.k, s.k, s.c, s.c1})}, {1, s.hw, s.hw, s.c1}, a);
                     NodeId c2 = b.op("Conv2D", {x, b.constant({s.k, s.k, s.c, s.c2})}, {1, s.hw, s.hw, s.c2}, a);
                     b.out(b.op("Relu", {c1}, {1, s.hw, s.hw, s.c1}));
                     b.out(b.op("Tanh", {c2}, {1, s.hw, s.hw, s.c2}));
                     return b.g;
                   },
                   &horiz, {"tf_conv2d_horizontal"}});
  return out;
}

// Whole graphs: greedy fusion (every legal match) against fusion gated by the target, both
// rewritten and folded as `graphfuse run` does (--fold auto), timed interleaved.
struct WholeGraph {
  std::string name;
  Graph g;
  const RuleSet* rules;
  std::vector<std::string> only;
};

void whole_graphs(const std::vector<WholeGraph>& graphs, const std::shared_ptr<const CostModel>& model, int threads,
                  int reps) {
  std::printf("\nwhole graphs: greedy fusion vs --target %s (rewrite + fold auto; %d interleaved runs, medians)\n",
              model->target().name.c_str(), reps);
  std::printf("%-30s %9s %9s %8s %8s  %s\n", "graph", "greedy", "target", "t/g", "declined", "");
  gk::FoldOptions fold;
  fold.scope = gk::FoldScope::RuleCreated;
  for (const WholeGraph& w : graphs) {
    // Constants without data get their seeded data first, so that folding can evaluate
    // what the rules compute from them (as verify does).
    Graph base = w.g;
    gk::materialize_constants(base, 1);
    Graph greedy = base, gated = base;
    RewriteOptions o;
    o.only_rules = w.only;
    o.threads = 1;
    gk::ReferenceFolder folder(fold);
    rewrite_and_fold(greedy, *w.rules, o, &folder);
    o.gate = make_target_gate(model);
    RewriteReport rep = rewrite_and_fold(gated, *w.rules, o, &folder);
    std::size_t declined = 0;
    for (const RuleStats& s : rep.rules)
      for (const auto& [why, k] : s.declined) declined += k;
    // The same graph both ways (the target declined nothing that mattered): one timing.
    if (write_graph_binary(greedy) == write_graph_binary(gated)) {
      auto [tg, tt] = measure(greedy, greedy, threads, reps);
      std::printf("%-30s %7.3fms %7.3fms %8s %8zu  the same graph\n", w.name.c_str(), tg, tt, "1", declined);
      continue;
    }
    auto [tg, tt] = measure(greedy, gated, threads, reps);
    std::printf("%-30s %7.3fms %7.3fms %8.3f %8zu  %s\n", w.name.c_str(), tg, tt, tt / tg, declined,
                tt / tg > 1.03 ? "<- over 3% slower" : "");
  }
  std::printf("load %s\n", loadavg().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string target, filter, models, src = GRAPHFUSE_SOURCE_DIR;
  int threads = 1, reps = 30;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--target") target = next();
    else if (a == "--threads") threads = std::stoi(next());
    else if (a == "--reps") reps = std::stoi(next());
    else if (a == "--filter") filter = next();
    else if (a == "--models") models = next();
    else {
      std::fprintf(stderr, "usage: cost_bench --target FILE [--threads N] [--reps N] [--filter TEXT] [--models DIR]\n");
      return 2;
    }
  }
  if (target.empty()) target = "onednn-cpu";
  try {
    auto model = std::make_shared<const CostModel>(load_target(target));
    RuleSet conv = load_rule_files({src + "/rules/onnx/conv.yaml"});
    RuleSet matmul = load_rule_files({src + "/rules/onnx/matmul.yaml"});
    RuleSet dup = load_rule_files({src + "/examples/cost/greedy_hurts_rules.yaml"});
    RuleSet horiz = load_rule_files({src + "/rules/tf/horizontal.yaml"});
    auto all = cases(conv, matmul, dup, horiz);
    std::printf("cost_bench: target %s (%s), fast kernels, %d thread(s), %d interleaved runs each, medians of %s; load %s\n",
                model->target().name.c_str(), target.c_str(), threads, reps, threads == 1 ? "process CPU time" : "wall time",
                loadavg().c_str());
    std::printf("%-17s %-28s %9s %9s %7s %7s %6s %6s %5s\n", "family", "case", "unfused", "fused", "meas", "pred",
                "model", "truth", "ratio");
    int n = 0, decided = 0, agree = 0, close = 0;
    for (const Case& c : all) {
      if (!filter.empty() && (c.family + " " + c.name).find(filter) == std::string::npos) continue;
      Graph g = c.build();
      Graph f = g;
      auto rec = std::make_shared<Recorder>(make_target_gate(model));
      RewriteOptions o;
      o.gate = rec;
      o.only_rules = c.only;
      o.threads = 1;
      RewriteReport rep = rewrite_graph(f, *c.rules, o);
      // As `run` does (--fold auto): what the rule computed from constants (merged weights)
      // is folded before the graph runs; the model counts such nodes as free.
      gk::FoldOptions fold;
      fold.scope = gk::FoldScope::RuleCreated;
      gk::fold_constants(f, fold);
      std::size_t applied = 0;
      for (const auto& s : rep.rules) applied += s.applied;
      if (applied == 0) {
        std::printf("%-17s %-28s  (no rule fired: skipped)\n", c.family.c_str(), c.name.c_str());
        continue;
      }
      auto [tu, tf] = measure(g, f, threads, reps);
      double total = model->graph_us(g) / 1000.0;
      double pred = (total - rec->saving_ms) / total;
      double meas = tf / tu;
      bool model_fuses = rec->applies, truth_fuses = meas < 1.0;
      bool decisive = std::fabs(meas - 1.0) > 0.05;
      bool within = std::fabs(pred / meas - 1.0) <= 0.25;
      ++n;
      close += within;
      if (decisive) {
        ++decided;
        agree += model_fuses == truth_fuses;
      }
      std::printf("%-17s %-28s %7.3fms %7.3fms %7.3f %7.3f %6s %6s %5s%s\n", c.family.c_str(), c.name.c_str(), tu, tf, meas,
                  pred, model_fuses ? "fuse" : "keep", decisive ? (truth_fuses ? "fuse" : "keep") : "~", within ? "ok" : "off",
                  decisive && model_fuses != truth_fuses ? "  <- disagrees" : "");
    }
    std::printf("\n%d candidates; decisions: %d of %d agree where measured times differ by > 5%% (%.0f%%); "
                "predicted ratio within 25%% of measured: %d of %d (%.0f%%); load %s\n",
                n, agree, decided, decided ? 100.0 * agree / decided : 0.0, close, n, n ? 100.0 * close / n : 0.0,
                loadavg().c_str());

    // The shipped graph where greedy fusion hurts, a horizontal one, and the ONNX models of
    // --models DIR (../shared/models) with rules/onnx.
    std::vector<WholeGraph> graphs;
    graphs.push_back({"examples/cost/greedy_hurts", load_graph(src + "/examples/cost/greedy_hurts.yaml"), &dup, {}});
    graphs.push_back(
        {"examples/cost/horizontal_hurts", load_graph(src + "/examples/cost/horizontal_hurts.yaml"), &horiz, {"tf_conv2d_horizontal"}});
    RuleSet onnx = load_rule_files({src + "/rules/onnx"});
    if (!models.empty()) {
      std::vector<std::string> files;
      for (const auto& e : std::filesystem::directory_iterator(models))
        if (e.path().extension() == ".onnx" && e.path().string().find(".raw.") == std::string::npos)
          files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      for (const std::string& f : files)
        graphs.push_back({std::filesystem::path(f).filename().string(), load_graph(f), &onnx, {}});
    }
    whole_graphs(graphs, model, threads, reps);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.pretty().c_str());
    return 1;
  }
  return 0;
}
