// One measurement of the scale benchmark, run in a process of its own so that peak
// memory and allocator state belong to that measurement alone.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace graphfuse::bench {

/// What a case needs; unused fields are ignored.
struct CaseArgs {
  std::vector<std::string> rules;  ///< rule files
  std::size_t nodes = 0;           ///< generated graph size
  std::string shape = "cnn";       ///< generated graph shape: cnn or wide (GraphShape)
  int threads = 1;
  int reps = 1;                    ///< repetitions; timings are the best of them
  std::string input, output;       ///< graph files (format by extension)
};

/// Named figures a case reports (milliseconds, counts, bytes).
using Figures = std::map<std::string, double>;

/// Generates a graph and rewrites it, load and save excluded: rewrite, match and apply
/// times, rounds, rewrites, and the peak memory of generating plus rewriting.
Figures case_rewrite(const CaseArgs& a);
/// Generates a graph of a.nodes nodes and saves it to a.output.
Figures case_generate(const CaseArgs& a);
/// The whole `apply`: loads a.input, rewrites, saves a.output; each phase timed, plus
/// the process's peak memory.
Figures case_apply(const CaseArgs& a);
/// The VF2 baseline against the matcher, rule by rule, on a generated graph; throws
/// when the two disagree on the set of candidate roots.
Figures case_vf2(const CaseArgs& a);

}  // namespace graphfuse::bench
