// Graph storage: nodes in chunks that never move, hot records (use lists, op, liveness)
// apart from cold node data, and an open-addressing id index.
//
// Why not boost::adjacency_list (the first design): with bidirectional edges it keeps
// every edge in a std::list plus an entry in two vectors (about 90 bytes an edge), holds
// vertices in one vector that triples the memory while it grows, and duplicates what
// Node::inputs already says. A million-node graph needed ~630 bytes a node; this layout
// needs about a third of that. Boost's algorithms run on this storage directly, through
// the graph_traits adapter of graphfuse/boost_graph.h.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/attr_intern.h"
#include "graph/quick_hash.h"
#include "graphfuse/graph.h"
#include "memory/huge_pages.h"

namespace graphfuse {

/// The uses of a node's outputs, in the order they were made. Most values have one
/// consumer, so one use lives inline; more spill to the heap, and a list that falls back
/// to one use (or none) returns inline and frees its block. Why it returns: a fusion
/// that takes over its root in place gives the fused node its leaves' values as inputs
/// while the matched node that read them is still there (it is swept afterwards), so
/// each such value has two uses for a moment. Kept on the heap, every fused input left a
/// block of one use behind (about 4 MB of fresh memory, 1,000 page faults, in a round
/// fusing 10^5 chains), and the list behind a pointer for good.
///
/// Every operation is O(1) amortized whatever the number of uses (a shape
/// constant or a scalar read by every Add of a model has 10^5..10^7 uses, and an erase
/// that searched and shifted the list was paid once per edge, making loads and rewrites
/// quadratic). Up to kIndexFrom uses, the list is a plain array: erase searches and
/// shifts at most that many. Past it, the list becomes Big: an array whose erased entries
/// are left as holes (so the order of the others never changes, and nothing shifts);
/// once holes outnumber the uses, one pass compacts it in place. An erase looks for its
/// use just past the previous erase and at the end first (where the rewriter's erases
/// almost always are), and only then in a hash index from use to position, built when
/// first needed and brought up to date lazily, so pushes only append and a hub erased
/// in order touches memory sequentially (a 10^7-node graph's hubs no longer cost a
/// cache miss per use). Only hubs erased out of order pay for the index (about 16 bytes
/// a use). Readers see the holes skipped (UseRange); nothing a const method does
/// writes, so concurrent readers stay safe.
class UseList {
 public:
  /// Lists reaching this many uses switch to the indexed form.
  static constexpr std::uint32_t kIndexFrom = 32;

  UseList() : one_{kNoNode, 0} {}
  UseList(const UseList& o);
  UseList& operator=(const UseList& o);
  UseList(UseList&& o) noexcept;
  UseList& operator=(UseList&& o) noexcept;
  ~UseList() { release_(); }

  UseRange view() const;
  std::size_t size() const { return size_; }
  /// Whether the uses live in a heap block (more than one, or ever over kIndexFrom).
  bool spilled() const { return cap_ != 1; }
  void push(Use u);
  /// Removes u (if present), keeping the others in order.
  void erase(Use u);
  void clear();

  /// Work counter for tests (tests/unit/fanout_work_test.cpp): use entries read, moved or
  /// probed by push, erase and compaction on this thread. It fails a test, not a timing,
  /// when an operation becomes linear in the number of uses again.
  static std::uint64_t& work();

