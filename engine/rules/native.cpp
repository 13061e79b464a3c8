// The registry of native predicates and functions that rule files reference by name.
#include <map>
#include <mutex>

#include "graphfuse/rules.h"

namespace graphfuse {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const NativeFunction>, std::less<>> fns;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_function(std::string name, NativeFunction fn) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  // Compiled rules hold their own shared_ptr, so replacing a name never changes a
  // rule set that is already loaded (frozen means frozen).
  r.fns[std::move(name)] = std::make_shared<const NativeFunction>(std::move(fn));
}

void register_predicate(std::string name, NativePredicate fn) {
  register_function(std::move(name), [fn = std::move(fn)](const Graph& g, std::span<const NativeArg> args)
                                         -> std::optional<AttrValue> { return fn(g, args); });
}

std::shared_ptr<const NativeFunction> find_native(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.fns.find(name);
  return it == r.fns.end() ? nullptr : it->second;
}

}  // namespace graphfuse
