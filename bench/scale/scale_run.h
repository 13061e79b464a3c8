// What scale_bench's drivers share: the plan from the command line, running a case in a
// fresh child process, and turning figures into table cells.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "scale_cases.h"

namespace graphfuse::bench {

struct Plan {
  std::vector<std::size_t> sizes{10'000, 100'000, 1'000'000, 10'000'000};
  std::vector<int> threads{1, 2};
  std::vector<std::string> formats{"gfb", "json", "yaml"};
  std::size_t slow_max = 100'000;  // largest graph for the slow (yaml-cpp, X3) formats: yaml, graph
  std::vector<std::size_t> vf2_sizes{10'000, 100'000};
  std::vector<std::string> rules;
  std::string dir = "/tmp/graphfuse-scale";
  std::string shape = "cnn";
  std::vector<std::string> fanout;  // fan-out forms: run those instead of the CNN-like graph
  bool sizes_given = false;
  bool formats_given = false;
  int reps = 0;                      // --fanout: runs per measurement (0: 3 up to 10^6 nodes, 1 above)
};

/// Runs `self --case NAME ...` (a fresh process) and returns the figures of its RESULT line.
Figures run_child(const std::string& self, const std::string& name, const CaseArgs& a);
/// Median of each figure over several fresh processes (a case that runs once per
/// process, like apply, whose peak memory must not carry over), with the spread of
/// total_ms as total_ms_min / total_ms_max.
Figures median_of(const std::vector<Figures>& runs);
std::string fmt(double x, int digits = 1);
/// "median (min-max)" of a figure median_of() gave a spread for.
std::string spread(Figures& f, const std::string& key, int digits = 1);
std::string cpu_model();

/// The fan-out benchmark (issue 18, fanout_bench.cpp).
int run_fanout(const std::string& self, const Plan& plan);

}  // namespace graphfuse::bench