 private:
  struct Big;
  static constexpr std::uint32_t kBig = 0xffffffffu;  // cap_ of the indexed form
  const Use* data_() const { return cap_ <= 1 ? &one_ : heap_; }
  Use* data_() { return cap_ <= 1 ? &one_ : heap_; }
  void to_big_();
  void release_();
  // Takes o's storage and leaves o empty (the moves' shared step).
  void take_(UseList& o) noexcept;
  std::uint32_t size_ = 0;  // uses (holes not counted)
  std::uint32_t cap_ = 1;   // 1: the inline slot; kBig: big_; else heap_ holds cap_ uses
  union {
    Use one_;
    Use* heap_;
    Big* big_;
  };
};

/// What graph traversals read, kept apart from the Node (112 bytes, mostly cold: id,
/// attributes, location) so that a pass over a million nodes streams 24 MB, not 136.
struct HotRecord {
  UseList uses;
  OpType op;           // the same as Node::op
  bool alive = false;
  // In the padding: is an output of the node a graph output / is the node a graph input?
  // They make has_graph_output(), is_output() and remove_node() O(1) for other nodes
  // rather than a scan of the graph's output and input lists per call.
  bool output = false;
  bool input = false;
};

/// Elements in chunks of 64, 128, 256, ... : appending never moves an element
/// (references stay valid), never copies the graph to grow, and leaves no half-empty
/// big vector (a chunk's untouched tail costs address space, not memory). Chunks start
/// on a cache line, chunks of 4 MB or more on a huge page (reserve() advises the part
/// about to be filled as huge pages: huge_pages.h).
template <class T>
class ChunkedStore {
 public:
  ChunkedStore() = default;
  ChunkedStore(const ChunkedStore& o) {
    for (std::size_t i = 0; i < o.size(); ++i) emplace_back() = o[i];
  }
  ChunkedStore& operator=(const ChunkedStore& o) {
    if (this != &o) *this = ChunkedStore(o);
    return *this;
  }
  ChunkedStore(ChunkedStore&& o) noexcept : chunks_(std::move(o.chunks_)), size_(o.size_) {
    o.chunks_.clear();
    o.size_ = 0;
  }
  ChunkedStore& operator=(ChunkedStore&& o) noexcept {
    if (this != &o) {
      clear();
      chunks_ = std::move(o.chunks_);
      size_ = o.size_;
      o.chunks_.clear();
      o.size_ = 0;
    }
    return *this;
  }
  ~ChunkedStore() { clear(); }

  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return *slot_(i); }
  const T& operator[](std::size_t i) const { return *const_cast<ChunkedStore*>(this)->slot_(i); }
  T& emplace_back() {
    if (chunk_of_(size_) >= chunks_.size()) add_chunk_();
    T* p = new (slot_(size_)) T();
    ++size_;
    return *p;
  }
  /// Allocates the chunks elements up to `n` will live in, without touching them. The
  /// elements from size() to `n` are about to be filled: their memory is backed with huge
  /// pages where it can be (huge_pages.h).
  void reserve(std::size_t n) {
    if (n == 0) return;
    while (chunks_.size() <= chunk_of_(n - 1)) add_chunk_();
    std::vector<std::span<std::byte>> spans;
    raw_spans(size_, n, spans);
    for (std::span<std::byte> s : spans) advise_huge_pages(s.data(), s.size());
  }
  /// The memory of elements [from, to), which reserve() allocated, one span per chunk in
  /// index order, appended to `out`.
  void raw_spans(std::size_t from, std::size_t to, std::vector<std::span<std::byte>>& out) const {
    while (from < to) {
      std::size_t upto = std::min(to, chunk_start_(chunk_of_(from) + 1));
      out.emplace_back(reinterpret_cast<std::byte*>(const_cast<ChunkedStore*>(this)->slot_(from)), (upto - from) * sizeof(T));
      from = upto;
    }
  }
  void clear() {
    for (std::size_t i = 0; i < size_; ++i) slot_(i)->~T();
    size_ = 0;
    chunks_.clear();
  }

 private:
  static constexpr std::size_t kFirstBits = 6;  // the first chunk holds 64 elements
  static constexpr std::align_val_t kAlign{64};  // a cache line
  static std::size_t chunk_of_(std::size_t i) {
    return static_cast<std::size_t>(std::bit_width((i >> kFirstBits) + 1)) - 1;
  }
  /// The index of chunk k's first element.
  static std::size_t chunk_start_(std::size_t k) { return ((std::size_t{1} << k) - 1) << kFirstBits; }
  T* slot_(std::size_t i) {
    std::size_t k = chunk_of_(i);
    return chunks_[k].get() + (i - chunk_start_(k));
  }
  void add_chunk_() {
    const ArrayMemory m = allocate_array(chunk_bytes_(chunks_.size()), kAlign);
    chunks_.emplace_back(static_cast<T*>(m.data), Free{m.align});
  }
  static std::size_t chunk_bytes_(std::size_t k) { return (std::size_t{1} << (k + kFirstBits)) * sizeof(T); }
  struct Free {
    std::align_val_t align = kAlign;  // what the chunk was allocated with
    void operator()(T* p) const { ::operator delete(p, align); }
  };
  std::vector<std::unique_ptr<T, Free>> chunks_;  // raw storage; the first size_ constructed
  std::size_t size_ = 0;
};

