// Graph: node storage and mutation, keeping the ordered input lists, the use lists, the
// op index and the id index consistent.
#include "graphfuse/graph.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "storage.h"
#include "value_checks.h"

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

namespace {
/// What the id index asks: is live node n called `id`? Is n alive?
auto id_is(const GraphStorage& s, std::string_view id) {
  // A removed node's record is reset, so its id is empty: only "" needs the liveness check.
  return [&s, id](NodeId n) { return s.nodes[n].id == id && (!id.empty() || s.hot[n].alive); };
}
auto alive_in(const GraphStorage& s) {
  return [&s](NodeId n) { return s.hot[n].alive; };
}
}  // namespace

NodeId Graph::capacity() const { return static_cast<NodeId>(store_->nodes.size()); }

bool Graph::alive(NodeId n) const { return records::alive(*this, n); }

OpType Graph::op(NodeId n) const { return records::op(*this, n); }

const Node& Graph::node(NodeId n) const { return records::node(*this, n); }
Node& Graph::mut_(NodeId n) { return store_->nodes[n]; }
Attributes& Graph::attrs(NodeId n) { return mut_(n).attrs; }
OutputInfos& Graph::output_infos(NodeId n) { return mut_(n).outputs; }

void Graph::begin_bulk() {
  end_bulk();
  store_->bulk = true;
  store_->bulk_first = capacity();
}

void Graph::end_bulk() {
  GraphStorage& s = *store_;
  if (!s.bulk) return;
  s.bulk = false;
  std::vector<std::uint32_t> hashes = std::move(s.bulk_hashes);
  s.bulk_hashes.clear();
  auto same = [&s](NodeId a, NodeId b) { return s.hot[a].alive && s.hot[b].alive && s.nodes[a].id == s.nodes[b].id; };
  NodeId dup = s.by_id.insert_bulk(hashes, s.bulk_first, same, alive_in(s));
  if (dup == kNoNode) return;
  // The graph is unusable now (two nodes with one id): say which, the way add_node would.
  throw Error(node(dup).loc, "duplicate node id '" + node(dup).id + "'");
}

std::optional<NodeId> Graph::find(std::string_view id) const {
  if (store_->bulk) const_cast<Graph*>(this)->end_bulk();  // see begin_bulk()
  NodeId n = store_->by_id.find(id, id_is(*store_, id));
  if (n == kNoNode) return std::nullopt;
  return n;
}

void Graph::reserve(std::size_t nodes) {
  store_->by_id.reserve(nodes, alive_in(*store_));
  store_->nodes.reserve(nodes);
  store_->hot.reserve(nodes);
}

void Graph::add_use_(ValueRef from, NodeId to, std::uint32_t slot) {
  if (!from.valid()) return;  // absent optional input: no use
  store_->hot[from.node].uses.push(Use{to, slot});
}

void Graph::remove_use_(NodeId to, std::uint32_t slot) {
  ValueRef from = store_->nodes[to].inputs[slot];
  if (!from.valid()) return;
  store_->hot[from.node].uses.erase(Use{to, slot});
}

std::uint32_t Graph::id_hash(std::string_view id) { return IdIndex::hash_of(id); }

NodeId Graph::add_node(std::string id, OpType op, InputList inputs, Attributes attrs,
                       std::uint32_t num_outputs, SourceLoc loc) {
  std::uint32_t h = id_hash(id);
  return add_node(h, std::move(id), op, std::move(inputs), std::move(attrs), num_outputs, std::move(loc));
}

NodeId Graph::add_node(std::uint32_t id_hash, std::string id, OpType op, InputList inputs,
                       Attributes attrs, std::uint32_t num_outputs, SourceLoc loc) {
  if (!store_->bulk && store_->by_id.find(id_hash, id_is(*store_, id)) != kNoNode)
    throw Error(loc, "duplicate node id '" + id + "'");
  if (store_->nodes.size() >= checks::kMaxNodes)
    throw Error(loc, "the graph has more than " + std::to_string(checks::kMaxNodes) + " nodes (docs/limits.md)");
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
  auto n = static_cast<NodeId>(store_->nodes.size());
  Node& nd = store_->nodes.emplace_back();
  HotRecord& hot = store_->hot.emplace_back();
  hot.alive = true;
  hot.op = op;
  nd.id = std::move(id);
  nd.op = op;
  nd.attrs = std::move(attrs);
  store_->attrs.intern(nd.attrs);
  nd.inputs = std::move(inputs);
  nd.outputs.resize(std::max<std::uint32_t>(num_outputs, 1));
  nd.loc = std::move(loc);
  if (store_->bulk) store_->bulk_hashes.push_back(id_hash);
  else store_->by_id.insert(id_hash, n, alive_in(*store_));
  for (std::uint32_t i = 0; i < nd.inputs.size(); ++i) add_use_(nd.inputs[i], n, i);
  ++live_;
  return n;
}

