// Graph storage pieces: use lists and the Boost.Graph snapshot.
#include "graph/storage.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

namespace graphfuse {

// ---- UseList ----------------------------------------------------------------------

namespace {
constexpr Use kHole{kNoNode, 0};
constexpr std::uint32_t kFree = 0;                // index slot: empty
constexpr std::uint32_t kGone = 0xffffffffu;      // index slot: its use was erased
std::uint64_t use_hash(Use u) {
  return (std::uint64_t{u.node} << 32 | u.slot) * 0x9E3779B97F4A7C15ull;
}
}  // namespace

std::uint64_t& UseList::work() {
  thread_local std::uint64_t steps = 0;
  return steps;
}

/// The indexed form: `items` in the order made, erased ones left as holes; `index`
/// (a power of two, at least twice items' capacity, so at most half full) holds
/// position + 1 of each use under its hash, kGone where one was erased.
struct UseList::Big {
  std::vector<Use> items;
  std::vector<std::uint32_t> index;
  std::uint32_t holes = 0;

  std::size_t home(Use u) const {
    return static_cast<std::size_t>(use_hash(u) >> (64 - std::countr_zero(index.size())));
  }
  /// Drops the holes and rebuilds the index for a capacity of `cap` items.
  void rebuild(std::size_t cap) {
    std::vector<Use> kept;
    kept.reserve(cap);
    for (Use u : items)
      if (u.node != kNoNode) kept.push_back(u);
    work() += items.size();
    items = std::move(kept);
    holes = 0;
    // Sized for the capacity the array really got, so the index stays at most half full
    // until the next push that reallocates (which rebuilds).
    index.assign(std::bit_ceil(std::max<std::size_t>(2 * items.capacity(), 64)), kFree);
    for (std::size_t i = 0; i < items.size(); ++i) insert(items[i], i);
  }
  void insert(Use u, std::size_t pos) {
    std::size_t mask = index.size() - 1;
    std::size_t at = home(u);
    while (index[at] != kFree && index[at] != kGone) at = (at + 1) & mask;
    index[at] = static_cast<std::uint32_t>(pos + 1);
    ++work();
  }
  /// Erases u; false when it is not in the list.
  bool erase(Use u) {
    std::size_t mask = index.size() - 1;
    for (std::size_t at = home(u);; at = (at + 1) & mask) {
      ++work();
      std::uint32_t v = index[at];
      if (v == kFree) return false;
      if (v == kGone || items[v - 1] != u) continue;
      index[at] = kGone;
      items[v - 1] = kHole;
      ++holes;
      return true;
    }
  }
};

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
  else if (cap_ == kBig) big_ = o.big_;
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
    else if (cap_ == kBig) big_ = o.big_;
    else heap_ = o.heap_;
    o.size_ = 0;
    o.cap_ = 1;
    o.one_ = Use{kNoNode, 0};
  }
  return *this;
}

void UseList::release_() {
  if (cap_ == kBig) delete big_;
  else if (cap_ > 1) delete[] heap_;
  cap_ = 1;
  size_ = 0;
  one_ = Use{kNoNode, 0};
}

UseRange UseList::view() const {
  if (cap_ == kBig) return {big_->items.data(), big_->items.data() + big_->items.size(), size_};
  return {data_(), data_() + size_, size_};
}

void UseList::to_big_() {
  auto* big = new Big;
  big->items.assign(heap_, heap_ + size_);
  big->rebuild(2 * std::size_t{size_});
  delete[] heap_;
  big_ = big;
  cap_ = kBig;
}

void UseList::push(Use u) {
  if (cap_ == kBig) {
    Big& b = *big_;
    if (b.items.size() == b.items.capacity()) b.rebuild(b.holes * 2 >= b.items.size() ? b.items.size() : 2 * b.items.size());
    b.insert(u, b.items.size());
    b.items.push_back(u);
    ++size_;
    return;
  }
  if (size_ == cap_) {
    if (cap_ >= kIndexFrom) {
      to_big_();
      push(u);
      return;
    }
    std::uint32_t cap = cap_ * 2;
    Use* grown = new Use[cap];
    std::copy(data_(), data_() + size_, grown);
    work() += size_;
    if (cap_ > 1) delete[] heap_;
    heap_ = grown;
    cap_ = cap;
  }
  data_()[size_++] = u;
  ++work();
}

void UseList::erase(Use u) {
  if (cap_ == kBig) {
    Big& b = *big_;
    if (!b.erase(u)) return;
    --size_;
    // Compact once the holes outnumber the uses: each erase pays for two entries' move.
    if (b.holes > size_ && b.holes >= kIndexFrom) b.rebuild(b.items.capacity());
    return;
  }
  Use* d = data_();
  Use* it = std::find(d, d + size_, u);
  work() += static_cast<std::uint64_t>(size_);  // the search and the shift together
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
