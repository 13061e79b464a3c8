// The HTML report of one rewrite (`graphfuse report`): before/after pictures, what each rule did,
// op histograms, and optionally the numerical check and latencies. One self-contained file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"

namespace graphfuse::cli {

/// Optional parts of a report, filled by the command when asked for.
struct ReportExtras {
  struct OutputCheck {
    std::string name;
    double max_abs = 0, max_ref = 0;
    bool pass = false;
  };
  std::optional<std::vector<OutputCheck>> verify;  ///< --verify
  std::string verify_settings;                      ///< "reference kernels, seed 0, rtol ..., atol ..."
  std::optional<std::pair<double, double>> bench_ms;  ///< --bench: median before, after
  std::string bench_settings;
  std::size_t folded = 0;
};

/// Graphs above this many nodes are not drawn whole: the pictures show the fused regions
/// (each node a rule made with its neighbours), at most kMaxDrawnRegions of them.
inline constexpr std::size_t kMaxDrawnNodes = 1500;
inline constexpr std::size_t kMaxDrawnRegions = 120;

/// The page. `input` names the graph in the title; `rules` names the rule files. Runs
/// Graphviz's `dot -Tsvg` for the pictures (throws Error when it cannot).
std::string render_report(const std::string& input, const std::vector<std::string>& rules, const Graph& before,
                          const Graph& after, const RewriteReport& report, const ReportExtras& extras);

}  // namespace graphfuse::cli
