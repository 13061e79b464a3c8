// Graph: node storage and mutation on boost::adjacency_list, kept consistent with the
// per-node ordered input lists.
#include "graphfuse/graph.h"

#include <algorithm>

#include "storage.h"

namespace graphfuse {

namespace {
Error node_error(const Node& n, const std::string& msg) {
  return Error(n.loc, "node '" + n.id + "': " + msg);
}
}  // namespace

Graph::Graph() : store_(std::make_unique<GraphStorage>()) {}
Graph::~Graph() = default;
Graph::Graph(const Graph& o)
    : source_file(o.source_file),
      store_(std::make_unique<GraphStorage>(*o.store_)),
      live_(o.live_),
      inputs_(o.inputs_),
      outputs_(o.outputs_),
      properties_(o.properties_) {}
Graph& Graph::operator=(const Graph& o) {
  if (this != &o) *this = Graph(o);
  return *this;
}
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

NodeId Graph::capacity() const { return static_cast<NodeId>(boost::num_vertices(store_->g)); }

bool Graph::alive(NodeId n) const { return n < capacity() && store_->g[n].alive; }

const Node& Graph::node(NodeId n) const { return store_->g[n].node; }
Node& Graph::mut_(NodeId n) { return store_->g[n].node; }
Attributes& Graph::attrs(NodeId n) { return mut_(n).attrs; }
std::vector<OutputInfo>& Graph::output_infos(NodeId n) { return mut_(n).outputs; }

std::optional<NodeId> Graph::find(std::string_view id) const {
  auto it = store_->by_id.find(std::string(id));
  if (it == store_->by_id.end()) return std::nullopt;
  return it->second;
}

void Graph::add_edge_(ValueRef from, NodeId to, std::uint32_t slot) {
  if (!from.valid()) return;  // absent optional input: no edge
  boost::add_edge(from.node, to, EdgeLabel{from.port, slot}, store_->g);
}

void Graph::remove_edge_(NodeId to, std::uint32_t slot) {
  ValueRef from = store_->g[to].node.inputs[slot];
  if (!from.valid()) return;
  auto& g = store_->g;
  auto [it, end] = boost::in_edges(to, g);
  for (; it != end; ++it) {
    if (g[*it].dst_slot == slot) {
      boost::remove_edge(*it, g);
      return;
    }
  }
}

NodeId Graph::add_node(std::string id, OpType op, std::vector<ValueRef> inputs, Attributes attrs,
                       std::uint32_t num_outputs, SourceLoc loc) {
  if (store_->by_id.count(id))
    throw Error(loc, "duplicate node id '" + id + "'");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ValueRef& v = inputs[i];
    if (!v.valid()) continue;
    if (!alive(v.node))
      throw Error(loc, "node '" + id + "': input " + std::to_string(i) + " refers to a removed or unknown node");
    if (v.port >= node(v.node).outputs.size())
      throw Error(loc, "node '" + id + "': input " + std::to_string(i) + " refers to output " +
                           std::to_string(v.port) + " of '" + node(v.node).id + "', which has " +
                           std::to_string(node(v.node).outputs.size()) + " output(s)");
  }
  auto n = static_cast<NodeId>(boost::add_vertex(store_->g));
  VertexSlot& slot = store_->g[n];
  slot.alive = true;
  slot.node.id = std::move(id);
  slot.node.op = op;
  slot.node.attrs = std::move(attrs);
  slot.node.inputs = std::move(inputs);
  slot.node.outputs.resize(std::max<std::uint32_t>(num_outputs, 1));
  slot.node.loc = std::move(loc);
  store_->by_id.emplace(slot.node.id, n);
  for (std::uint32_t i = 0; i < slot.node.inputs.size(); ++i) add_edge_(slot.node.inputs[i], n, i);
  ++live_;
  return n;
}

NodeId Graph::add_input(std::string id, ValueType type) {
  NodeId n = add_node(std::move(id), OpType::intern(ops::kInput));
  mut_(n).outputs[0].type = std::move(type);
  inputs_.push_back(n);
  return n;
}

void Graph::add_output(ValueRef v) { outputs_.push_back(v); }

std::vector<NodeId> Graph::nodes() const {
  std::vector<NodeId> out;
  out.reserve(live_);
  for (NodeId n = 0; n < capacity(); ++n)
    if (store_->g[n].alive) out.push_back(n);
  return out;
}

