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
// How far past the last erase an erase looks before it asks the index.
constexpr std::size_t kNear = 4;
std::uint64_t use_hash(Use u) {
  return (std::uint64_t{u.node} << 32 | u.slot) * 0x9E3779B97F4A7C15ull;
}
// UseList::work()'s counter. The operations below count into it directly: through work(),
// an out-of-line call (the library is position-independent, so the compiler may not
// inline a function with external linkage) on every push and erase.
thread_local std::uint64_t work_done = 0;
}  // namespace

std::uint64_t& UseList::work() { return work_done; }

/// The indexed form: `items` in the order made, erased ones left as holes (trailing
/// holes are dropped at once). Most erases are found without the index, by where they
/// stand: the rewriter removes a hub's users in about the order they were made (so the
/// next one is just past the last erase: `next`), or removes the use it made last. Only
/// an erase found neither way reads the index, which is built then, not before: pushes
/// only append, and a hub whose erases all come in order never has an index. That keeps
/// hub operations sequential in memory; a hash index (one cache miss per push and erase
/// once a hub's table outgrows the caches) made time per node 1.3-1.45x higher at 10^7
/// nodes than at 10^5.
///
/// `index` (a power of two, at most half full counting erased and stale slots) holds
/// position + 1 of items[0, indexed) under each use's hash, kGone where erased through
/// the index. A slot can go stale (its use erased without the index, or its position
/// dropped and reused); a lookup checks items[position] against the use, so a stale
/// slot never matches a use that is not there.
struct UseList::Big {
  std::vector<Use> items;
  std::vector<std::uint32_t> index;
  std::uint32_t indexed = 0;  // items[0, indexed) are in the index
  std::uint32_t entries = 0;  // index slots not kFree
  std::uint32_t holes = 0;
  std::uint32_t next = 0;     // the position after the last erase
  bool in_order = true;       // the last erase was found without the index

  std::size_t home(Use u) const {
    return static_cast<std::size_t>(use_hash(u) >> (64 - std::countr_zero(index.size())));
  }
  /// Drops the holes in place (the order stays), and the index with them.
  void compact() {
    std::size_t kept = 0, new_next = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i == next) new_next = kept;
      if (items[i].node != kNoNode) items[kept++] = items[i];
    }
    work_done += items.size();
    next = static_cast<std::uint32_t>(next >= items.size() ? kept : new_next);
    items.resize(kept);
    holes = 0;
    std::vector<std::uint32_t>().swap(index);
    indexed = entries = 0;
  }
  /// Brings items[indexed, size) into the index, first building the index afresh when
  /// they would fill it past half.
  void catch_up() {
    if (indexed == items.size()) return;
    if (index.empty() || 2 * (std::size_t{entries} + items.size() - indexed) > index.size()) {
      index.assign(std::bit_ceil(std::max<std::size_t>(2 * items.capacity(), 64)), kFree);
      indexed = entries = 0;
    }
    std::size_t mask = index.size() - 1;
    for (std::size_t i = indexed; i < items.size(); ++i) {
      ++work_done;
      if (items[i].node == kNoNode) continue;
      std::size_t at = home(items[i]);
      while (index[at] != kFree) at = (at + 1) & mask;
      index[at] = static_cast<std::uint32_t>(i + 1);
      ++entries;
    }
    indexed = static_cast<std::uint32_t>(items.size());
  }
  /// Where u is, found through the index (its slot marked erased); npos when absent.
  std::size_t take_from_index(Use u) {
    catch_up();
    std::size_t mask = index.size() - 1;
    for (std::size_t at = home(u);; at = (at + 1) & mask) {
      ++work_done;
      std::uint32_t v = index[at];
      if (v == kFree) return npos;
      if (v == kGone || v > items.size() || items[v - 1] != u) continue;
      index[at] = kGone;
      return v - 1;
    }
  }
  /// Where u is: just past the last erase, the last use, or through the index. While
  /// erases come in order, the first two are tried first; once one is found elsewhere,
  /// the index is asked at once (no reads wasted on a shuffled order), until an erase
  /// found through it stands where an in-order one would.
  std::size_t find(Use u) {
    if (in_order) {
      for (std::size_t i = next, end = std::min(items.size(), next + kNear); i < end; ++i) {
        ++work_done;
        if (items[i] == u) return i;
      }
      if (!items.empty()) {
        ++work_done;
        if (items.back() == u) return items.size() - 1;
      }
    }
    std::size_t at = take_from_index(u);
    in_order = at != npos && ((at >= next && at < next + kNear) || at + 1 == items.size());
    return at;
  }
  /// Erases u; false when it is not in the list.
  bool erase(Use u) {
    std::size_t at = find(u);
    if (at == npos) return false;
    items[at] = kHole;
    ++holes;
    next = static_cast<std::uint32_t>(at + 1);
    if (at + 1 == items.size()) {
      // The erased use was the last: drop it and the holes before it, so that the last
      // entry stays a use (find() checks it) and `next` stays within the list.
      while (!items.empty() && items.back().node == kNoNode) {
        items.pop_back();
        --holes;
        ++work_done;
      }
      next = std::min<std::uint32_t>(next, static_cast<std::uint32_t>(items.size()));
      indexed = std::min<std::uint32_t>(indexed, static_cast<std::uint32_t>(items.size()));
    }
    return true;
  }
  static constexpr std::size_t npos = ~std::size_t{0};
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

