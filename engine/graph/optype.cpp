// Op-type interning: a process-wide table so OpType compares as an integer.
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "graphfuse/graph.h"

namespace graphfuse {

namespace {
struct OpTable {
  std::shared_mutex mu;
  std::deque<std::string> names{""};  // index 0 = invalid OpType; deque keeps views stable
  std::unordered_map<std::string_view, std::uint32_t> index;
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
  t.names.emplace_back(name);
  auto id = static_cast<std::uint32_t>(t.names.size() - 1);
  t.index.emplace(t.names.back(), id);
  return OpType(id);
}

std::optional<OpType> OpType::lookup(std::string_view name) {
  OpTable& t = table();
  std::shared_lock lock(t.mu);
  auto it = t.index.find(name);
  if (it == t.index.end()) return std::nullopt;
  return OpType(it->second);
}

std::string_view OpType::name() const {
  OpTable& t = table();
  std::shared_lock lock(t.mu);
  return t.names[id_];
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