/// NodeIds by id string: open addressing with linear probing over 8-byte slots (NodeId
/// and 32 bits of the id's hash; the string itself stays in the node record, read only
/// when the hash bits agree). 11-22 bytes a node, no allocation per node.
///
/// Removing a node does not touch the table (a random access into it costs more than
/// the rest of the removal): the slot goes stale, lookups skip it because the node is
/// dead, and the next rehash drops it. NodeIds are never reused, so a stale slot can
/// never come back to life.
class IdIndex {
 public:
  /// The node whose id is `id`, or kNoNode. `is(n)` says whether live node n has that id
  /// (false for dead nodes).
  template <class Is>
  NodeId find(std::string_view id, const Is& is) const {
    return find(hash_(id), is);
  }
  /// find() for an id whose hash_of() is `h`.
  template <class Is>
  NodeId find(std::uint32_t h, const Is& is) const {
    if (slots_.empty()) return kNoNode;
    for (std::size_t i = home_(h);; i = next_(i)) {
      const Slot& s = slots_[i];
      if (s.node == kEmpty) return kNoNode;
      if (s.hash == h && s.node != kTomb && is(s.node)) return s.node;
    }
  }
  /// Adds n under `id` (which must be absent). `alive(n)` tells stale slots apart when
  /// the table is rebuilt.
  template <class Alive>
  void insert(std::string_view id, NodeId n, const Alive& alive) {
    insert(hash_(id), n, alive);
  }
  /// insert() for an id whose hash_of() is `h`.
  template <class Alive>
  void insert(std::uint32_t h, NodeId n, const Alive& alive) {
    if ((used_ + 1) * 4 > slots_.size() * 3) rehash_(std::max<std::size_t>(live_ + 1, 8) * 2, alive);
    std::size_t i = home_(h);
    while (slots_[i].node != kEmpty && slots_[i].node != kTomb) i = next_(i);
    used_ += slots_[i].node == kEmpty;
    slots_[i] = Slot{n, h};
    ++live_;
  }
  /// Removes n, filed under `id`, now (for a rename: n stays alive).
  void erase(std::string_view id, NodeId n) {
    if (slots_.empty()) return;
    for (std::size_t i = home_(hash_(id));; i = next_(i)) {
      if (slots_[i].node == kEmpty) return;
      if (slots_[i].node == n) {
        slots_[i].node = kTomb;
        --live_;
        return;
      }
    }
  }
  /// Notes that `count` nodes went away; their slots go stale (see above).
  void forget(std::size_t count = 1) { live_ -= count; }
  /// Adds nodes first, first + 1, ... whose ids hash to `hashes`, bucket by bucket:
  /// one counting-sort pass on the hash's top bits (the home slot grows with the hash),
  /// so each bucket's inserts stay within a window of the table small enough for the
  /// caches, instead of one cache and TLB miss per id. Returns the later node of the
  /// first duplicate pair met (`same(a, b)`: live a and b have the same id), else kNoNode.
  template <class Same, class Alive>
  NodeId insert_bulk(std::span<const std::uint32_t> hashes, NodeId first, const Same& same, const Alive& alive) {
    std::size_t n = hashes.size();
    // Grown geometrically, as insert() grows it: a loader that files its ids in many small
    // batches without reserve() (the streamed YAML reader: one batch per id-cache miss)
    // rehashed the whole table at almost every batch, quadratic in the nodes.
    if ((used_ + n) * 4 > slots_.size() * 3) rehash_(std::max(live_ + n, 2 * live_), alive);
    // About 52 KiB of table a bucket at 10^7 ids: 2048 buckets.
    unsigned bits = std::clamp(static_cast<int>(std::bit_width(n)) - 13, 1, 12);
    std::vector<std::size_t> start((std::size_t{1} << bits) + 1, 0);
    for (std::uint32_t h : hashes) ++start[(h >> (32 - bits)) + 1];
    for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
    std::vector<Slot> sorted(n);
    for (std::size_t i = 0; i < n; ++i)
      sorted[start[hashes[i] >> (32 - bits)]++] = Slot{first + static_cast<NodeId>(i), hashes[i]};
    for (const Slot& s : sorted) {
      std::size_t at = home_(s.hash);
      for (; slots_[at].node != kEmpty && slots_[at].node != kTomb; at = next_(at))
        if (slots_[at].hash == s.hash && same(slots_[at].node, s.node)) return std::max(slots_[at].node, s.node);
      used_ += slots_[at].node == kEmpty;
      slots_[at] = s;
      ++live_;
    }
    return kNoNode;
  }
  /// The hash insert_bulk() expects for an id.
  static std::uint32_t hash_of(std::string_view id) { return hash_(id); }
  /// Room for `n` entries without rehashing.
  template <class Alive>
  void reserve(std::size_t n, const Alive& alive) {
    if (n * 4 > slots_.size() * 3) rehash_(n, alive);
  }
  std::size_t size() const { return live_; }

