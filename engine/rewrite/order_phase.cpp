// The order phase: a round's matches in application order (benefit, rule, position, root).
#include <algorithm>
#include <bit>
#include <utility>

#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include "rewrite/driver_phases.h"

namespace graphfuse::rewrite {

namespace {

// The order of operator< when positions are node ids, by LSD radix sort: a few linear,
// stable passes (11 bits of root at a time, then the rule's rank) where a comparison
// sort of the millions of matches of a big graph's first round pays log n compares each.
void radix_order(const DriverContext& cx, std::vector<Key>& keys, NodeId max_root) {
  constexpr unsigned kBits = 11;
  constexpr std::size_t kDigits = std::size_t{1} << kBits;
  constexpr std::uint32_t kMask = kDigits - 1;
  std::vector<Key> tmp(keys.size());
  tbb::task_arena* arena = cx.arena_ptr();
  // Each pass counts and scatters chunk by chunk: chunk c's keys with digit d go after
  // those of every smaller digit and of the same digit in chunks before c, so the pass
  // is stable however the chunks are spread over threads (a big graph's first round
  // orders 10^5..10^6 matches, which one thread spends tens of milliseconds on).
  const std::size_t chunks = arena && keys.size() >= 65536 ? static_cast<std::size_t>(arena->max_concurrency()) * 4 : 1;
  const std::size_t per = (keys.size() + chunks - 1) / chunks;
  std::vector<std::size_t> start(chunks * kDigits);
  auto for_chunks = [&](auto body) {
    if (chunks == 1) return body(0);
    arena->execute([&] { tbb::parallel_for(std::size_t{0}, chunks, body); });
  };
  auto pass = [&](auto digit) {
    for_chunks([&](std::size_t c) {
      std::size_t* count = &start[c * kDigits];
      std::fill(count, count + kDigits, 0);
      for (std::size_t i = c * per, e = std::min(keys.size(), i + per); i < e; ++i) ++count[digit(keys[i])];
    });
    std::size_t sum = 0;
    for (std::size_t d = 0; d < kDigits; ++d)
      for (std::size_t c = 0; c < chunks; ++c) sum += std::exchange(start[c * kDigits + d], sum);
    for_chunks([&](std::size_t c) {
      std::size_t* at = &start[c * kDigits];
      for (std::size_t i = c * per, e = std::min(keys.size(), i + per); i < e; ++i) tmp[at[digit(keys[i])]++] = keys[i];
    });
    keys.swap(tmp);
  };
  for (unsigned shift = 0; shift < static_cast<unsigned>(std::bit_width(max_root)); shift += kBits)
    pass([shift](const Key& k) { return (k.root >> shift) & kMask; });
  const std::vector<std::uint32_t>& rank = cx.sel.rank;
  if (cx.sel.running.size() > 1) pass([&rank](const Key& k) { return rank[k.rule]; });
}

}  // namespace

std::vector<Key> order_round(const DriverContext& cx, const std::vector<match::Found>& found) {
  std::vector<Key> keys(found.size());
  NodeId max_root = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const match::Found& f = found[i];
    keys[i] = cx.key_of(f, static_cast<std::uint32_t>(i));
    max_root = std::max(max_root, f.root);
  }
  // Every root an input node: its position is its id, and the order is (rank, root).
  // Taken whatever the size, so that every test with such a graph checks it.
  if (cx.positions.id_order() && max_root < cx.positions.base() && cx.sel.running.size() <= 2048)
    radix_order(cx, keys, max_root);
  else if (cx.arena && keys.size() > 65536) cx.arena->execute([&] { tbb::parallel_sort(keys.begin(), keys.end()); });
  else std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace graphfuse::rewrite
