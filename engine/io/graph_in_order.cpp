// InOrderBuilder: nodes in producers-first order straight into a Graph; anything
// GraphBuilder might do differently gives up.
#include "graph_in_order.h"

#include <algorithm>
#include <cstring>

#include "graph/graph_tuning.h"
#include "graph/storage.h"
#include "graph/value_checks.h"
#include "graph_build.h"

namespace graphfuse::textio {

InOrderBuilder::InOrderBuilder(const std::string& file) : recent_(std::size_t{1} << kRecentBits) {
  g_.source_file = file;
  // Ids are filed in the graph's index in ordered batches (see find()), not one random
  // access per node.
  GraphTuning::begin_bulk(g_);
}

bool InOrderBuilder::file_ids() {
  // The graph's bulk load says "duplicate id" only by throwing; the reading then stops and
  // GraphBuilder names the second definition. Not a reading strategy: the one place the
  // in-order build turns the Graph API's error into its own answer.
  try {
    GraphTuning::end_bulk(g_);
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool InOrderBuilder::find(std::string_view id, std::uint32_t hash, NodeId& out) {
  Recent& r = recent_[hash & ((std::size_t{1} << kRecentBits) - 1)];
  if (r.node != kNoNode && r.hash == hash && g_.node(r.node).id == id) {
    out = r.node;
    return true;
  }
  // The ids added since the last miss are filed in one batch; adding goes on in bulk.
  if (!file_ids()) return false;  // a duplicate id: GraphBuilder names the second definition
  std::optional<NodeId> n = g_.find(id);
  GraphTuning::begin_bulk(g_);
  out = n ? *n : kNoNode;
  if (n) r = Recent{hash, *n};  // a node used far apart (a shared weight) is met again
  return true;
}

bool InOrderBuilder::resolve(std::string_view name, std::uint32_t hash, ValueRef& out) {
  // GraphBuilder's order: a node id, an output name, then `id:k`. An output name is looked
  // at before the graph's id index (a miss there ends a bulk batch): were it also a node's
  // id, GraphBuilder would refuse the file, and finish() gives up.
  if (!named_.empty()) {
    // Like ids, names are mostly of a little earlier outputs: the recent ones first.
    RecentName& r = recent_named_[hash & ((std::size_t{1} << kRecentBits) - 1)];
    if (r.v.node != kNoNode && r.hash == hash && name_of(r.v) == name) {
      out = r.v;
      return true;
    }
    if (const ValueRef* v = named(name, hash)) {
      r = RecentName{hash, *v};
      out = *v;
      return true;
    }
  }
  NodeId n = kNoNode;
  if (!find(name, hash, n)) return false;
  if (n != kNoNode) {
    out = ValueRef{n, 0};
    return true;
  }
  std::string base;
  std::uint32_t port = 0;
  if (!split_port(name, base, port) || !resolve_port(base, port, out)) return false;
  // A later node with this very id would be what GraphBuilder resolves it to.
  by_port_.emplace_back(name);
  return true;
}

bool InOrderBuilder::resolve_port(std::string_view id, std::uint32_t port, ValueRef& out) {
  NodeId n = kNoNode;
  if (!find(id, GraphTuning::id_hash(id), n) || n == kNoNode || port >= g_.node(n).outputs.size()) return false;
  out = ValueRef{n, port};
  return true;
}

const Attributes* InOrderBuilder::add_node(std::uint32_t hash, std::string id, OpType op, InputList inputs,
                                           Attributes attrs, SourceLoc loc, std::span<std::string> output_names,
                                           std::span<const ValueType> types) {
  static const OpType kInputOp = OpType::intern(ops::kInput);  // name() would take the intern lock
  if (op == kInputOp) {
    if (!inputs.empty()) return nullptr;  // GraphBuilder's error
    input_nodes_.push_back(g_.capacity());
  }
  auto count = static_cast<std::uint32_t>(std::max<std::size_t>(1, output_names.size()));
  if (!types.empty() && types.size() != count) return nullptr;  // the readers check; GraphBuilder says why
  if (g_.capacity() >= checks::kMaxNodes) return nullptr;  // Graph::add_node's error, GraphBuilder's place
  NodeId n = GraphTuning::add_node(g_, hash, std::move(id), op, std::move(inputs), std::move(attrs), count, std::move(loc));
  if (warm_) warm_->progress(n - warm_base_);
  if (!output_names.empty() && !name_outputs(n, output_names)) return nullptr;
  // Only types that say something: touching an output's entry gives the node a list of
  // them (as GraphBuilder::build).
  for (std::size_t k = 0; k < types.size(); ++k)
    if (!(types[k] == ValueType{})) g_.output_infos(n)[k].type = types[k];
  recent_[hash & ((std::size_t{1} << kRecentBits) - 1)] = Recent{hash, n};
  return &g_.node(n).attrs;
}

bool InOrderBuilder::name_outputs(NodeId n, std::span<std::string> names) {
  const std::string& id = g_.node(n).id;
  for (std::size_t k = 0; k < names.size(); ++k) {
    std::string& name = names[k];
    // An output named like its default (`id`, `id:k`) is an unnamed one (GraphBuilder::add_node).
    if (name.empty() || name == (k == 0 ? id : id + ":" + std::to_string(k))) continue;
    g_.output_infos(n)[k].name = std::move(name);
    // Named twice: GraphBuilder's error.
    if (!add_named(ValueRef{n, static_cast<std::uint32_t>(k)})) return false;
  }
  return true;
}

const ValueRef* InOrderBuilder::named(std::string_view name, std::uint32_t h) const {
  std::size_t mask = named_slots_.size() - 1;
  for (std::size_t at = h & mask;; at = (at + 1) & mask) {
    std::uint64_t s = named_slots_[at];
    if (!s) return nullptr;
    const ValueRef& v = named_[static_cast<std::size_t>(s & 0xffffffffu) - 1];
    if ((s >> 32) == h && name_of(v) == name) return &v;
  }
}

bool InOrderBuilder::add_named(ValueRef v) {
  if (2 * (named_.size() + 1) > named_slots_.size()) {
    // At most half full: probes stay short. The first name sizes the table for as many
    // names as nodes (ONNX imports name every value); regrown from the names, which the
    // graph keeps.
    std::size_t cap = std::max<std::size_t>(64, 4 * named_slots_.size());
    while (cap < 2 * reserved_) cap *= 2;
    named_slots_.assign(cap, 0);
    recent_named_.resize(std::size_t{1} << kRecentBits);
    for (std::size_t i = 0; i < named_.size(); ++i) {
      std::uint32_t h = GraphTuning::id_hash(name_of(named_[i]));
      std::size_t at = h & (cap - 1);
      while (named_slots_[at]) at = (at + 1) & (cap - 1);
      named_slots_[at] = std::uint64_t{h} << 32 | (i + 1);
    }
  }
  std::string_view name = name_of(v);
  std::uint32_t h = GraphTuning::id_hash(name);
  std::size_t mask = named_slots_.size() - 1;
  std::size_t at = h & mask;
  for (; named_slots_[at]; at = (at + 1) & mask) {
    std::uint64_t s = named_slots_[at];
    if ((s >> 32) == h && name_of(named_[static_cast<std::size_t>(s & 0xffffffffu) - 1]) == name) return false;
  }
  named_.push_back(v);
  named_slots_[at] = std::uint64_t{h} << 32 | named_.size();
  recent_named_[h & ((std::size_t{1} << kRecentBits) - 1)] = RecentName{h, v};
  return true;
}

bool InOrderBuilder::add_graph_input(std::string_view name, const SourceLoc& loc) {
  NodeId n = kNoNode;
  if (!find(name, GraphTuning::id_hash(name), n)) return false;
  if (n == kNoNode) {
    if (g_.capacity() >= checks::kMaxNodes) return false;  // Graph::add_node's error
    n = g_.add_node(std::string(name), OpType::intern(ops::kInput), {}, {}, 1, loc);
  }
  if (!checks::graph_input_op_problem(g_.node(n).id, g_.op(n).name()).empty()) return false;
  for (NodeId seen : graph_inputs_)
    if (seen == n) return false;
  graph_inputs_.push_back(n);
  return true;
}

bool InOrderBuilder::inputs_from_input_nodes() {
  for (NodeId n : input_nodes_) {
    // Resolved by id as GraphBuilder does: the node itself unless its id is taken twice
    // (which finish() refuses).
    for (NodeId seen : graph_inputs_)
      if (seen == n) return false;
    graph_inputs_.push_back(n);
  }
  return true;
}

void InOrderBuilder::reserve(std::size_t n) {
  g_.reserve(n);
  reserved_ = n;
  warm_.emplace(records::unfilled_records(g_, n), n - std::min<std::size_t>(n, g_.capacity()));
  warm_base_ = g_.capacity();
}

std::optional<Graph> InOrderBuilder::finish() {
  warm_.reset();  // long done by now; the graph leaves with the caller, who may drop it
  g_.set_inputs_list(graph_inputs_);
  if (!file_ids()) return std::nullopt;  // a duplicate id: GraphBuilder names the second definition
  for (const std::string& name : by_port_)
    if (g_.find(name)) return std::nullopt;
  // GraphBuilder::index_output_names refuses an output name that is a node's id or the
  // default name (`id:k`) of a node's output, wherever that node is in the file.
  std::string base;
  std::uint32_t port = 0;
  // With the duplicate names refused as they came, that is all Graph::validate_value_names
  // would check of them.
  for (ValueRef v : named_) {
    std::string_view name = name_of(v);
    if (g_.find(name) || (split_port(name, base, port) && g_.find(base))) return std::nullopt;
  }
  return std::move(g_);
}

}  // namespace graphfuse::textio