void Graph::for_each_node(const std::function<void(NodeId)>& f) const {
  for (NodeId n = 0; n < capacity(); ++n)
    if (store_->g[n].alive) f(n);
}

std::vector<Use> Graph::consumers(ValueRef v) const {
  std::vector<Use> out;
  auto& g = store_->g;
  auto [it, end] = boost::out_edges(v.node, g);
  for (; it != end; ++it)
    if (g[*it].src_port == v.port)
      out.push_back(Use{static_cast<NodeId>(boost::target(*it, g)), g[*it].dst_slot});
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t Graph::use_count(NodeId n) const { return boost::out_degree(n, store_->g); }

std::size_t Graph::use_count(ValueRef v) const {
  std::size_t c = 0;
  auto& g = store_->g;
  auto [it, end] = boost::out_edges(v.node, g);
  for (; it != end; ++it) c += g[*it].src_port == v.port;
  return c;
}

bool Graph::is_output(ValueRef v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

bool Graph::has_graph_output(NodeId n) const {
  return std::any_of(outputs_.begin(), outputs_.end(), [&](ValueRef v) { return v.node == n; });
}

std::string Graph::value_name(ValueRef v) const {
  const Node& nd = node(v.node);
  if (v.port < nd.outputs.size() && !nd.outputs[v.port].name.empty()) return nd.outputs[v.port].name;
  return v.port == 0 ? nd.id : nd.id + ":" + std::to_string(v.port);
}

void Graph::set_input(NodeId n, std::uint32_t slot, ValueRef v) {
  Node& nd = mut_(n);
  if (slot >= nd.inputs.size()) nd.inputs.resize(slot + 1);
  remove_edge_(n, slot);
  nd.inputs[slot] = v;
  add_edge_(v, n, slot);
}

void Graph::set_inputs(NodeId n, std::vector<ValueRef> inputs) {
  Node& nd = mut_(n);
  for (std::uint32_t i = 0; i < nd.inputs.size(); ++i) remove_edge_(n, i);
  nd.inputs = std::move(inputs);
  for (std::uint32_t i = 0; i < nd.inputs.size(); ++i) add_edge_(nd.inputs[i], n, i);
}

void Graph::set_op(NodeId n, OpType op) { mut_(n).op = op; }

void Graph::set_num_outputs(NodeId n, std::uint32_t count) {
  mut_(n).outputs.resize(std::max<std::uint32_t>(count, 1));
}

void Graph::rename(NodeId n, std::string new_id) {
  Node& nd = mut_(n);
  if (nd.id == new_id) return;
  if (store_->by_id.count(new_id)) throw Error(nd.loc, "duplicate node id '" + new_id + "'");
  store_->by_id.erase(nd.id);
  nd.id = std::move(new_id);
  store_->by_id.emplace(nd.id, n);
}

void Graph::replace_all_uses(ValueRef from, ValueRef to) {
  if (from == to) return;
  for (const Use& u : consumers(from)) set_input(u.node, u.slot, to);
  for (ValueRef& o : outputs_)
    if (o == from) o = to;
}

void Graph::remove_node(NodeId n) {
  Node& nd = mut_(n);
  if (use_count(n) != 0) throw node_error(nd, "cannot remove a node that still has uses");
  if (has_graph_output(n)) throw node_error(nd, "cannot remove a node that is a graph output");
  boost::clear_in_edges(n, store_->g);
  store_->by_id.erase(nd.id);
  inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), n), inputs_.end());
  store_->g[n].node = Node{};
  store_->g[n].alive = false;
  --live_;
}

void Graph::set_outputs(std::vector<ValueRef> outputs) { outputs_ = std::move(outputs); }
void Graph::set_inputs_list(std::vector<NodeId> inputs) { inputs_ = std::move(inputs); }

