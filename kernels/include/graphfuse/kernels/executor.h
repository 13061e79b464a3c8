// Running a Graph with a kernel set: inputs, constants, outputs, timing, comparison.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/kernels/kernel.h"

namespace graphfuse::kernels {

/// How run_graph executes.
struct ExecOptions {
  KernelSet set = KernelSet::Reference;
  /// Worker threads for oneDNN (OpenMP) and TBB together; 0 = all cores. Applied to both
  /// runtimes for the duration of the call, so they never oversubscribe each other.
  int threads = 0;
  /// Seed for random data of Const nodes that carry no tensor data. Each such node's
  /// data depends only on (seed, node id, shape), so an original and a rewritten graph
  /// that keep a constant's id get the same numbers.
  std::uint64_t seed = 0;
  /// Shape for a graph input whose type gives none; empty = guess from its consumers
  /// (conv channel count, matmul K) with spatial size 16 and batch 1.
  std::vector<std::int64_t> default_input_shape;
  /// Fast set only: keep 4-D activations NHWC between the kernels that take it (ONNX
  /// convolutions, pooling, elementwise ops), converting only where a kernel needs NCHW.
  /// Results are always returned NCHW.
  bool channels_last = true;
  /// Fast set only: a node that alone reads the only output of another runs inside that
  /// node's kernel where the kernel supports it (BatchNormalization -> Relu; Conv -> Relu,
  /// LeakyRelu, HardSigmoid, HardSwish; Concat -> BatchNormalization [-> Relu];
  /// kernels/executor/epilogue_fusion.h). The node observer then sees one call for them
  /// all, and the fused nodes take 0 ms.
  bool fuse_epilogues = true;
};

/// Called after each kernel with the node, the call its kernel got (inputs in the
/// layouts given in call.layouts) and its outputs (4-D outputs in call.out_layout).
using NodeObserver = std::function<void(const Node&, const KernelCall&, const std::vector<Tensor>&)>;

/// Per-run measurements, filled when a RunProfile is passed to run_graph.
struct RunProfile {
  struct NodeTime {
    NodeId node;
    std::string op;
    double ms;
  };
  std::vector<NodeTime> nodes;  ///< in execution order (Input/Const nodes excluded)
  double total_ms = 0;
};

/// The shapes random inputs get: from each input's ValueType (unknown dims -> 1), else
/// options.default_input_shape, else a guess from the input's consumers.
std::vector<std::vector<std::int64_t>> input_shapes(const Graph& g, const ExecOptions& options = {});

/// Deterministic inputs, one per graph input in g.inputs() order: float32 uniform in
/// [-1, 1), except inputs typed integer or bool, which get random 0s and 1s of their type
/// (valid indices into any table of two or more rows, and valid masks). Input k's data
/// depends only on (seed, input id, shape).
std::vector<Tensor> make_random_inputs(const Graph& g, std::uint64_t seed,
                                       const ExecOptions& options = {});

/// A graph prepared for repeated runs: kernels looked up, constants materialized (seeded
/// random data for Const nodes without data), so that fast kernels can keep their
/// reordered weights between runs. The graph must outlive the Executor.
class Executor {
 public:
  /// Throws Error "no kernel for op 'X' (node 'id')" for the first op the kernel set
  /// lacks, and for a Const without data whose shape is unknown.
  Executor(const Graph& g, ExecOptions options);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// One run; same contract as run_graph.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunProfile* profile = nullptr);
  const ExecOptions& options() const { return options_; }
  /// For tests and tools that look at individual kernel calls (tests/isa, model_bench's
  /// stem timing): `f` sees every kernel call of later runs; empty = none.
  void set_node_observer(NodeObserver f) { observer_ = std::move(f); }

