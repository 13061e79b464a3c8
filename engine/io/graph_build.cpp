// GraphBuilder: nodes as written in a file -> a validated Graph, producers first, with
// every reference, name clash and cycle reported at its file position.
#include "graph_build.h"

#include "graph/graph_tuning.h"
#include "graph/value_checks.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace graphfuse::textio {

namespace {

std::string default_name(const std::string& id, std::size_t k) {
  return k == 0 ? id : id + ":" + std::to_string(k);
}

std::string outputs_phrase(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " output" : " outputs");
}

std::size_t output_count(const PendingNode& n) { return std::max<std::size_t>(1, n.output_names.size()); }

}  // namespace

bool split_port(std::string_view s, std::string& name, std::uint32_t& port) {
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size() || s.size() - colon > 8)
    return false;
  std::uint32_t k = 0;
  for (std::size_t i = colon + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    k = k * 10 + static_cast<std::uint32_t>(s[i] - '0');  // at most 7 digits: no overflow
  }
  name = s.substr(0, colon);
  port = k;
  return true;
}

std::uint32_t GraphBuilder::id_hash(std::string_view id) {
  std::uint64_t h = std::hash<std::string_view>{}(id);
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

void GraphBuilder::grow_ids(std::size_t n) {
  std::size_t cap = 16;
  while (cap < 2 * n) cap *= 2;  // at most half full: probes stay short
  if (cap <= id_slots_.size()) return;
  std::vector<std::uint64_t> old = std::move(id_slots_);
  id_slots_.assign(cap, 0);
  for (std::uint64_t s : old) {
    if (!s) continue;
    std::size_t at = (s >> 32) & (cap - 1);
    while (id_slots_[at]) at = (at + 1) & (cap - 1);
    id_slots_[at] = s;
  }
}

std::size_t GraphBuilder::find_id(std::string_view id) const {
  if (id_slots_.empty()) return kNoId;
  std::uint32_t h = id_hash(id);
  std::size_t mask = id_slots_.size() - 1;
  for (std::size_t at = h & mask;; at = (at + 1) & mask) {
    std::uint64_t s = id_slots_[at];
    if (!s) return kNoId;
    std::size_t i = static_cast<std::size_t>(s & 0xffffffffu) - 1;
    if ((s >> 32) == h && nodes_[i].id == id) return i;
  }
}

std::size_t GraphBuilder::insert_id(std::size_t i) {
  if (2 * (id_count_ + 1) > id_slots_.size()) grow_ids(id_count_ + 1);
  std::uint32_t h = id_hash(nodes_[i].id);
  std::size_t mask = id_slots_.size() - 1;
  std::size_t at = h & mask;
  for (;; at = (at + 1) & mask) {
    std::uint64_t s = id_slots_[at];
    if (!s) break;
    std::size_t j = static_cast<std::size_t>(s & 0xffffffffu) - 1;
    if ((s >> 32) == h && nodes_[j].id == nodes_[i].id) return j;
  }
  id_slots_[at] = std::uint64_t{h} << 32 | (i + 1);
  ++id_count_;
  return kNoId;
}

void GraphBuilder::add_node(PendingNode n) {
  // ONNX export writes an Input node as a graph input and drops its inputs: refuse what
  // could not be written back.
  if (n.op == ops::kInput && !n.inputs.empty())
    throw Error(n.loc, "node '" + n.id + "': an Input node takes no inputs");
  // Kept first so the index can compare ids in place; taken back out if it is a duplicate.
  nodes_.push_back(std::move(n));
  PendingNode& added = nodes_.back();
  if (std::size_t first = insert_id(nodes_.size() - 1); first != kNoId) {
    const SourceLoc& at = nodes_[first].loc;
    Error e(added.loc, "duplicate node id '" + added.id + "'" +
                           (at.known() ? " (first defined at " + at.str() + ")" : ""));
    nodes_.pop_back();
    throw e;
  }
  // An output named like its default (`id`, `id:k`) is the same as an unnamed one.
  for (std::size_t k = 0; k < added.output_names.size(); ++k)
    if (added.output_names[k] == default_name(added.id, k)) added.output_names[k].clear();
}

bool GraphBuilder::has_node(const std::string& id) const { return find_id(id) != kNoId; }

void GraphBuilder::index_output_names() {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const PendingNode& n = nodes_[i];
    for (std::size_t k = 0; k < n.output_names.size(); ++k) {
      const std::string& name = n.output_names[k];
      if (name.empty()) continue;
      std::string what = "node '" + n.id + "': output name '" + name + "'";
      if (std::size_t other = find_id(name); other != kNoId)
        throw Error(n.loc, what + " clashes with the id of node '" + name + "'" +
                               (nodes_[other].loc.known() ? " at " + nodes_[other].loc.str() : ""));
      std::string base;
      std::uint32_t port = 0;
      if (split_port(name, base, port) && find_id(base) != kNoId)
        throw Error(n.loc, what + " clashes with the default name of output " + std::to_string(port) +
                               " of node '" + base + "'");
      auto [it, fresh] = by_output_name_.emplace(name, Resolved{i, static_cast<std::uint32_t>(k)});
      if (!fresh)
        throw Error(n.loc, what + " is already an output of node '" + nodes_[it->second.node].id + "'");
    }
  }
}

