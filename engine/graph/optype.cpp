// Op-type interning: a process-wide table so OpType compares as an integer.
#include <array>
#include <atomic>
#include <bit>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "graphfuse/graph.h"

namespace graphfuse {

namespace {
// Names by id in chunks that never move (64, 128, 256, ... names), published to readers
// before the id is handed out: name() reads without a lock. A shared lock on every call
// cost 1-3% of a rewrite or a save, its cache line bouncing between threads.
constexpr std::uint32_t kFirstBits = 6;
constexpr std::size_t kChunks = 26;  // room for 2^32 names
std::size_t chunk_of(std::uint32_t id) { return static_cast<std::size_t>(std::bit_width((id >> kFirstBits) + 1)) - 1; }
std::size_t chunk_start(std::size_t k) { return ((std::size_t{1} << k) - 1) << kFirstBits; }

struct OpTable {
  std::shared_mutex mu;  // writers of names and index; readers of index
  std::deque<std::string> names;  // the text of the views below; a deque keeps it in place
  std::unordered_map<std::string_view, std::uint32_t> index;
  std::array<std::atomic<std::string_view*>, kChunks> chunks{};
  std::uint32_t size = 0;

  OpTable() { add(""); }  // index 0 = invalid OpType
  // Under the unique lock.
  std::uint32_t add(std::string_view name) {
    const std::uint32_t id = size;
    const std::size_t k = chunk_of(id);
    std::string_view* chunk = chunks[k].load(std::memory_order_relaxed);
    if (!chunk) {
      chunk = new std::string_view[std::size_t{1} << (k + kFirstBits)];  // lives as long as the process
      chunks[k].store(chunk, std::memory_order_release);
    }
    chunk[id - chunk_start(k)] = names.emplace_back(name);
    index.emplace(names.back(), id);
    ++size;
    return id;
  }
};
OpTable& table() {
  static OpTable t;
  return t;
}
}  // namespace

OpType OpType::intern(std::string_view name) {
  OpTable& t = table();
  {
    std::shared_lock lock(t.mu);
    auto it = t.index.find(name);
    if (it != t.index.end()) return OpType(it->second);
  }
  std::unique_lock lock(t.mu);
  auto it = t.index.find(name);
  if (it != t.index.end()) return OpType(it->second);
  return OpType(t.add(name));
}

std::optional<OpType> OpType::lookup(std::string_view name) {
  OpTable& t = table();
  std::shared_lock lock(t.mu);
  auto it = t.index.find(name);
  if (it == t.index.end()) return std::nullopt;
  return OpType(it->second);
}

std::string_view OpType::name() const {
  // Whoever holds this OpType got its id after add() wrote the name (through the lock,
  // or from a thread that did): the slot is written once and never again.
  const std::size_t k = chunk_of(id_);
  return table().chunks[k].load(std::memory_order_acquire)[id_ - chunk_start(k)];
}

std::string_view OpType::domain() const {
  std::string_view n = name();
  auto dot = n.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : n.substr(0, dot);
}

std::string_view OpType::local_name() const {
  std::string_view n = name();
  auto dot = n.rfind('.');
  return dot == std::string_view::npos ? n : n.substr(dot + 1);
}

}  // namespace graphfuse
