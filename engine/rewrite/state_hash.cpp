// Node and graph-state hashes for oscillation detection.
#include "rewrite/state_hash.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <string_view>
#include <type_traits>

namespace graphfuse::rewrite {

namespace {

// splitmix64's finaliser: a strong 64-bit mix, so sums of hashes do not cancel by accident.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Hasher {
  std::uint64_t h = 0;
  void add(std::uint64_t v) { h = mix(h ^ v); }
  void add(std::string_view s) { add(std::hash<std::string_view>{}(s) + s.size()); }
  void add(const Tensor& t) {
    add(static_cast<std::uint64_t>(t.dtype));
    for (std::int64_t d : t.shape) add(static_cast<std::uint64_t>(d));
    if (t.data) add(std::string_view(*t.data));
  }
  void add(const AttrValue& v) {
    add(static_cast<std::uint64_t>(v.index()));
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::int64_t>) add(static_cast<std::uint64_t>(x));
          else if constexpr (std::is_same_v<T, float>) add(std::bit_cast<std::uint32_t>(x));
          else if constexpr (std::is_same_v<T, bool>) add(x ? 1u : 0u);
          else if constexpr (std::is_same_v<T, std::string>) add(std::string_view(x));
          else if constexpr (std::is_same_v<T, Tensor>) add(x);
          else if constexpr (std::is_same_v<T, Opaque>) {
            add(std::string_view(x.kind));
            add(std::string_view(x.bytes));
          } else {  // the list kinds
            add(static_cast<std::uint64_t>(x.size()));
            for (const auto& e : x) add(AttrValue(e));
          }
        },
        v);
  }
};

}  // namespace

std::uint64_t node_state_hash(const Graph& g, NodeId n) {
  const Node& nd = g.node(n);
  Hasher h;
  h.add(std::string_view(nd.id));
  h.add(nd.op.name());
  h.add(static_cast<std::uint64_t>(nd.outputs.size()));
  for (ValueRef v : nd.inputs) {
    if (!v.valid()) {
      h.add(~0ull);
      continue;
    }
    h.add(std::string_view(g.node(v.node).id));
    h.add(static_cast<std::uint64_t>(v.port));
  }
  for (const auto& [key, value] : nd.attrs) {
    h.add(std::string_view(key));
    h.add(value);
  }
  return mix(h.h);
}

void StateDelta::before(const Graph& g, std::vector<NodeId> nodes) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  pending_ = std::move(nodes);
  for (NodeId n : pending_)
    if (g.alive(n)) value_ -= node_state_hash(g, n);
}

bool StateDelta::after(const Graph& g, const std::vector<NodeId>& created, const std::vector<NodeId>& changed) {
  for (NodeId n : pending_)
    if (g.alive(n)) value_ += node_state_hash(g, n);
  for (NodeId n : created)
    if (g.alive(n)) value_ += node_state_hash(g, n);
  bool complete = std::all_of(changed.begin(), changed.end(), [&](NodeId n) {
    return std::binary_search(pending_.begin(), pending_.end(), n);
  });
  pending_.clear();
  return complete;
}

}  // namespace graphfuse::rewrite