template <class User>
GraphBuilder::Resolved GraphBuilder::resolve(const PendingRef& r, const User& user) const {
  Resolved out;
  std::string id = r.name;
  bool by_id = false;
  if (r.port >= 0) {
    out.port = static_cast<std::uint32_t>(r.port);
    by_id = true;
  } else if (std::size_t i = find_id(r.name); i != kNoId) {
    return Resolved{i, 0};
  } else if (auto o = by_output_name_.find(r.name); o != by_output_name_.end()) {
    return o->second;
  } else {
    by_id = split_port(r.name, id, out.port);
  }
  std::size_t found = by_id ? find_id(id) : kNoId;
  if (found == kNoId)
    throw Error(r.loc, user() + " refers to '" + r.name + "', which is no node id or output name");
  out.node = found;
  std::size_t count = output_count(nodes_[out.node]);
  if (out.port >= count)
    throw Error(r.loc, user() + " refers to output " + std::to_string(out.port) + " of '" + id +
                           "', which has " + outputs_phrase(count) +
                           " (a node's `outputs` list gives its output count)");
  return out;
}

std::vector<std::size_t> GraphBuilder::order(const std::vector<Resolved>& resolved, const std::vector<std::size_t>& at) const {
  // inputs[i][s] is resolved[at[i] + s]
  struct Row {
    const Resolved* p;
    std::size_t n;
    std::size_t size() const { return n; }
    const Resolved& operator[](std::size_t s) const { return p[s]; }
  };
  auto inputs = [&](std::size_t i) { return Row{resolved.data() + at[i], at[i + 1] - at[i]}; };
  // Kahn's algorithm taking the lowest file index among ready nodes: a file that is already
  // producers-first keeps its order, so ids (and everything written later) stay stable.
  std::size_t n = nodes_.size();
  std::vector<std::size_t> pending(n, 0);
  // The users of node p are users[user_at[p] .. user_at[p + 1]), in ascending order: one array
  // rather than a vector per node (10^6 allocations at 10^6 nodes).
  std::vector<std::size_t> user_at(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t s = 0; s < inputs(i).size(); ++s)
      if (!nodes_[i].inputs[s].absent) {
        ++pending[i];
        ++user_at[inputs(i)[s].node + 1];
      }
  for (std::size_t p = 0; p < n; ++p) user_at[p + 1] += user_at[p];
  std::vector<std::size_t> users(user_at[n]);
  {
    std::vector<std::size_t> fill(user_at.begin(), user_at.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t s = 0; s < inputs(i).size(); ++s)
        if (!nodes_[i].inputs[s].absent) users[fill[inputs(i)[s].node]++] = i;
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<std::size_t> out;
  out.reserve(n);
  while (!ready.empty()) {
    std::size_t i = ready.top();
    ready.pop();
    out.push_back(i);
    for (std::size_t k = user_at[i]; k < user_at[i + 1]; ++k)
      if (--pending[users[k]] == 0) ready.push(users[k]);
  }
  if (out.size() == n) return out;
  // Every node left waits on another node left: walking producers from the first one must
  // come back to a node already seen, and that loop is a cycle.
  std::size_t start = 0;
  while (pending[start] == 0) ++start;
  std::vector<std::size_t> walk;
  std::vector<int> seen_at(n, -1);
  std::size_t cur = start;
  while (seen_at[cur] < 0) {
    seen_at[cur] = static_cast<int>(walk.size());
    walk.push_back(cur);
    for (std::size_t s = 0; s < inputs(cur).size(); ++s) {
      if (nodes_[cur].inputs[s].absent || pending[inputs(cur)[s].node] == 0) continue;
      cur = inputs(cur)[s].node;
      break;
    }
  }
  std::vector<std::size_t> cycle(walk.begin() + seen_at[cur], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // producers first
  auto first = std::min_element(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), first, cycle.end());
  std::string path;
  for (std::size_t i : cycle) path += "'" + nodes_[i].id + "' -> ";
  path += "'" + nodes_[cycle.front()].id + "'";
  throw Error(nodes_[cycle.front()].loc, "node '" + nodes_[cycle.front()].id + "' is part of a cycle: " + path);
}

Graph GraphBuilder::build(const std::string& file) {
  index_output_names();
  // Every node's resolved inputs in one array (node i's from at[i]): a vector per node
  // was a million allocations at 10^6 nodes.
  std::vector<std::size_t> at(nodes_.size() + 1, 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) at[i + 1] = at[i] + nodes_[i].inputs.size();
  std::vector<Resolved> resolved(at.back());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const PendingNode& n = nodes_[i];
    if (n.op.empty()) throw Error(n.loc, "node '" + n.id + "': has no op type");
    for (std::size_t s = 0; s < n.inputs.size(); ++s)
      if (!n.inputs[s].absent)
        resolved[at[i] + s] = resolve(n.inputs[s], [&] { return "node '" + n.id + "': input " + std::to_string(s); });
  }
  std::vector<Resolved> graph_inputs, graph_outputs;
  std::vector<bool> input_seen(nodes_.size(), false);
  for (std::size_t k = 0; k < inputs_.size(); ++k) {
    Resolved r = resolve(inputs_[k], [&] { return "graph input " + std::to_string(k); });
    if (r.port != 0) throw Error(inputs_[k].loc, "graph input " + std::to_string(k) + " must name a node, not an output of one");
    if (std::string err = checks::graph_input_op_problem(nodes_[r.node].id, nodes_[r.node].op); !err.empty())
      throw Error(inputs_[k].loc, err);
    if (input_seen[r.node])  // the writers would keep one, so a re-read graph would differ
      throw Error(inputs_[k].loc, "graph input '" + nodes_[r.node].id + "' is listed twice");
    input_seen[r.node] = true;
    graph_inputs.push_back(r);
  }
  for (std::size_t k = 0; k < outputs_.size(); ++k)
    graph_outputs.push_back(resolve(outputs_[k], [&] { return "graph output " + std::to_string(k); }));

  Graph g;
  g.source_file = file;
  g.reserve(nodes_.size());
  // Ids are unique (add_node checked them): the graph files them in one ordered pass at
  // the end rather than one random lookup and insert per node.
  GraphTuning::begin_bulk(g);
  std::vector<NodeId> made(nodes_.size(), kNoNode);
  // Most nodes repeat the op of a node shortly before: interning takes a lock and a hash.
  const std::string* last_op = nullptr;
  OpType op;
  for (std::size_t i : order(resolved, at)) {
    PendingNode& n = nodes_[i];
    InputList ins;
    ins.reserve(n.inputs.size());
    for (std::size_t s = 0; s < n.inputs.size(); ++s)
      ins.push_back(n.inputs[s].absent ? ValueRef{} : ValueRef{made[resolved[at[i] + s].node], resolved[at[i] + s].port});
    auto count = static_cast<std::uint32_t>(output_count(n));
    if (!last_op || *last_op != n.op) op = OpType::intern(n.op), last_op = &n.op;
    made[i] = g.add_node(std::move(n.id), op, std::move(ins), std::move(n.attrs), count, std::move(n.loc));
    // Only names and types that are there: touching an output's entry gives the node a list
    // of them (68 bytes a node at 10^6 nodes, kept for the graph's life).
    auto& infos = g.output_infos(made[i]);
    for (std::size_t k = 0; k < n.output_names.size(); ++k)
      if (!n.output_names[k].empty()) infos[k].name = std::move(n.output_names[k]);
    for (std::size_t k = 0; k < n.output_types.size() && k < infos.size(); ++k)
      if (!(n.output_types[k] == ValueType{})) infos[k].type = std::move(n.output_types[k]);
    // Done with it: the graph's next nodes reuse its memory rather than adding to the peak.
    n = PendingNode{};
  }
  std::vector<NodeId> in_list;
  for (const Resolved& r : graph_inputs) in_list.push_back(made[r.node]);
  g.set_inputs_list(std::move(in_list));
  for (const Resolved& r : graph_outputs) g.add_output(ValueRef{made[r.node], r.port});
  GraphTuning::end_bulk(g);
  // What validate() would check besides names holds by construction: references were
  // resolved, ports and duplicate ids checked above, cycles refused by order(), and the
  // use lists are Graph's own. Its per-node id lookups were a tenth of a 10^6-node load.
  g.validate_value_names();
  return g;
}

}  // namespace graphfuse::textio
