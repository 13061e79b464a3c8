// One measurement of the scale benchmark, run in a process of its own so that peak
// memory and allocator state belong to that measurement alone.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace graphfuse {
class Graph;
}

namespace graphfuse::bench {

/// What a case needs; unused fields are ignored.
struct CaseArgs {
  std::vector<std::string> rules;  ///< rule files
  std::size_t nodes = 0;           ///< generated graph size
  std::string shape = "cnn";       ///< generated graph shape: cnn or wide (GraphShape)
  int threads = 1;
  int reps = 1;                    ///< repetitions; timings are the best of them
  std::string input, output;       ///< graph files (format by extension)
  std::string form;                ///< a fan-out form (chains, weights, shapes); empty: the CNN-like graph
  std::string mlir;                ///< generate: also write the graph as an MLIR module here
  std::string target;              ///< rewrite: a target profile (NAME or FILE) gating the rewrites
  bool shapes = false;             ///< rewrite: give every value a float32 NHWC type first (give_shapes)
  bool in_order = false;           ///< rewrite/apply: apply every round in order (RewriteOptions::parallel_apply_from)
};

/// Named figures a case reports (milliseconds, counts, bytes).
using Figures = std::map<std::string, double>;

/// Generates a graph and rewrites it, load and save excluded: rewrite, match and apply
/// times, rounds, rewrites, and the peak memory of generating plus rewriting.
Figures case_rewrite(const CaseArgs& a);
/// Gives every value of a generated CNN-like graph a float32 type, [1, 14, 14, C] with C
/// the channels its convolution or matmul weight gives (a constant keeps its `shape`), so
/// that a cost model has every shape to estimate from; the generator writes none.
void give_shapes(Graph& g);
/// Generates a graph of a.nodes nodes and saves it to a.output.
Figures case_generate(const CaseArgs& a);
/// The whole `apply`: loads a.input, rewrites, saves a.output; each phase timed, plus
/// the process's peak memory.
Figures case_apply(const CaseArgs& a);
/// mlir-opt from Debian's mlir-14-tools: $MLIR_OPT, /usr/bin/mlir-opt-14 or LLVM 14's own;
/// empty when there is none (the MLIR comparison is then skipped).
std::string find_mlir_opt();
/// mlir-opt --canonicalize -mlir-timing on a.input (an MLIR module): its parse,
/// Canonicalizer and output wall times, and the whole process's wall time, CPU time and
/// peak memory. Throws, saying how to install it, when Debian's mlir-14-tools is missing.
Figures case_mlir(const CaseArgs& a);
/// `graphfuse apply` as a user runs it (the CLI next to the benchmark, a.rules, a.threads,
/// a.input to a.output): its load / rewrite / save times and the same process figures.
Figures case_cli(const CaseArgs& a);
/// Writes a graph of Const, Input, Mul, Add and Xor nodes (int64 scalars, the fan-out
/// `chains` form) as an MLIR 14 module of `arith` ops, node for node in id order.
void write_mlir(const Graph& g, const std::string& path);

/// The VF2 baseline against the matcher, rule by rule, on a generated graph; throws
/// when the two disagree on the set of candidate roots.
Figures case_vf2(const CaseArgs& a);

}  // namespace graphfuse::bench
