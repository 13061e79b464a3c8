// Internal to io: the YAML graph readings on the schema reader (graph_schema_read.h): a
// whole document's DocTree (the diagnostic reading, loud), and the streamed readings that
// get one element of `nodes` at a time (yaml_graph_events.h): into GraphBuilder (loud), or
// straight into the graph (quiet).
#pragma once

#include <optional>
#include <string>

#include "graph_build.h"
#include "graph_in_order.h"
#include "graph_node_sinks.h"
#include "graph_schema_read.h"
#include "json_tree.h"
#include "yaml_values.h"

namespace graphfuse::textio {

/// The graph of the whole document `root` (a null DocRef: an empty one), or the Error of
/// its first problem.
Graph read_graph_doc(const DocRef& root, const YamlSource& src);

/// Nodes one at a time into GraphBuilder; throws the Error of the first problem.
class GraphDocReader {
 public:
  explicit GraphDocReader(const YamlSource& src);
  /// One element of `nodes`, checked and handed to the builder.
  void add_node(const DocRef& n);
  void reserve(std::size_t n) { sink_.reserve(n); }
  /// After the nodes: the graph inputs and outputs (each may be absent), the build, then the
  /// properties.
  Graph finish(const DocRef* inputs, const DocRef* outputs, const DocRef* properties);

 private:
  const YamlSource& src_;
  NodeReader reader_;
  BuilderSink sink_;
  NodeBatch batch_;
};

/// Nodes one at a time straight into the graph, for files in producers-first order. False
/// (nothing) where GraphBuilder could build or report anything else; nodes with `outputs`
/// are left to GraphBuilder.
class InOrderDocReader {
 public:
  explicit InOrderDocReader(const YamlSource& src);
  bool add_node(const DocRef& n);
  std::optional<Graph> finish(const DocRef* inputs, const DocRef* outputs, const DocRef* properties);

 private:
  const YamlSource& src_;
  NodeReader reader_;
  InOrderBuilder builder_;
  InOrderSink sink_;
  NodeBatch batch_;
};

/// The top-level values a streamed reading found, as read_top gives them.
TopParts top_parts(const DocRef* inputs, const DocRef* outputs, const DocRef* properties);

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