void UseList::take_(UseList& o) noexcept {
  size_ = o.size_;
  cap_ = o.cap_;
  if (cap_ <= 1) one_ = o.one_;
  else if (cap_ == kBig) big_ = o.big_;
  else heap_ = o.heap_;
  o.size_ = 0;
  o.cap_ = 1;
  o.one_ = Use{kNoNode, 0};
}

UseList::UseList(UseList&& o) noexcept { take_(o); }

UseList& UseList::operator=(UseList&& o) noexcept {
  if (this != &o) {
    release_();
    take_(o);
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
  big->items.reserve(2 * std::size_t{size_});
  big->items.assign(heap_, heap_ + size_);
  work_done += size_;
  delete[] heap_;
  big_ = big;
  cap_ = kBig;
}

void UseList::push(Use u) {
  if (cap_ == kBig) {
    Big& b = *big_;
    if (b.items.size() == b.items.capacity()) {
      // Full: compact instead of growing when half of it is holes; growing copies it.
      if (2 * std::size_t{b.holes} >= b.items.size()) b.compact();
      else work_done += b.items.size();
    }
    b.items.push_back(u);
    ++work_done;
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
    work_done += size_;
    if (cap_ > 1) delete[] heap_;
    heap_ = grown;
    cap_ = cap;
  }
  data_()[size_++] = u;
  ++work_done;
}

void UseList::erase(Use u) {
  if (cap_ == kBig) {
    Big& b = *big_;
    if (!b.erase(u)) return;
    --size_;
    // Compact once the holes outnumber the uses: each erase pays for two entries' move.
    if (b.holes > size_ && b.holes >= kIndexFrom) b.compact();
    return;
  }
  Use* d = data_();
  Use* it = std::find(d, d + size_, u);
  work_done += static_cast<std::uint64_t>(size_);  // the search and the shift together
  if (it == d + size_) return;
  std::copy(it + 1, d + size_, it);
  --size_;
  if (cap_ > 1 && size_ <= 1) {  // back inline (see the class comment)
    const Use rest = size_ == 1 ? heap_[0] : Use{kNoNode, 0};
    delete[] heap_;
    one_ = rest;
    cap_ = 1;
  }
}

void UseList::clear() { release_(); }

// ---- Reserved records -------------------------------------------------------------

std::vector<std::span<std::byte>> records::unfilled_records(Graph& g, std::size_t upto) {
  const GraphStorage& s = g.storage();
  std::vector<std::span<std::byte>> nodes, hot, out;
  s.nodes.raw_spans(s.nodes.size(), upto, nodes);
  s.hot.raw_spans(s.hot.size(), upto, hot);
  // Both stores chunk alike: the loader fills chunk k of each at the same time.
  for (std::size_t k = 0; k < std::max(nodes.size(), hot.size()); ++k) {
    if (k < nodes.size()) out.push_back(nodes[k]);
    if (k < hot.size()) out.push_back(hot[k]);
  }
  return out;
}


}  // namespace graphfuse
