// Values that a subgraph reads by name. ONNX's If/Loop/Scan bodies (and TF functions) are
// kept serialized (an Opaque attribute) and read outer values by name, without an edge in
// the Graph, so a node without uses may still be read. Constant folding and the dead-node
// sweep ask this before removing one.
#pragma once

#include <string>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse {

class SubgraphReads {
 public:
  /// Collects the serialized subgraphs of g's nodes (pointers into g: valid while those
  /// nodes' attributes are).
  explicit SubgraphReads(const Graph& g);

  /// Whether some subgraph may read the value `name`. Conservative: a body's serialized
  /// form holds every name it reads as plain bytes, so a name that does not occur in it is
  /// certainly not read (one that occurs may be a prefix of another name; keeping that
  /// node costs nothing but its bytes). The empty name is never read.
  bool may_read(const std::string& name) const;

  bool empty() const { return bodies_.empty(); }

 private:
  std::vector<const std::string*> bodies_;
};

}  // namespace graphfuse
