// quick_hash: the hash of short strings (node ids, output names, attribute texts) that the
// graph's id index and the readers' tables share, so a loader hashes each id once and
// hands the hash to Graph::add_node.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace graphfuse {

/// Word at a time, without a call: ids are a few bytes, and std::hash's byte loop (or a
/// memcpy of a variable length, which is a library call) was a few percent of a
/// 10^6-node load.
inline std::uint64_t quick_hash(std::string_view s) {
  const char* p = s.data();
  std::size_t n = s.size();
  // The length multiplied in, not just XORed: a tail word and a length one apart
  // cancelled ("b" and "ab").
  std::uint64_t h = (0x9e3779b97f4a7c15ull ^ n) * 0xff51afd7ed558ccdull;
  auto mix = [&h](std::uint64_t w) {
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  };
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    mix(w);
  }
  // The last 1-7 bytes, read so that every one of them counts (the length is in h): 4..7
  // as two overlapping 4-byte words, 1..3 as the first, middle and last byte.
  if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    mix(a | std::uint64_t{b} << 32);
  } else if (n > 0) {
    auto byte = [p](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])}; };
    mix(byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16);
  }
  // MurmurHash3's finaliser: every input bit reaches the low bits the tables index by.
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

/// For hash maps keyed by strings and looked up by string_views.
struct QuickHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return quick_hash(s); }
};

}  // namespace graphfuse