NodeId Graph::add_input(std::string id, ValueType type) {
  NodeId n = add_node(std::move(id), OpType::intern(ops::kInput));
  mut_(n).outputs[0].type = std::move(type);
  inputs_.push_back(n);
  store_->hot[n].input = true;
  return n;
}

void Graph::add_output(ValueRef v) {
  outputs_.push_back(v);
  flag_output_(v.node);
}

void Graph::flag_output_(NodeId n) {
  if (n < store_->hot.size()) store_->hot[n].output = true;
}

void Graph::reflag_io_() {
  for (NodeId n = 0; n < capacity(); ++n) store_->hot[n].output = store_->hot[n].input = false;
  for (ValueRef v : outputs_) flag_output_(v.node);
  for (NodeId n : inputs_)
    if (n < store_->hot.size()) store_->hot[n].input = true;
}

std::vector<NodeId> Graph::nodes() const {
  std::vector<NodeId> out;
  out.reserve(live_);
  for (NodeId n = 0; n < capacity(); ++n)
    if (store_->hot[n].alive) out.push_back(n);
  return out;
}

void Graph::for_each_node(const std::function<void(NodeId)>& f) const {
  for (NodeId n = 0; n < capacity(); ++n)
    if (store_->hot[n].alive) f(n);
}

UseRange Graph::uses(NodeId n) const { return store_->hot[n].uses.view(); }

std::vector<Use> Graph::consumers(ValueRef v) const {
  UseRange us = uses(v.node);
  std::vector<Use> out;
  if (node(v.node).outputs.size() == 1) {
    // One output: every use reads it, no need to look at the consumers.
    if (v.port == 0) {
      out.reserve(us.size());
      out.assign(us.begin(), us.end());
    }
  } else {
    for (Use u : us)
      if (node(u.node).inputs[u.slot].port == v.port) out.push_back(u);
  }
  // Uses are made in id order more often than not; sorting is then a no-op.
  if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
  return out;
}

std::size_t Graph::use_count(NodeId n) const { return store_->hot[n].uses.size(); }

std::size_t Graph::use_count(ValueRef v) const {
  UseRange us = uses(v.node);
  if (node(v.node).outputs.size() == 1) return v.port == 0 ? us.size() : 0;
  std::size_t c = 0;
  for (Use u : us) c += node(u.node).inputs[u.slot].port == v.port;
  return c;
}