 private:
  struct Slot {
    NodeId node;
    std::uint32_t hash;
  };
  static constexpr NodeId kEmpty = kNoNode;
  static constexpr NodeId kTomb = kNoNode - 1;
  // The loaders' hash (quick_hash.h), so they hash each id once (Graph::add_node's overload).
  static std::uint32_t hash_(std::string_view s) { return static_cast<std::uint32_t>(quick_hash(s)); }
  // Any table size, not just powers of two (a power of two would waste up to half the
  // table): the home slot scales the 32-bit hash to the size with a multiply.
  std::size_t home_(std::uint32_t h) const { return static_cast<std::size_t>((std::uint64_t{h} * slots_.size()) >> 32); }
  std::size_t next_(std::size_t i) const { return i + 1 == slots_.size() ? 0 : i + 1; }
  template <class Alive>
  void rehash_(std::size_t entries, const Alive& alive) {
    std::size_t cap = std::max<std::size_t>(16, entries * 4 / 3 + 1);  // at most 3/4 full
    SlotArray old = std::move(slots_);
    slots_ = SlotArray(cap);
    used_ = 0;
    for (const Slot& s : old) {
      if (s.node == kEmpty || s.node == kTomb || !alive(s.node)) continue;
      std::size_t i = home_(s.hash);
      while (slots_[i].node != kEmpty) i = next_(i);
      slots_[i] = s;
      ++used_;
    }
  }
  /// A fixed-size slot array, all slots empty.
  class SlotArray {
   public:
    SlotArray() = default;
    explicit SlotArray(std::size_t n) : n_(n) {
      const ArrayMemory m = allocate_array(n * sizeof(Slot), std::align_val_t{alignof(Slot)});
      align_ = m.align;
      p_ = static_cast<Slot*>(m.data);
      advise_huge_pages(p_, n * sizeof(Slot));  // filled whole, here
      std::uninitialized_fill_n(p_, n, Slot{kEmpty, 0});
    }
    SlotArray(const SlotArray& o) : SlotArray(o.n_) { std::copy(o.begin(), o.end(), p_); }
    SlotArray& operator=(const SlotArray& o) {
      if (this != &o) *this = SlotArray(o);
      return *this;
    }
    SlotArray(SlotArray&& o) noexcept
        : align_(o.align_), p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    SlotArray& operator=(SlotArray&& o) noexcept {
      if (this != &o) {
        if (p_) ::operator delete(p_, align_);
        align_ = o.align_;
        p_ = std::exchange(o.p_, nullptr);
        n_ = std::exchange(o.n_, 0);
      }
      return *this;
    }
    ~SlotArray() {
      if (p_) ::operator delete(p_, align_);
    }
    std::size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    Slot& operator[](std::size_t i) { return p_[i]; }
    const Slot& operator[](std::size_t i) const { return p_[i]; }
    const Slot* begin() const { return p_; }
    const Slot* end() const { return p_ + n_; }

   private:
    std::align_val_t align_{alignof(Slot)};
    Slot* p_ = nullptr;
    std::size_t n_ = 0;
  };
  SlotArray slots_;
  std::size_t used_ = 0;     // live, stale and tombstones
  std::size_t live_ = 0;
};

struct GraphStorage {
  ChunkedStore<Node> nodes;     // index = NodeId
  ChunkedStore<HotRecord> hot;  // index = NodeId
  IdIndex by_id;
  bool bulk = false;                    // between Graph::begin_bulk() and end_bulk()
  NodeId bulk_first = 0;                // the first node not yet in by_id
  std::vector<std::uint32_t> bulk_hashes;  // id hashes of nodes bulk_first, ...
  AttrInterner attrs;       // shares identical small attribute sets between nodes
};

/// Graph::alive(), node() and op(), inline, for engine code that calls them per node
/// (matching, applying rewrites). The Graph members are calls into graph.cpp, because
/// the public header does not know the storage; they return these.
namespace records {
inline bool alive(const Graph& g, NodeId n) {
  const GraphStorage& s = g.storage();
  return n < s.hot.size() && s.hot[n].alive;
}
inline const Node& node(const Graph& g, NodeId n) { return g.storage().nodes[n]; }
inline OpType op(const Graph& g, NodeId n) { return g.storage().hot[n].op; }
/// The memory of the records of nodes [g.capacity(), upto), reserved by Graph::reserve,
/// in the order a loader fills it (a PageWarmer's spans).
std::vector<std::span<std::byte>> unfilled_records(Graph& g, std::size_t upto);
}  // namespace records

}  // namespace graphfuse
