// Reading and writing graphs: .graph text, YAML, JSON, .gfb, Graphviz DOT (and ONNX with graphfuse::onnx).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse {

enum class GraphFormat { Text, Yaml, Json, Onnx, Dot, Binary, GraphDef };

/// The format for a path by extension: .graph, .yaml/.yml, .json, .onnx, .dot, .gfb, .pb.
/// load_graph then looks at the content: a .json that is a TF.js graph model and a .pb that
/// is an ONNX model are read as such (TensorFlow formats need graphfuse::tf linked).
/// Throws Error naming the file for anything else.
GraphFormat format_for_path(const std::string& path);

/// Loads a graph, format chosen by extension (.onnx needs graphfuse::onnx linked). Throws Error with file:line:column on
/// malformed input, unknown references, duplicate ids, cycles, bad attribute types.
/// The result validates.
Graph load_graph(const std::string& path);

/// Saves a graph, format chosen by extension. Atomic: writes a temporary file beside
/// the target and renames it, so a failure never leaves a half-written file.
void save_graph(const Graph& g, const std::string& path);

/// Parsers from memory; `file` is used in error messages only.
Graph parse_graph_text(std::string_view text, const std::string& file = "<text>");
Graph parse_graph_yaml(std::string_view text, const std::string& file = "<yaml>");  ///< YAML or JSON
/// The .gfb binary form (engine/io/graph_binary.h): for big graphs, loads ~50x faster
/// than JSON. Throws Error naming the file and byte offset when the bytes are damaged.
Graph parse_graph_binary(std::string_view bytes, const std::string& file = "<gfb>");

/// Writers to memory. Deterministic: the same graph gives the same bytes.
std::string write_graph_text(const Graph& g);
std::string write_graph_yaml(const Graph& g);
std::string write_graph_json(const Graph& g);
/// What a DOT picture shows besides each node's op and id.
struct DotOptions {
  bool attributes = false;  ///< each node's attributes (`_`-prefixed ones and long values shortened)
  bool shapes = false;      ///< each output's dtype and shape where known
  /// Nodes a rule made (attribute `_rule`) filled with a colour per rule and labelled with it.
  bool rules = true;
  /// For HTML reports: nodes a rule made link to `#rule-<name>` (an SVG `<a>` around the node).
  bool rule_links = false;
  /// When not empty, indexed by NodeId: only nodes with a non-zero entry are drawn, with the
  /// edges between them (a window onto a graph too big to draw whole).
  std::vector<char> only;
};
std::string write_graph_dot(const Graph& g);  ///< write_graph_dot(g, DotOptions{})
std::string write_graph_dot(const Graph& g, const DotOptions& options);
/// The fill colour write_graph_dot gives the nodes of rule `rule` ("#rrggbb", light):
/// a fixed palette indexed by a hash of the name, so a rule keeps its colour across pictures.
std::string rule_colour(std::string_view rule);
/// The .gfb bytes; the same graph always gives the same bytes.
std::string write_graph_binary(const Graph& g);

/// An attribute value in `.graph` syntax: 3, 1.5, "SAME", true, [1, 1], tensor(...).
std::string format_attr_value(const AttrValue& v);
/// One node as a `.graph` statement (`relu = ReLU(bias) {...}`), for messages and diffs.
std::string format_node_text(const Graph& g, NodeId n);

/// Writes `content` to `path` atomically (temp file in the same folder + rename).
void write_file_atomic(const std::string& path, std::string_view content);
/// The same for content given in pieces, written one after the other.
void write_file_atomic(const std::string& path, std::span<const std::string> pieces);
/// Reads a whole file; throws Error naming the file when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace graphfuse

// ONNX files (load_onnx, save_onnx, parse_onnx, write_onnx) are in graphfuse/onnx.h, library
// graphfuse::onnx; with it linked, load_graph and save_graph above take .onnx paths too.