bool Graph::is_output(ValueRef v) const {
  return has_graph_output(v.node) && std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

bool Graph::has_graph_output(NodeId n) const { return n < store_->hot.size() && store_->hot[n].output; }

std::string Graph::value_name(ValueRef v) const {
  const Node& nd = node(v.node);
  if (v.port < nd.outputs.size() && !nd.outputs[v.port].name.empty()) return nd.outputs[v.port].name;
  return v.port == 0 ? nd.id : nd.id + ":" + std::to_string(v.port);
}

void Graph::set_input(NodeId n, std::uint32_t slot, ValueRef v) {
  Node& nd = mut_(n);
  if (slot >= nd.inputs.size()) nd.inputs.resize(slot + 1);
  remove_use_(n, slot);
  nd.inputs[slot] = v;
  add_use_(v, n, slot);
}

void Graph::set_inputs(NodeId n, InputList inputs) {
  Node& nd = mut_(n);
  for (std::uint32_t i = 0; i < nd.inputs.size(); ++i) remove_use_(n, i);
  nd.inputs = std::move(inputs);
  for (std::uint32_t i = 0; i < nd.inputs.size(); ++i) add_use_(nd.inputs[i], n, i);
}

void Graph::set_op(NodeId n, OpType op) {
  mut_(n).op = op;
  store_->hot[n].op = op;
}

void Graph::set_attrs(NodeId n, Attributes attrs) {
  Attributes& a = mut_(n).attrs;
  a = std::move(attrs);
  store_->attrs.intern(a);
}

void Graph::set_num_outputs(NodeId n, std::uint32_t count) {
  mut_(n).outputs.resize(std::max<std::uint32_t>(count, 1));
}

void Graph::rename(NodeId n, std::string new_id) {
  end_bulk();
  Node& nd = mut_(n);
  if (nd.id == new_id) return;
  if (find(new_id)) throw Error(nd.loc, "duplicate node id '" + new_id + "'");
  store_->by_id.erase(nd.id, n);
  nd.id = std::move(new_id);
  store_->by_id.insert(nd.id, n, alive_in(*store_));
}

void Graph::replace_all_uses(ValueRef from, ValueRef to) {
  if (from == to) return;
  for (const Use& u : consumers(from)) set_input(u.node, u.slot, to);
  // The output list is scanned only when `from`'s node has a graph output: a rewrite
  // rewiring an ordinary value pays nothing for a graph with many outputs.
  if (!has_graph_output(from.node)) return;
  bool still = false;
  for (ValueRef& o : outputs_) {
    if (o == from) {
      o = to;
      flag_output_(to.node);
    }
    still |= o.node == from.node;
  }
  store_->hot[from.node].output = still;
}

void Graph::remove_node(NodeId n) {
  remove_(n, nullptr);
  store_->by_id.forget();
  --live_;
}

void Graph::remove_node(NodeId n, Removals& removals) {
  remove_(n, &removals);
  ++removals.count;
}

void Graph::remove_(NodeId n, Removals* into) {
  end_bulk();
  Node& nd = mut_(n);
  if (use_count(n) != 0) throw node_error(nd, "cannot remove a node that still has uses");
  if (has_graph_output(n)) throw node_error(nd, "cannot remove a node that is a graph output");
  for (std::uint32_t i = 0; i < nd.inputs.size(); ++i) remove_use_(n, i);
  if (store_->hot[n].input) inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), n), inputs_.end());
  // Release what the record holds, field by field: building a whole Node{}, moving it in
  // and destroying it was about 15% of a removal. The id must end empty (id_is()).
  std::string().swap(nd.id);
  // Side by side (into), a canonical set stays in the dead record: it is small (the
  // interner takes no tensors or long lists) and, as a rule, this graph's interner holds
  // it for the graph's life anyway, while dropping it would decrement a count that every
  // thread's removals share (all Conv2D nodes' strides and padding are one set). Other
  // sets are handed over.
  if (!into) nd.attrs = Attributes();
  else if (!nd.attrs.canonical()) into->attrs.push_back(std::move(nd.attrs));
  // Removing side by side (into), a list longer than InputList::kInline keeps its heap
  // block in the dead record (up to three inputs there is no block). That block came from
  // the loading thread's heap; a thread freeing it puts it on that heap's shared lists
  // once its own cache of freed blocks is full, and the loading thread's lane allocates
  // and frees on the same lists, so the two applying threads would contend for them. It is
  // freed with the graph (or by compact()).
  if (into) nd.inputs.clear();
  else nd.inputs = InputList();
  nd.outputs.clear();
  nd.op = OpType();
  nd.loc = SourceLoc();
  HotRecord& hot = store_->hot[n];
  hot.uses.clear();  // no uses, but it may still hold the memory of earlier ones
  hot.op = OpType();
  hot.alive = hot.output = hot.input = false;
}

void Graph::settle_removals(Removals& removals) {
  store_->by_id.forget(removals.count);
  live_ -= removals.count;
  removals.count = 0;
  removals.attrs.clear();
}

void Graph::set_outputs(std::vector<ValueRef> outputs) {
  for (ValueRef v : outputs_)
    if (v.node < store_->hot.size()) store_->hot[v.node].output = false;
  outputs_ = std::move(outputs);
  for (ValueRef v : outputs_) flag_output_(v.node);
}
void Graph::set_inputs_list(std::vector<NodeId> inputs) {
  for (NodeId n : inputs_)
    if (n < store_->hot.size()) store_->hot[n].input = false;
  inputs_ = std::move(inputs);
  for (NodeId n : inputs_)
    if (n < store_->hot.size()) store_->hot[n].input = true;
}

std::vector<NodeId> Graph::topological_order() const {
  NodeId cap = capacity();
  // In-degrees from the use lists: one pass over the hot records, no visit to the nodes.
  std::vector<std::uint32_t> pending(cap, 0);
  for (NodeId n = 0; n < cap; ++n)
    if (alive(n))
      for (Use u : uses(n)) ++pending[u.node];
  std::vector<NodeId> order;
  order.reserve(live_);
  for (NodeId n = 0; n < cap; ++n)
    if (alive(n) && pending[n] == 0) order.push_back(n);
  // Kahn's algorithm with the ready list in discovery order: deterministic, O(N + E).
  for (std::size_t head = 0; head < order.size(); ++head)
    for (Use u : uses(order[head]))
      if (--pending[u.node] == 0) order.push_back(u.node);
  if (order.size() != live_) {
    for (NodeId n = 0; n < cap; ++n)
      if (alive(n) && pending[n] != 0) throw node_error(node(n), "is part of a cycle");
  }
  return order;
}