std::vector<NodeId> Graph::topological_order() const {
  auto& g = store_->g;
  NodeId cap = capacity();
  std::vector<std::uint32_t> pending(cap, 0);
  std::vector<NodeId> order;
  order.reserve(live_);
  for (NodeId n = 0; n < cap; ++n) {
    if (!g[n].alive) continue;
    pending[n] = static_cast<std::uint32_t>(boost::in_degree(n, g));
    if (pending[n] == 0) order.push_back(n);
  }
  // Kahn's algorithm with the ready list in discovery order: deterministic, O(N + E).
  for (std::size_t head = 0; head < order.size(); ++head) {
    auto [it, end] = boost::out_edges(order[head], g);
    for (; it != end; ++it) {
      auto t = static_cast<NodeId>(boost::target(*it, g));
      if (--pending[t] == 0) order.push_back(t);
    }
  }
  if (order.size() != live_) {
    for (NodeId n = 0; n < cap; ++n)
      if (g[n].alive && pending[n] != 0)
        throw node_error(g[n].node, "is part of a cycle");
  }
  return order;
}

void Graph::validate() const {
  auto& g = store_->g;
  std::size_t seen = 0;
  for (NodeId n = 0; n < capacity(); ++n) {
    if (!g[n].alive) continue;
    ++seen;
    const Node& nd = g[n].node;
    auto it = store_->by_id.find(nd.id);
    if (it == store_->by_id.end() || it->second != n) throw node_error(nd, "duplicate or unindexed id");
    if (!nd.op.valid()) throw node_error(nd, "has no op type");
    if (nd.outputs.empty()) throw node_error(nd, "has no outputs");
    std::size_t edges = 0;
    for (std::uint32_t i = 0; i < nd.inputs.size(); ++i) {
      ValueRef v = nd.inputs[i];
      if (!v.valid()) continue;
      ++edges;
      if (!alive(v.node))
        throw node_error(nd, "input " + std::to_string(i) + " refers to an unknown node");
      if (v.port >= node(v.node).outputs.size())
        throw node_error(nd, "input " + std::to_string(i) + " refers to output " +
                                 std::to_string(v.port) + " of '" + node(v.node).id +
                                 "', which has " + std::to_string(node(v.node).outputs.size()) +
                                 " output(s)");
    }
    if (edges != boost::in_degree(n, g)) throw node_error(nd, "edge list out of sync with inputs");
  }
  if (seen != live_) throw Error("graph: live node count out of sync");
  for (ValueRef v : outputs_) {
    if (!alive(v.node)) throw Error("graph output refers to an unknown node");
    if (v.port >= node(v.node).outputs.size())
      throw node_error(node(v.node), "graph output refers to output " + std::to_string(v.port) +
                                         ", which does not exist");
  }
  (void)topological_order();  // throws on a cycle
}

void Graph::compact() {
  if (live_ == capacity()) return;
  Graph out;
  std::vector<NodeId> remap(capacity(), kNoNode);
  auto map = [&](ValueRef v) { return v.valid() ? ValueRef{remap[v.node], v.port} : v; };
  // Add every node first and wire inputs afterwards: ids need not be topological.
  for (NodeId n = 0; n < capacity(); ++n) {
    if (!alive(n)) continue;
    const Node& nd = node(n);
    remap[n] = out.add_node(nd.id, nd.op, {}, nd.attrs, static_cast<std::uint32_t>(nd.outputs.size()), nd.loc);
    out.mut_(remap[n]).outputs = nd.outputs;
  }
  for (NodeId n = 0; n < capacity(); ++n) {
    if (!alive(n)) continue;
    std::vector<ValueRef> ins;
    for (ValueRef v : node(n).inputs) ins.push_back(map(v));
    out.set_inputs(remap[n], std::move(ins));
  }
  for (NodeId n : inputs_) out.inputs_.push_back(remap[n]);
  for (ValueRef v : outputs_) out.outputs_.push_back(map(v));
  out.properties_ = std::move(properties_);
  out.source_file = std::move(source_file);
  *this = std::move(out);
}

const Tensor* constant_tensor(const Graph& g, ValueRef v) {
  if (!v.valid() || v.port != 0 || !g.alive(v.node)) return nullptr;
  if (!is_constant(g, v)) return nullptr;
  return g.node(v.node).attrs.get_if<Tensor>("value");
}

bool is_constant(const Graph& g, ValueRef v) {
  static const OpType kConst = OpType::intern(ops::kConst);
  static const OpType kOnnxConstant = OpType::intern("Constant");
  if (!v.valid() || !g.alive(v.node)) return false;
  OpType op = g.node(v.node).op;
  return op == kConst || op == kOnnxConstant;
}

}  // namespace graphfuse
