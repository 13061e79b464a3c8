// Removing the nodes a rewrite left without readers (graphfuse/dead_nodes.h).
#include "graphfuse/dead_nodes.h"

#include <algorithm>
#include <deque>
#include <set>
#include <string_view>

#include "graphfuse/subgraph_reads.h"

namespace graphfuse {

namespace {

// The attribute the TensorFlow reader keeps a node's control inputs in (tf_io::kControlInputs;
// its header needs the TensorFlow protos, which the engine core does not link).
constexpr std::string_view kControlInputs = "tf.control_inputs";

bool unread(const Graph& g, NodeId n) { return g.use_count(n) == 0 && !g.has_graph_output(n); }

// Names read without an edge: by a subgraph body (graphfuse/subgraph_reads.h) or as a
// TensorFlow control input of some node.
struct NameReaders {
  SubgraphReads subgraphs;
  std::set<std::string> control;

  explicit NameReaders(const Graph& g) : subgraphs(g) {
    g.for_each_node([&](NodeId id) {
      if (const auto* names = g.node(id).attrs.get_if<std::vector<std::string>>(kControlInputs))
        control.insert(names->begin(), names->end());
    });
  }

  bool reads(const Graph& g, NodeId n) const {
    const Node& nd = g.node(n);
    if (control.count(nd.id)) return true;
    if (subgraphs.empty()) return false;
    for (std::uint32_t port = 0; port < nd.outputs.size(); ++port)
      if (subgraphs.may_read(g.value_name(ValueRef{n, port}))) return true;
    return false;
  }
};

}  // namespace

DeadNodeSweep::DeadNodeSweep(const Graph& before) : first_new_(before.capacity()), was_unread_(first_new_, 0) {
  before.for_each_node([&](NodeId n) { was_unread_[n] = unread(before, n) ? 1 : 0; });
}

bool DeadNodeSweep::removable(const Graph& g, NodeId n) const {
  static const OpType kInput = OpType::intern(ops::kInput);
  return g.alive(n) && g.op(n) != kInput && unread(g, n) && (n >= first_new_ || !was_unread_[n]);
}

std::vector<std::string> DeadNodeSweep::run(Graph& g) const {
  // One linear scan finds the nodes already dead; the common case (a rewrite that left
  // nothing behind) stops here, before the name search below walks every attribute.
  std::vector<NodeId> dead;
  g.for_each_node([&](NodeId n) {
    if (removable(g, n)) dead.push_back(n);
  });
  std::vector<std::string> removed;
  if (dead.empty()) return removed;
  // Node ids, not slot order, fix the removal order (and so the report).
  std::sort(dead.begin(), dead.end(), [&](NodeId a, NodeId b) { return g.node(a).id < g.node(b).id; });
  const NameReaders names(g);
  std::deque<NodeId> work(dead.begin(), dead.end());
  while (!work.empty()) {
    const NodeId n = work.front();
    work.pop_front();
    if (!removable(g, n) || names.reads(g, n)) continue;
    std::vector<NodeId> producers;
    for (const ValueRef& in : g.node(n).inputs)
      if (in.valid()) producers.push_back(in.node);
    removed.push_back(g.node(n).id);
    g.remove_node(n);
    // A producer whose last reader went is dead now too.
    for (NodeId p : producers)
      if (removable(g, p)) work.push_back(p);
  }
  return removed;
}

}  // namespace graphfuse