void Graph::validate() const {
  std::size_t seen = 0;
  // slot_at[n]: where node n's input slots start in slot_seen (one bit per input slot).
  std::vector<std::size_t> slot_at(capacity(), 0);
  std::size_t slots = 0;
  for (NodeId n = 0; n < capacity(); ++n) {
    slot_at[n] = slots;
    if (alive(n)) slots += node(n).inputs.size();
  }
  std::vector<bool> slot_seen(slots, false);
  std::size_t edges = 0, uses_seen = 0;
  for (NodeId n = 0; n < capacity(); ++n) {
    if (!alive(n)) continue;
    ++seen;
    const Node& nd = node(n);
    if (find(nd.id) != n) throw node_error(nd, "duplicate or unindexed id");
    if (!nd.op.valid()) throw node_error(nd, "has no op type");
    if (op(n) != nd.op) throw node_error(nd, "op index out of sync");
    if (nd.outputs.empty()) throw node_error(nd, "has no outputs");
    for (std::uint32_t i = 0; i < nd.inputs.size(); ++i) {
      ValueRef v = nd.inputs[i];
      if (!v.valid()) continue;
      if (!alive(v.node))
        throw node_error(nd, "input " + std::to_string(i) + " refers to an unknown node");
      if (v.port >= node(v.node).outputs.size())
        throw node_error(nd, "input " + std::to_string(i) + " refers to output " +
                                 std::to_string(v.port) + " of '" + node(v.node).id +
                                 "', which has " + std::to_string(node(v.node).outputs.size()) +
                                 " output(s)");
      ++edges;
    }
    // Each use must name an input slot that reads n, and no slot twice; with as many
    // uses in all as used slots, every slot then has its use. (Searching the producer's
    // list for each slot instead cost O(fan-out) per edge: minutes at 10^6 nodes around
    // one shared constant.)
    for (Use u : uses(n)) {
      if (!alive(u.node) || u.slot >= node(u.node).inputs.size() || node(u.node).inputs[u.slot].node != n)
        throw node_error(nd, "use lists out of sync with inputs");
      std::size_t bit = slot_at[u.node] + u.slot;
      if (slot_seen[bit]) throw node_error(nd, "use lists out of sync with inputs");
      slot_seen[bit] = true;
      ++uses_seen;
    }
  }
  if (uses_seen != edges) throw Error("graph: use lists out of sync with inputs");
  if (seen != live_ || store_->by_id.size() != live_) throw Error("graph: live node count out of sync");
  for (ValueRef v : outputs_) {
    if (!alive(v.node)) throw Error("graph output refers to an unknown node");
    if (v.port >= node(v.node).outputs.size())
      throw node_error(node(v.node), "graph output refers to output " + std::to_string(v.port) +
                                         ", which does not exist");
  }
  validate_value_names();
  (void)topological_order();  // throws on a cycle
}

void Graph::validate_value_names() const {
  std::unordered_map<std::string_view, NodeId> named;  // output name -> its node
  for (NodeId n = 0; n < capacity(); ++n) {
    if (!alive(n)) continue;
    const Node& nd = node(n);
    // Text formats spell a node by its id (`id = Op(...)`); an empty id has no spelling there.
    if (nd.id.empty()) throw node_error(nd, "has an empty id");
    // Text formats write an attribute as `name = value`; an empty name has no spelling there.
    for (const auto& entry : nd.attrs)
      if (entry.first.empty()) throw node_error(nd, "has an attribute with an empty name");
    for (std::size_t k = 0; k < nd.outputs.size(); ++k) {
      const std::string& name = nd.outputs[k].name;
      if (name.empty() || name == (k == 0 ? nd.id : nd.id + ":" + std::to_string(k))) continue;
      const std::string what = "output " + std::to_string(k) + " is named '" + name + "', ";
      if (auto other = find(name))
        throw node_error(nd, what + (*other == n ? "its own id, which only its first output may carry"
                                                 : "the id of node '" + name + "'"));
      if (auto [it, fresh] = named.emplace(name, n); !fresh)
        throw node_error(nd, what + "which already names an output of node '" + node(it->second).id + "'");
    }
  }
}

void Graph::compact() {
  if (live_ == capacity()) return;
  Graph out;
  out.reserve(live_);
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
    InputList ins;
    ins.reserve(node(n).inputs.size());
    for (ValueRef v : node(n).inputs) ins.push_back(map(v));
    out.set_inputs(remap[n], std::move(ins));
  }
  for (NodeId n : inputs_) out.inputs_.push_back(remap[n]);
  for (ValueRef v : outputs_) out.outputs_.push_back(map(v));
  out.reflag_io_();
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
  // From the hot record that alive() just read: constraints such as const(b) ask this of
  // every candidate, and the constant's node record is otherwise never loaded.
  OpType op = g.op(v.node);
  return op == kConst || op == kOnnxConstant;
}

}  // namespace graphfuse
