// InOrderBuilder: nodes in producers-first order straight into a Graph; anything
// GraphBuilder might do differently gives up.
#include "graph_in_order.h"

#include <algorithm>
#include <cstring>

#include "graph/value_checks.h"
#include "graph_build.h"

namespace graphfuse::textio {

InOrderBuilder::InOrderBuilder(const std::string& file) : recent_(std::size_t{1} << kRecentBits) {
  g_.source_file = file;
  // Ids are filed in the graph's index in ordered batches (see find()), not one random
  // access per node.
  g_.begin_bulk();
}

std::uint64_t quick_hash(std::string_view s) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
  for (std::size_t i = 0; i < s.size(); i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, std::min<std::size_t>(8, s.size() - i));
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  // MurmurHash3's finaliser: every input bit reaches the low bits the tables index by.
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

NodeId InOrderBuilder::find(std::string_view id) {
  auto hash = static_cast<std::uint32_t>(quick_hash(id));
  Recent& r = recent_[hash & ((std::size_t{1} << kRecentBits) - 1)];
  if (r.node != kNoNode && r.hash == hash && g_.node(r.node).id == id) return r.node;
  // find() files the ids added since the last miss in one batch; adding goes on in bulk.
  std::optional<NodeId> n = g_.find(id);
  g_.begin_bulk();
  if (!n) return kNoNode;
  r = Recent{hash, *n};  // a node used far apart (a shared weight) is met again
  return *n;
}

ValueRef InOrderBuilder::resolve(std::string_view name) {
  // GraphBuilder's order: a node id, an output name (the in-order build takes no named
  // outputs), then `id:k`.
  if (NodeId n = find(name); n != kNoNode) return ValueRef{n, 0};
  std::string base;
  std::uint32_t port = 0;
  if (!split_port(name, base, port)) throw GiveUp{};
  NodeId n = find(base);
  if (n == kNoNode || port >= g_.node(n).outputs.size()) throw GiveUp{};
  // A later node with this very id would be what GraphBuilder resolves it to.
  by_port_.emplace_back(name);
  return ValueRef{n, port};
}

void InOrderBuilder::add_node(std::string id, OpType op, std::vector<ValueRef> inputs, Attributes attrs,
                              SourceLoc loc, const ValueType* type) {
  static const OpType kInputOp = OpType::intern(ops::kInput);  // name() would take the intern lock
  if (op == kInputOp) {
    if (!inputs.empty()) throw GiveUp{};  // GraphBuilder's error
    input_nodes_.push_back(g_.capacity());
  }
  auto hash = static_cast<std::uint32_t>(quick_hash(id));
  NodeId n = g_.add_node(std::move(id), op, std::move(inputs), std::move(attrs), 1, std::move(loc));
  if (type) g_.output_infos(n)[0].type = *type;
  recent_[hash & ((std::size_t{1} << kRecentBits) - 1)] = Recent{hash, n};
}

void InOrderBuilder::add_graph_input(std::string_view name, const SourceLoc& loc) {
  NodeId n = find(name);
  if (n == kNoNode) n = g_.add_node(std::string(name), OpType::intern(ops::kInput), {}, {}, 1, loc);
  if (!checks::graph_input_op_problem(g_.node(n).id, g_.op(n).name()).empty()) throw GiveUp{};
  for (NodeId seen : graph_inputs_)
    if (seen == n) throw GiveUp{};
  graph_inputs_.push_back(n);
}

void InOrderBuilder::inputs_from_input_nodes() {
  for (NodeId n : input_nodes_) {
    // Resolved by id as GraphBuilder does: the node itself unless its id is taken twice
    // (which finish() refuses).
    for (NodeId seen : graph_inputs_)
      if (seen == n) throw GiveUp{};
    graph_inputs_.push_back(n);
  }
}

void InOrderBuilder::add_graph_output(std::string_view name) {
  if (NodeId n = find(name); n != kNoNode) return g_.add_output(ValueRef{n, 0});
  std::string base;
  std::uint32_t port = 0;
  NodeId n = split_port(name, base, port) ? find(base) : kNoNode;
  if (n == kNoNode || port >= g_.node(n).outputs.size()) throw GiveUp{};
  g_.add_output(ValueRef{n, port});
}

Graph InOrderBuilder::finish() {
  g_.set_inputs_list(graph_inputs_);
  try {
    g_.end_bulk();  // a duplicate id: GraphBuilder names the second definition
    for (const std::string& name : by_port_)
      if (g_.find(name)) throw GiveUp{};
  } catch (const Error&) {
    throw GiveUp{};
  }
  return std::move(g_);
}

}  // namespace graphfuse::textio
