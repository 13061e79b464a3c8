// Timing summaries (run --bench) and output comparison (verify).
#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>

#include "core/util.h"
#include "graphfuse/kernels/executor.h"

namespace graphfuse::kernels {

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// One graph's executor and what its runs measured.
struct Bench {
  explicit Bench(const Graph& g, const ExecOptions& o) : ex(g, o) {}
  Executor ex;
  std::vector<double> totals;
  std::map<std::string, std::vector<double>> per_op;
  std::map<std::string, int> counts;

  void run(const std::vector<Tensor>& in, BenchClock clock) {
    RunProfile prof;
    const double c0 = clock == BenchClock::Cpu ? cpu_ms() : 0.0;
    ex.run(in, &prof);
    totals.push_back(clock == BenchClock::Cpu ? cpu_ms() - c0 : prof.total_ms);
    std::map<std::string, double> sums;
    std::map<std::string, int> cnt;
    for (const auto& nt : prof.nodes) {
      sums[nt.op] += nt.ms;
      ++cnt[nt.op];
    }
    for (const auto& [op, ms] : sums) per_op[op].push_back(ms);
    counts = cnt;
  }

  BenchReport report(int runs) const {
    BenchReport rep;
    rep.runs = runs;
    rep.median_ms = median(totals);
    rep.min_ms = *std::min_element(totals.begin(), totals.end());
    for (const auto& [op, v] : per_op) rep.ops.push_back({op, counts.at(op), median(v)});
    std::sort(rep.ops.begin(), rep.ops.end(), [](const auto& a, const auto& b) { return a.median_ms > b.median_ms; });
    return rep;
  }
};
}  // namespace

std::vector<BenchReport> bench_graphs(const std::vector<const Graph*>& graphs, const std::vector<Tensor>& inputs,
                                      const ExecOptions& options, int runs, BenchClock clock) {
  check(runs > 0, "bench needs at least one run");
  check(!graphs.empty(), "bench needs a graph");
  const std::vector<Tensor> in = inputs.empty() ? make_random_inputs(*graphs[0], options.seed, options) : inputs;
  std::vector<std::unique_ptr<Bench>> benches;
  for (const Graph* g : graphs) {
    benches.push_back(std::make_unique<Bench>(*g, options));
    benches.back()->ex.run(in);  // warm-up: builds primitives, reorders constant weights
  }
  const std::size_t n = benches.size();
  for (int r = 0; r < runs; ++r)
    for (std::size_t k = 0; k < n; ++k) benches[(k + static_cast<std::size_t>(r)) % n]->run(in, clock);
  std::vector<BenchReport> out;
  for (const auto& b : benches) out.push_back(b->report(runs));
  return out;
}

BenchReport bench_graph(const Graph& g, const std::vector<Tensor>& inputs, const ExecOptions& options, int runs,
                        BenchClock clock) {
  return bench_graphs({&g}, inputs, options, runs, clock).front();
}

std::vector<TensorDiff> compare_outputs(const std::vector<Tensor>& actual,
                                        const std::vector<Tensor>& expected, double rtol,
                                        double atol, const std::vector<std::string>& names) {
  check(actual.size() == expected.size(), "comparing " + std::to_string(actual.size()) +
                                              " outputs with " + std::to_string(expected.size()));
  std::vector<TensorDiff> out;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const Tensor& a = actual[i];
    const Tensor& e = expected[i];
    TensorDiff d;
    d.name = i < names.size() ? names[i] : "output " + std::to_string(i);
    if (a.shape != e.shape || a.dtype != e.dtype || !a.has_data() || !e.has_data()) {
      d.shape_ok = a.shape == e.shape;
      d.pass = false;
      d.max_abs = d.max_rel = INFINITY;
      out.push_back(d);
      continue;
    }
    const std::int64_t n = a.num_elements();
    const double floor = std::max(atol, 1e-30);
    for (std::int64_t k = 0; k < n; ++k) {
      double av, ev;
      if (a.dtype == DType::Float32) {
        av = a.as<float>()[k];
        ev = e.as<float>()[k];
      } else if (a.dtype == DType::Int64) {
        av = static_cast<double>(a.as<std::int64_t>()[k]);
        ev = static_cast<double>(e.as<std::int64_t>()[k]);
      } else {
        av = static_cast<unsigned char>((*a.data)[k]);  // byte-wise for other types
        ev = static_cast<unsigned char>((*e.data)[k]);
      }
      if (std::isnan(av) || std::isnan(ev)) {
        // NaN matches only NaN; anything else is an unbounded error.
        if (std::isnan(av) != std::isnan(ev)) d.pass = false, d.max_abs = d.max_rel = INFINITY;
        continue;
      }
      const double diff = std::fabs(av - ev);
      if (std::isinf(av) || std::isinf(ev)) {
        if (av != ev) d.pass = false, d.max_abs = d.max_rel = INFINITY;
        continue;
      }
      d.max_abs = std::max(d.max_abs, diff);
      d.max_ref = std::max(d.max_ref, std::fabs(ev));
      d.max_rel = std::max(d.max_rel, diff / std::max(std::fabs(ev), floor));
      if (diff > atol + rtol * std::fabs(ev)) d.pass = false;
    }
    // Norm-wise: the largest error next to the output's own scale. atol lets an element that
    // cancels to near zero be judged absolutely, but must not excuse an error that is large
    // for the whole output (an output of magnitude ~atol); below atol, atol alone decides.
    if (d.max_ref >= atol && d.max_abs > rtol * d.max_ref) d.pass = false;
    out.push_back(d);
  }
  return out;
}

std::vector<TensorDiff> verify_rewrite(const Graph& original, const Graph& rewritten,
                                       const ExecOptions& options, double rtol, double atol) {
  check(original.inputs().size() == rewritten.inputs().size(),
        "the rewritten graph has " + std::to_string(rewritten.inputs().size()) + " inputs, the original " +
            std::to_string(original.inputs().size()));
  check(original.outputs().size() == rewritten.outputs().size(),
        "the rewritten graph has " + std::to_string(rewritten.outputs().size()) + " outputs, the original " +
            std::to_string(original.outputs().size()));
  const auto inputs = make_random_inputs(original, options.seed, options);
  const auto expected = run_graph(original, inputs, options);
  const auto actual = run_graph(rewritten, inputs, options);
  std::vector<std::string> names;
  for (const ValueRef& o : original.outputs()) names.push_back(original.value_name(o));
  return compare_outputs(actual, expected, rtol, atol, names);
}

}  // namespace graphfuse::kernels
