// Internal: a growable per-node array whose new elements are zero, taken from calloc.
//
// Why not std::vector<T>::resize(n, 0): it writes every zero, so each page of a fresh
// block is faulted in at once, whether or not the array's user ever touches it. calloc
// knows when a block is fresh from the kernel (already zero) and does not write it; its
// pages are then faulted in only where the array is used. On a VM each first touch of a
// page costs a hypervisor fault, so zeroing a whole per-node array that a round stamps
// in a few places costs one thread a fault per page for nothing. Where calloc reuses freed memory it clears it, as
// resize would; nothing is ever slower than the vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

namespace graphfuse {

/// Elements of a trivially copyable T, zero (all bits) until written. Grows, never
/// shrinks; growing moves the elements (like a vector's reallocation), so it is not safe
/// while other threads read or write.
template <class T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>, "ZeroedArray copies its elements bytewise");

 public:
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }

  /// Makes the array `n` elements long, all zero (the old block is freed first, so calloc
  /// may hand it back, cleared).
  void assign_zero(std::size_t n) {
    data_.reset();
    size_ = 0;
    grow_to(n);
  }
  /// Makes the array at least `n` elements long; the new ones are zero. Grows by at least
  /// half its size, so that growing element by element stays linear.
  void grow_to(std::size_t n) {
    if (n <= size_) return;
    const std::size_t want = std::max(n, size_ + size_ / 2);
    std::unique_ptr<T, Free> next(static_cast<T*>(std::calloc(want, sizeof(T))));
    if (!next) throw std::bad_alloc();
    if (size_ != 0) std::memcpy(next.get(), data_.get(), size_ * sizeof(T));
    data_ = std::move(next);
    size_ = want;
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace graphfuse
