// Internal to io: the YAML/JSON graph schema (`nodes:`, `inputs:`, `outputs:`, `properties:`;
// see docs/graph-formats.md) read from DocTree values into a GraphBuilder, written once for
// both formats: the YAML reader gives it a whole document, the JSON reader one node at a time.
#pragma once

#include <string>
#include <vector>

#include "graph_build.h"
#include "json_tree.h"
#include "yaml_values.h"

namespace graphfuse::textio {

class GraphDocReader {
 public:
  explicit GraphDocReader(const YamlSource& src) : src_(src) {}

  /// The whole document: checks the top-level mapping, reads every node, builds.
  Graph read(const DocRef& root);

  /// One element of `nodes`, checked and handed to the builder.
  void add_node(const DocRef& n);
  /// A node the caller read and checked itself, handed to the builder.
  void add_node(PendingNode p);
  /// Room for `n` nodes.
  void reserve(std::size_t n) { builder_.reserve(n); }
  /// After the nodes: the graph inputs and outputs (each may be absent), the build, then
  /// the properties. Inputs and outputs come after the nodes whatever the order in the file
  /// (a listed input that is no node becomes an Input node).
  Graph finish(const DocRef* inputs, const DocRef* outputs, const DocRef* properties);

 private:
  PendingNode node(const DocRef& n);
  template <class What>
  const DocRef& list(const DocRef& n, const What& what);
  template <class What>
  std::string name(const DocRef& n, const What& what);
  template <class What>
  PendingRef value_ref(const DocRef& n, const What& what, bool may_be_absent = false);

  const YamlSource& src_;
  GraphBuilder builder_;
  std::vector<std::string> input_ops_;  // Input nodes in file order, for a missing `inputs`
};

}  // namespace graphfuse::textio

namespace graphfuse::textio {

/// Runs `read`. The builder's errors know only positions; one at a position in this file
/// gets the offending line too, as the readers' own errors have.
template <class Read>
Graph with_source_line(const YamlSource& src, Read&& read) {
  try {
    return read();
  } catch (const Error& e) {
    if (!e.source_line().empty() || e.loc().file != src.file) throw;
    src.fail(e.loc(), e.message());
  }
}

}  // namespace graphfuse::textio
