// Attribute-set interning: a bit-exact hash and comparison of small attribute sets.
#include "graph/attr_intern.h"

#include <bit>
#include <functional>
#include <string_view>

namespace graphfuse {

namespace {

constexpr std::size_t kMaxList = 64;
constexpr std::size_t kMaxString = 128;
constexpr std::size_t kMaxEntries = 16;

void mix(std::size_t& h, std::size_t x) { h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); }
std::size_t hash_str(std::string_view s) { return std::hash<std::string_view>{}(s); }

// Floats compare by bit pattern: 0.0 and -0.0 (or two NaNs) must not share a copy,
// because they are written differently.
bool same_float(float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

/// Hash of a value, or false when the value is not worth interning.
bool hash_value(const AttrValue& v, std::size_t& h) {
  mix(h, v.index());
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, bool>) {
          mix(h, static_cast<std::size_t>(x));
        } else if constexpr (std::is_same_v<T, float>) {
          mix(h, std::bit_cast<std::uint32_t>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (x.size() > kMaxString) return false;
          mix(h, hash_str(x));
        } else if constexpr (std::is_same_v<T, Tensor>) {
          if (x.has_data() || x.shape.size() > kMaxList) return false;
          mix(h, static_cast<std::size_t>(x.dtype));
          for (auto d : x.shape) mix(h, static_cast<std::size_t>(d));
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<bool>>) {
          if (x.size() > kMaxList) return false;
          mix(h, x.size());
          for (auto e : x) mix(h, static_cast<std::size_t>(e));
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          if (x.size() > kMaxList) return false;
          mix(h, x.size());
          for (float e : x) mix(h, std::bit_cast<std::uint32_t>(e));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          if (x.size() > kMaxList) return false;
          mix(h, x.size());
          for (const auto& e : x) {
            if (e.size() > kMaxString) return false;
            mix(h, hash_str(e));
          }
        } else {
          return false;  // tensor lists, opaque values
        }
        return true;
      },
      v);
}

bool same_value(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const float* x = std::get_if<float>(&a)) return same_float(*x, std::get<float>(b));
  if (const auto* x = std::get_if<std::vector<float>>(&a)) {
    const auto& y = std::get<std::vector<float>>(b);
    if (x->size() != y.size()) return false;
    for (std::size_t i = 0; i < x->size(); ++i)
      if (!same_float((*x)[i], y[i])) return false;
    return true;
  }
  return a == b;  // everything else interned compares exactly with ==
}

}  // namespace

void AttrInterner::intern(Attributes& a) {
  if (!a.block_ || a.block_->interned) return;
  const auto& entries = a.block_->entries;
  if (entries.size() > kMaxEntries) return;
  std::size_t h = entries.size();
  for (const auto& [k, v] : entries) {
    if (k.size() > kMaxString) return;
    mix(h, hash_str(k));
    if (!hash_value(v, h)) return;
  }
  std::lock_guard lock(mutex_);
  auto [lo, hi] = table_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const auto& other = it->second->entries;
    if (other.size() != entries.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < entries.size() && same; ++i)
      same = entries[i].first == other[i].first && same_value(entries[i].second, other[i].second);
    if (same) {
      a.block_ = it->second;
      return;
    }
  }
  if (table_.size() >= kMaxSets) return;
  a.block_->interned = true;
  table_.emplace(h, a.block_);
}

}  // namespace graphfuse
