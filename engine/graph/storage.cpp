// Graph storage pieces: use lists and the Boost.Graph snapshot.
#include "graph/storage.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace graphfuse {

// ---- UseList ----------------------------------------------------------------------

UseList::UseList(const UseList& o) : one_{kNoNode, 0} {
  for (Use u : o.view()) push(u);
}

UseList& UseList::operator=(const UseList& o) {
  if (this != &o) {
    clear();
    for (Use u : o.view()) push(u);
  }
  return *this;
}

UseList::UseList(UseList&& o) noexcept : size_(o.size_), cap_(o.cap_) {
  if (cap_ <= 1) one_ = o.one_;
  else heap_ = o.heap_;
  o.size_ = 0;
  o.cap_ = 1;
  o.one_ = Use{kNoNode, 0};
}

UseList& UseList::operator=(UseList&& o) noexcept {
  if (this != &o) {
    release_();
    size_ = o.size_;
    cap_ = o.cap_;
    if (cap_ <= 1) one_ = o.one_;
    else heap_ = o.heap_;
    o.size_ = 0;
    o.cap_ = 1;
    o.one_ = Use{kNoNode, 0};
  }
  return *this;
}

void UseList::release_() {
  if (cap_ > 1) delete[] heap_;
  cap_ = 1;
  size_ = 0;
  one_ = Use{kNoNode, 0};
}

void UseList::push(Use u) {
  if (size_ == cap_) {
    std::uint32_t cap = cap_ * 2;
    Use* grown = new Use[cap];
    std::copy(data_(), data_() + size_, grown);
    if (cap_ > 1) delete[] heap_;
    heap_ = grown;
    cap_ = cap;
  }
  data_()[size_++] = u;
}

void UseList::erase(Use u) {
  Use* d = data_();
  Use* it = std::find(d, d + size_, u);
  if (it == d + size_) return;
  std::copy(it + 1, d + size_, it);
  --size_;
}

void UseList::clear() { release_(); }

// ---- Boost snapshot ---------------------------------------------------------------

BoostGraph boost_snapshot(const Graph& g) {
  BoostGraph b(g.capacity());
  for (NodeId n = 0; n < g.capacity(); ++n) {
    if (!g.alive(n)) continue;
    const Node& nd = g.node(n);
    b[n] = VertexLabel{nd.op, static_cast<std::uint32_t>(nd.inputs.size()), true};
  }
  // Out-edges in use order, as Graph::uses() lists them.
  for (NodeId n = 0; n < g.capacity(); ++n) {
    if (!g.alive(n)) continue;
    for (Use u : g.uses(n))
      boost::add_edge(n, u.node, EdgeLabel{g.node(u.node).inputs[u.slot].port, u.slot}, b);
  }
  return b;
}

}  // namespace graphfuse
