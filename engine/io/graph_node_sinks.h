// Internal to io: where the graph schema's readings (graph_schema_read.h) put their nodes.
// The fast readings add them straight to the graph in file order (InOrderSink, on
// InOrderBuilder: producers-first files, which every file graphfuse writes is); the
// diagnostic reading hands them to GraphBuilder (BuilderSink), which orders them and checks
// what the whole file can get wrong, with GraphBuilder's messages.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph_build.h"
#include "graph_in_order.h"
#include "graph_schema_read.h"

namespace graphfuse::textio {

/// The top-level `properties` set on the built graph.
bool set_properties(Graph& g, const TopParts& top, const Check& c);

class InOrderSink {
 public:
  /// Node positions are asked of `positions` in file order.
  InOrderSink(InOrderBuilder& builder, Positions positions) : builder_(builder), positions_(std::move(positions)) {}

  /// The nodes of `b`, in order, into the graph: references resolved, positions made
  /// line:column. False where GraphBuilder might build or report anything else.
  bool add(NodeBatch& b);
  /// After the nodes: the graph inputs and outputs by name, the builder's checks, the
  /// properties. Nothing where GraphBuilder's reading would differ.
  std::optional<Graph> finish(const TopParts& top, const Check& quiet);

 private:
  static constexpr std::size_t kMaxCanonical = 32;
  InOrderBuilder& builder_;
  Positions positions_;
  std::vector<ValueRef> inputs_;
  std::vector<std::pair<const void*, Attributes>> canonical_;  // add(): a reading's set -> the graph's
};

class BuilderSink {
 public:
  explicit BuilderSink(Positions positions) : positions_(std::move(positions)) {}

  void reserve(std::size_t n) { builder_.reserve(n); }
  /// The nodes of `b` to GraphBuilder (which throws Error on a duplicate id).
  void add(NodeBatch& b);
  /// After the nodes: the graph inputs and outputs (each may be absent), the build, then
  /// the properties. Inputs and outputs come after the nodes whatever the order in the file
  /// (a listed input that is no node becomes an Input node). Throws the Error of the first
  /// problem.
  Graph finish(const TopParts& top, const YamlSource& src);

 private:
  GraphBuilder builder_;
  Positions positions_;
  std::vector<std::string> input_ops_;  // Input nodes in file order, for a missing `inputs`
};

}  // namespace graphfuse::textio
