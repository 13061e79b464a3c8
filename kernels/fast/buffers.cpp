// A recycling pool for fast-kernel outputs. The shared allocator (core/util.cpp) zero-fills
// every recycled buffer, which on mobilenet_v2 is ~24 MB of single-threaded memset per run
// (12% of the run in perf) right before a kernel overwrites the same bytes; this pool skips
// that for kernels that write every element.
#include "fast/buffers.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace graphfuse::kernels::fast {

namespace {

class OutputPool {
 public:
  // Below this, malloc is as fast as the pool and the lock would only add contention.
  static constexpr std::size_t kMinBytes = 4 * 1024;
  static constexpr std::size_t kMaxPooledBytes = std::size_t{512} << 20;

  static OutputPool& get() {
    // Leaked on purpose: Tensors destroyed during static destruction still return here.
    static OutputPool* pool = new OutputPool;
    return *pool;
  }
  std::string* take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(bytes);
      if (it != free_.end() && !it->second.empty()) {
        std::string* s = it->second.back();
        it->second.pop_back();
        pooled_ -= bytes;
        return s;
      }
    }
    // std::string value-initializes: a fresh buffer is zeros (and pays its page faults once).
    return new std::string(bytes, '\0');
  }
  void give(std::string* s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (pooled_ + s->size() <= kMaxPooledBytes) {
        pooled_ += s->size();
        free_[s->size()].push_back(s);
        return;
      }
    }
    delete s;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::size_t, std::vector<std::string*>> free_;
  std::size_t pooled_ = 0;
};

}  // namespace

Tensor alloc_output_f32(Shape shape) {
  const std::int64_t n = numel(shape);
  const auto bytes = static_cast<std::size_t>(n) * sizeof(float);
  if (bytes < OutputPool::kMinBytes) return alloc_f32(std::move(shape));
  for (auto d : shape) check(d >= 0, "negative dimension in shape " + shape_str(shape));
  Tensor t;
  t.dtype = DType::Float32;
  t.shape = std::move(shape);
  t.data = std::shared_ptr<std::string>(OutputPool::get().take(bytes),
                                        [](std::string* s) { OutputPool::get().give(s); });
#ifndef NDEBUG
  float* p = mut<float>(t);
  std::fill(p, p + n, std::numeric_limits<float>::quiet_NaN());
#endif
  return t;
}

}  // namespace graphfuse::kernels::fast
