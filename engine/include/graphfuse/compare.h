// Structural comparison of graphs, for rule-file tests and round-trip checks.
#pragma once

#include <string>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse {

/// One difference between an expected and an actual graph, with the two nodes (when
/// there are nodes to show) written as `.graph` text lines.
struct GraphDifference {
  std::string what;           ///< e.g. "node 'relu': attribute 'activation': expected \"ReLU\", got \"Relu\""
  std::string expected_line;  ///< the expected node in .graph text, or ""
  std::string actual_line;    ///< the actual node in .graph text, or ""
};

struct GraphComparison {
  std::vector<GraphDifference> differences;
  bool equal() const { return differences.empty(); }
  /// A diff a person can read: each difference with `- expected` / `+ actual` lines.
  std::string render() const;
};

/// Compares graphs structurally: nodes are paired by walking back from the graph
/// outputs (in order) through inputs (in order), so ops, attributes, input order and
/// outputs must agree. Node ids are compared too, except where the expected id starts
/// with '_' (a placeholder: generated ids of new nodes need not be spelled out).
/// Attributes whose names start with '_' (provenance such as `_rule`) are compared only
/// when the expected node has them. Nodes no output depends on are paired by id.
GraphComparison compare_graphs(const Graph& expected, const Graph& actual);

}  // namespace graphfuse
