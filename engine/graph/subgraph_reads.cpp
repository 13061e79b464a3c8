// Values that a subgraph reads by name (graphfuse/subgraph_reads.h).
#include "graphfuse/subgraph_reads.h"

namespace graphfuse {

SubgraphReads::SubgraphReads(const Graph& g) {
  g.for_each_node([&](NodeId id) {
    for (const auto& entry : g.node(id).attrs)
      if (const auto* o = std::get_if<Opaque>(&entry.second)) bodies_.push_back(&o->bytes);
  });
}

bool SubgraphReads::may_read(const std::string& name) const {
  if (name.empty()) return false;
  for (const std::string* b : bodies_)
    if (b->find(name) != std::string::npos) return true;
  return false;
}

}  // namespace graphfuse
