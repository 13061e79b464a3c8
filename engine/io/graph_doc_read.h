// Internal to io: the YAML/JSON graph schema (`nodes:`, `inputs:`, `outputs:`, `properties:`;
// see docs/graph-formats.md) read from DocTree values into a GraphBuilder, written once for
// both formats: the YAML reader gives it a whole document, the JSON reader one node at a time.
#pragma once

#include <string>
#include <vector>

#include "graph_build.h"
#include "graph_in_order.h"
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

/// The node breaks the schema: GraphDocReader, reading the same text, says how.
struct SchemaProblem {};

/// The same schema read straight into the graph (InOrderBuilder) for files in producers-first
/// order, one element of `nodes` at a time. Throws GiveUp where GraphDocReader could build
/// something else (a later or named output, see graph_in_order.h), SchemaProblem where it
/// would fail, or an Error of the typing rules; the caller then reads the file with
/// GraphDocReader, which has every message.
class InOrderDocReader {
 public:
  explicit InOrderDocReader(const YamlSource& src) : src_(src), builder_(src.file) {}

  void add_node(const DocRef& n);
  /// As GraphDocReader::finish.
  Graph finish(const DocRef* inputs, const DocRef* outputs, const DocRef* properties);

 private:
  OpType op_type(std::string_view name);

  const YamlSource& src_;
  InOrderBuilder builder_;
  std::vector<ValueRef> inputs_;
  std::vector<std::pair<std::string, OpType>> ops_;  // op types met so far (interning takes a lock)
};

/// A mapping's `properties` set on the built graph (both readers').
void set_properties(Graph& g, const DocRef* properties, const YamlSource& src);

/// The end of an in-order reading (InOrderDocReader's and the JSON reader's): the graph
/// inputs and outputs by name, the builder's checks, the properties. SchemaProblem where
/// GraphDocReader::finish would report something.
Graph finish_in_order(InOrderBuilder& builder, const DocRef* inputs, const DocRef* outputs, const DocRef* properties,
                      const YamlSource& src);

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
