// GraphBuilder: nodes as written in a file -> a validated Graph, producers first, with
// every reference, name clash and cycle reported at its file position.
#include "graph_build.h"

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

/// Splits "name:k" at the last ':' when k is a number; false otherwise.
bool split_port(const std::string& s, std::string& name, std::uint32_t& port) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size() || s.size() - colon > 8)
    return false;
  for (std::size_t i = colon + 1; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  name = s.substr(0, colon);
  port = static_cast<std::uint32_t>(std::stoul(s.substr(colon + 1)));
  return true;
}

std::size_t output_count(const PendingNode& n) { return std::max<std::size_t>(1, n.output_names.size()); }

}  // namespace

void GraphBuilder::add_node(PendingNode n) {
  auto [it, fresh] = by_id_.emplace(n.id, nodes_.size());
  if (!fresh) {
    const SourceLoc& first = nodes_[it->second].loc;
    throw Error(n.loc, "duplicate node id '" + n.id + "'" +
                           (first.known() ? " (first defined at " + first.str() + ")" : ""));
  }
  // An output named like its default (`id`, `id:k`) is the same as an unnamed one.
  for (std::size_t k = 0; k < n.output_names.size(); ++k)
    if (n.output_names[k] == default_name(n.id, k)) n.output_names[k].clear();
  nodes_.push_back(std::move(n));
}

bool GraphBuilder::has_node(const std::string& id) const { return by_id_.count(id) != 0; }

void GraphBuilder::index_output_names() {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const PendingNode& n = nodes_[i];
    for (std::size_t k = 0; k < n.output_names.size(); ++k) {
      const std::string& name = n.output_names[k];
      if (name.empty()) continue;
      std::string what = "node '" + n.id + "': output name '" + name + "'";
      if (auto it = by_id_.find(name); it != by_id_.end())
        throw Error(n.loc, what + " clashes with the id of node '" + name + "'" +
                               (nodes_[it->second].loc.known() ? " at " + nodes_[it->second].loc.str() : ""));
      std::string base;
      std::uint32_t port = 0;
      if (split_port(name, base, port) && by_id_.count(base))
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
  } else if (auto it = by_id_.find(r.name); it != by_id_.end()) {
    return Resolved{it->second, 0};
  } else if (auto o = by_output_name_.find(r.name); o != by_output_name_.end()) {
    return o->second;
  } else {
    by_id = split_port(r.name, id, out.port);
  }
  auto it = by_id ? by_id_.find(id) : by_id_.end();
  if (it == by_id_.end())
    throw Error(r.loc, user() + " refers to '" + r.name + "', which is no node id or output name");
  out.node = it->second;
  std::size_t count = output_count(nodes_[out.node]);
  if (out.port >= count)
    throw Error(r.loc, user() + " refers to output " + std::to_string(out.port) + " of '" + id +
                           "', which has " + outputs_phrase(count) +
                           " (a node's `outputs` list gives its output count)");
  return out;
}

std::vector<std::size_t> GraphBuilder::order(const std::vector<std::vector<Resolved>>& inputs) const {
  // Kahn's algorithm taking the lowest file index among ready nodes: a file that is already
  // producers-first keeps its order, so ids (and everything written later) stay stable.
  std::size_t n = nodes_.size();
  std::vector<std::size_t> pending(n, 0);
  std::vector<std::vector<std::size_t>> users(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t s = 0; s < inputs[i].size(); ++s) {
      if (nodes_[i].inputs[s].absent) continue;
      ++pending[i];
      users[inputs[i][s].node].push_back(i);
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
    for (std::size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
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
    for (std::size_t s = 0; s < inputs[cur].size(); ++s) {
      if (nodes_[cur].inputs[s].absent || pending[inputs[cur][s].node] == 0) continue;
      cur = inputs[cur][s].node;
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
  std::vector<std::vector<Resolved>> inputs(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const PendingNode& n = nodes_[i];
    for (std::size_t s = 0; s < n.inputs.size(); ++s) {
      if (n.inputs[s].absent) {
        inputs[i].push_back({});
        continue;
      }
      inputs[i].push_back(resolve(n.inputs[s], [&] { return "node '" + n.id + "': input " + std::to_string(s); }));
    }
  }
  std::vector<Resolved> graph_inputs, graph_outputs;
  for (std::size_t k = 0; k < inputs_.size(); ++k) {
    Resolved r = resolve(inputs_[k], [&] { return "graph input " + std::to_string(k); });
    if (r.port != 0) throw Error(inputs_[k].loc, "graph input " + std::to_string(k) + " must name a node, not an output of one");
    graph_inputs.push_back(r);
  }
  for (std::size_t k = 0; k < outputs_.size(); ++k)
    graph_outputs.push_back(resolve(outputs_[k], [&] { return "graph output " + std::to_string(k); }));

  Graph g;
  g.source_file = file;
  std::vector<NodeId> made(nodes_.size(), kNoNode);
  for (std::size_t i : order(inputs)) {
    PendingNode& n = nodes_[i];
    std::vector<ValueRef> ins;
    for (std::size_t s = 0; s < n.inputs.size(); ++s)
      ins.push_back(n.inputs[s].absent ? ValueRef{} : ValueRef{made[inputs[i][s].node], inputs[i][s].port});
    auto count = static_cast<std::uint32_t>(output_count(n));
    made[i] = g.add_node(n.id, OpType::intern(n.op), std::move(ins), std::move(n.attrs), count, n.loc);
    auto& infos = g.output_infos(made[i]);
    for (std::size_t k = 0; k < n.output_names.size(); ++k) infos[k].name = n.output_names[k];
    for (std::size_t k = 0; k < n.output_types.size() && k < infos.size(); ++k) infos[k].type = n.output_types[k];
  }
  std::vector<NodeId> in_list;
  for (const Resolved& r : graph_inputs) in_list.push_back(made[r.node]);
  g.set_inputs_list(std::move(in_list));
  for (const Resolved& r : graph_outputs) g.add_output(ValueRef{made[r.node], r.port});
  g.validate();
  return g;
}

}  // namespace graphfuse::textio
