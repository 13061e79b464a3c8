// Internal: an allocator for arrays whose elements are first written by the threads that
// fill them.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace graphfuse {

/// std::allocator whose resize() leaves new elements of a trivial type unwritten: the
/// grouping's output arrays are first written by the threads that fill them, so their
/// fresh pages are faulted in on those threads, side by side, not all on the calling
/// thread by a zero fill that every element then overwrites.
template <class T>
struct UnfilledAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UnfilledAllocator<U>;
  };
  UnfilledAllocator() = default;
  template <class U>
  UnfilledAllocator(const UnfilledAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;  // default-initialized: no write for a trivial U
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace graphfuse
