// InputList: a node's ordered inputs, the first three kept in the node record itself.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace graphfuse {

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = 0xffffffffu;

/// A value: output `port` of node `node`. An absent optional input is {kNoNode, 0}.
struct ValueRef {
  NodeId node = kNoNode;
  std::uint32_t port = 0;
  bool valid() const { return node != kNoNode; }
  friend bool operator==(ValueRef, ValueRef) = default;
  friend auto operator<=>(ValueRef, ValueRef) = default;
};

/// The inputs of a node: used like a std::vector<ValueRef> (size, [], at, front, back,
/// contiguous iterators, data, push_back, resize, insert, erase, ==, conversion to and from
/// std::vector). Up to kInline inputs live in the object itself (32 bytes, 8 more than a
/// std::vector, which needs a heap block for even one input): most nodes of a model (an activation,
/// a bias add, a convolution with its weight and bias) then own no heap block at all, so
/// loading a graph allocates nothing per node for its edges, and a fusion that removes
/// such nodes frees nothing (a block freed by another thread than the one that allocated
/// it goes to that thread's heap lists, which the rewriter's parallel lanes share).
/// Longer lists are on the heap, grown by doubling. Pointers into the list are
/// invalidated by any change of its size, as a vector's are.
class InputList {
 public:
  using value_type = ValueRef;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = ValueRef&;
  using const_reference = const ValueRef&;
  using pointer = ValueRef*;
  using const_pointer = const ValueRef*;
  using iterator = ValueRef*;
  using const_iterator = const ValueRef*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  static constexpr std::uint32_t kInline = 3;

  InputList() noexcept { std::construct_at(&s_.small); }
  InputList(std::initializer_list<ValueRef> items) : InputList() { assign(items.begin(), items.end()); }
  InputList(const std::vector<ValueRef>& items) : InputList() { assign(items.begin(), items.end()); }  // NOLINT
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
  InputList(It first, It last) : InputList() {
    assign(first, last);
  }
  /// `count` copies of `v` (as std::vector(count, v)).
  explicit InputList(std::size_t count, ValueRef v = {}) : InputList() { resize(count, v); }
  InputList(const InputList& o) : InputList() { assign(o.begin(), o.end()); }
  InputList(InputList&& o) noexcept : InputList() { steal_(o); }
  InputList& operator=(const InputList& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  InputList& operator=(InputList&& o) noexcept {
    if (this != &o) {
      release_();
      steal_(o);
    }
    return *this;
  }
  InputList& operator=(std::initializer_list<ValueRef> items) {
    assign(items.begin(), items.end());
    return *this;
  }
  ~InputList() { release_(); }

  /// A std::vector copy, for code that keeps or edits a list apart from the graph.
  operator std::vector<ValueRef>() const { return std::vector<ValueRef>(begin(), end()); }  // NOLINT

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return cap_; }
  /// True while the list is held in the object (no heap block).
  bool is_inline() const { return cap_ == kInline; }
  ValueRef* data() { return cap_ == kInline ? s_.small.v : s_.heap; }
  const ValueRef* data() const { return cap_ == kInline ? s_.small.v : s_.heap; }

  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  ValueRef& operator[](std::size_t k) { return data()[k]; }
  const ValueRef& operator[](std::size_t k) const { return data()[k]; }
  /// Bounds-checked access; throws std::out_of_range.
  ValueRef& at(std::size_t k) {
    check_(k);
    return data()[k];
  }
  const ValueRef& at(std::size_t k) const {
    check_(k);
    return data()[k];
  }
  ValueRef& front() { return data()[0]; }
  const ValueRef& front() const { return data()[0]; }
  ValueRef& back() { return data()[size_ - 1]; }
  const ValueRef& back() const { return data()[size_ - 1]; }

  void reserve(std::size_t n) {
    if (n > cap_) grow_(n);
  }
  void push_back(ValueRef v) {
    if (size_ == cap_) grow_(std::size_t{cap_} * 2);
    data()[size_++] = v;
  }
  template <class... Args>
  ValueRef& emplace_back(Args&&... args) {
    push_back(ValueRef{std::forward<Args>(args)...});
    return back();
  }
  void pop_back() { --size_; }
  void resize(std::size_t n, ValueRef v = {}) {
    reserve(n);
    ValueRef* d = data();
    for (std::size_t k = size_; k < n; ++k) d[k] = v;
    size_ = static_cast<std::uint32_t>(n);
  }
  /// Empties the list; a heap block is kept for reuse, as std::vector::clear keeps it.
  void clear() { size_ = 0; }
  template <class It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data());
    size_ = static_cast<std::uint32_t>(n);
  }
  iterator insert(const_iterator pos, ValueRef v) {
    const std::size_t k = static_cast<std::size_t>(pos - begin());
    push_back(v);
    std::rotate(begin() + k, end() - 1, end());
    return begin() + k;
  }
  template <class It>
  iterator insert(const_iterator pos, It first, It last) {
    const std::size_t k = static_cast<std::size_t>(pos - begin());
    const std::size_t old = size_;
    for (; first != last; ++first) push_back(*first);
    std::rotate(begin() + k, begin() + old, end());
    return begin() + k;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const std::size_t k = static_cast<std::size_t>(first - begin());
    const std::size_t n = static_cast<std::size_t>(last - first);
    std::copy(begin() + k + n, end(), begin() + k);
    size_ -= static_cast<std::uint32_t>(n);
    return begin() + k;
  }
  /// Gives the heap block back (the list moves into the object when it fits).
  void shrink_to_fit() {
    if (cap_ == kInline || size_ == cap_) return;
    InputList t(begin(), end());
    *this = std::move(t);
  }
  void swap(InputList& o) noexcept {
    InputList t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const InputList& a, const InputList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const InputList& a, const std::vector<ValueRef>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend auto operator<=>(const InputList& a, const InputList& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  struct Small {
    ValueRef v[kInline];
  };
  // The inline elements or the heap block: which one, cap_ says (kInline: inline).
  union Storage {
    Storage() {}
    ~Storage() {}
    Small small;
    ValueRef* heap;
  };

  void check_(std::size_t k) const {
    if (k >= size_) throw std::out_of_range("InputList::at");
  }
  void grow_(std::size_t n) {
    n = std::max<std::size_t>(n, 2 * kInline);
    auto* block = static_cast<ValueRef*>(::operator new(n * sizeof(ValueRef)));
    std::uninitialized_copy(begin(), end(), block);
    release_();
    s_.heap = block;
    cap_ = static_cast<std::uint32_t>(n);
  }
  void release_() {
    if (cap_ != kInline) {
      ::operator delete(s_.heap);
      std::construct_at(&s_.small);
      cap_ = kInline;
    }
  }
  // Takes o's elements, leaving o empty and inline. *this must be inline and empty.
  void steal_(InputList& o) {
    if (o.cap_ == kInline) {
      std::copy(o.s_.small.v, o.s_.small.v + o.size_, s_.small.v);
    } else {
      s_.heap = o.s_.heap;
      cap_ = o.cap_;
      std::construct_at(&o.s_.small);
      o.cap_ = kInline;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  Storage s_;
  std::uint32_t size_ = 0;
  std::uint32_t cap_ = kInline;  // kInline: s_.small holds the elements; else s_.heap holds cap_
};

}  // namespace graphfuse
