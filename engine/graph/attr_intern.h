// Interning of small attribute sets, so identical sets share one copy within a Graph.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "graphfuse/attribute.h"

namespace graphfuse {

/// Hands out one canonical copy per distinct small attribute set. Large graphs repeat a
/// handful of sets (strides, padding, data_format, a Const's shape) millions of times.
class AttrInterner {
 public:
  /// Makes `a` share the canonical copy of an identical set (same keys in the same order,
  /// same values bit for bit), or makes `a` canonical. Sets holding tensor data, opaque
  /// values or long lists are left alone: rarely repeated and costly to hash.
  /// Safe to call from several threads (the parallel apply phase sets attributes side by
  /// side): identical sets still end up sharing one copy.
  void intern(Attributes& a);
  std::size_t size() const { return table_.size(); }

  AttrInterner() = default;
  AttrInterner(const AttrInterner& o) : table_(o.table_) {}
  AttrInterner& operator=(const AttrInterner& o) {
    table_ = o.table_;
    return *this;
  }

 private:
  std::mutex mutex_;
  // Bounded, so a graph of all-distinct sets pays for a small table only.
  static constexpr std::size_t kMaxSets = 1 << 14;
  std::unordered_multimap<std::size_t, std::shared_ptr<Attributes::Block>> table_;
};

}  // namespace graphfuse
