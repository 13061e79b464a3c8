// How kernel-side errors name a node: "node 'id' (Op)", the rule that created it, and a
// position (the node's own, else the file the graph was read from).
#pragma once

#include <string>

#include "graphfuse/error.h"
#include "graphfuse/graph.h"

namespace graphfuse::kernels {

/// "node 'id' (Op)", plus ", created by rule 'r'" for a node a rewrite made (`_rule`):
/// such a node has no position of its own, and the rule is what the user can fix.
inline std::string node_what(const Node& n) {
  std::string s = "node '" + n.id + "' (" + std::string(n.op.name()) + ")";
  if (const std::string* rule = n.attrs.get_if<std::string>("_rule")) s += ", created by rule '" + *rule + "'";
  return s;
}

/// The node's position when it was read from text (.graph, YAML, JSON); else the file the
/// graph came from (ONNX and .gfb nodes carry none, nor do rule-created nodes).
inline SourceLoc node_loc(const Graph& g, const Node& n) {
  if (n.loc.known() || !n.loc.file.empty()) return n.loc;
  return SourceLoc{g.source_file, 0, 0};
}

/// Error(node_loc, node_what + ": " + message).
inline Error node_error(const Graph& g, const Node& n, const std::string& message) {
  return Error(node_loc(g, n), node_what(n) + ": " + message);
}

}  // namespace graphfuse::kernels
