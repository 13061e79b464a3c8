// The registry of per-format type inference (graphfuse/type_inference.h).
#include "graphfuse/type_inference.h"

#include <mutex>
#include <vector>

namespace graphfuse {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<TypeInferenceFactory> factories;
};

Registry& registry() {
  static Registry r;  // function-local: formats register from other translation units' statics
  return r;
}

}  // namespace

bool register_type_inference(TypeInferenceFactory factory) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.factories.push_back(factory);
  return true;
}

std::unique_ptr<const TypeInference> type_inference_for(const Graph& g) {
  Registry& r = registry();
  std::vector<TypeInferenceFactory> factories;
  {
    std::lock_guard lock(r.mutex);
    factories = r.factories;
  }
  for (TypeInferenceFactory f : factories)
    if (auto inference = f(g)) return inference;
  return nullptr;
}

}  // namespace graphfuse