 private:
  struct Plan;
  void fuse_epilogues(const Graph& g, const KernelRegistry& reg);
  bool norm_epilogue(const Node& bn, Epilogue& e) const;
  const Graph& g_;
  ExecOptions options_;
  NodeObserver observer_;
  std::unique_ptr<Plan> plan_;
};

/// Runs g in topological order. `inputs` are matched to g.inputs() by position; pass {}
/// for seeded random inputs. Returns one tensor per graph output (g.outputs() order).
/// Throws Error "node 'id' (Op): message" for a failing node, "no kernel for op 'X'
/// (node 'id')" for an op the kernel set lacks.
std::vector<Tensor> run_graph(const Graph& g, const std::vector<Tensor>& inputs,
                              const ExecOptions& options, RunProfile* profile = nullptr);

/// Median latencies of repeated runs, for `graphfuse run --bench N`.
struct BenchReport {
  int runs = 0;
  double median_ms = 0;  ///< whole graph
  double min_ms = 0;
  /// Per op type: median over runs of the summed time of that op's nodes, and the node
  /// count; sorted by time, largest first.
  struct OpTime {
    std::string op;
    int count;
    double median_ms;
  };
  std::vector<OpTime> ops;
};

/// What a bench run's total is timed by: wall time, or the process's CPU time (on a
/// shared machine wall time also measures how often the scheduler runs us; with one
/// thread, CPU time measures what the kernels cost). Per-op times are always wall time.
enum class BenchClock { Wall, Cpu };

/// Runs g `runs` times (after one warm-up run) on the same inputs and summarizes.
BenchReport bench_graph(const Graph& g, const std::vector<Tensor>& inputs,
                        const ExecOptions& options, int runs, BenchClock clock = BenchClock::Wall);

/// The same for several graphs on the same inputs, their runs interleaved (run r of every
/// graph before run r + 1 of any, the first graph switching each time), so that background
/// load hits all alike. One report per graph, in order.
std::vector<BenchReport> bench_graphs(const std::vector<const Graph*>& graphs, const std::vector<Tensor>& inputs,
                                      const ExecOptions& options, int runs, BenchClock clock = BenchClock::Wall);

/// Difference between one actual and one expected tensor.
struct TensorDiff {
  std::string name;     ///< the graph output's value name
  double max_abs = 0;   ///< max |a - e|
  /// max |a - e| / max(|e|, atol): elementwise relative error, floored so values near
  /// zero are judged by atol instead.
  double max_rel = 0;
  /// max |e| over finite elements: the output's scale, so max_abs / max_ref says how
  /// large the error is next to the output (max_rel judges each element on its own, and
  /// is large wherever a float32 result cancels to near zero).
  double max_ref = 0;
  bool shape_ok = true;
  /// shapes equal, no NaN mismatch, every |a-e| <= atol + rtol*|e|, and (when max_ref >=
  /// atol) max_abs <= rtol * max_ref: atol must not excuse an error that is large for the
  /// whole output.
  bool pass = true;
};

/// Compares outputs pairwise (float32; integer tensors compare exactly).
/// names may be empty; otherwise names[i] labels pair i.
std::vector<TensorDiff> compare_outputs(const std::vector<Tensor>& actual,
                                        const std::vector<Tensor>& expected, double rtol,
                                        double atol, const std::vector<std::string>& names = {});

/// Runs `original` and `rewritten` on the same seeded inputs (make_random_inputs of the
/// original with options.seed) and compares their outputs pairwise, labelled with the
/// original's output value names: what `graphfuse verify` and rule tests with
/// `verify: true` report. Constants without data get the same random data in both graphs
/// as long as the rewrite kept their ids. Throws Error when the graphs differ in their
/// number of inputs or outputs.
std::vector<TensorDiff> verify_rewrite(const Graph& original, const Graph& rewritten,
                                       const ExecOptions& options, double rtol = 1e-4,
                                       double atol = 1e-5);

/// Thread-count scope: sets TBB's global parallelism and OpenMP's thread count (used by
/// oneDNN) to the same number, restoring OpenMP's on exit. 0 = hardware concurrency.
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;
  int threads() const { return threads_; }

 private:
  int threads_;
  int previous_omp_;
  void* tbb_control_;
};

}  // namespace graphfuse::kernels
