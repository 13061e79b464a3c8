// oneDNN plumbing shared by the fast kernels: engine, stream, post-ops, primitive cache.
#pragma once

#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>

#include "graphfuse/kernels/conv.h"

namespace graphfuse::kernels::fast {

/// The process-wide CPU engine.
dnnl::engine& cpu_engine();
/// A stream for the calling thread (streams are not shared between threads).
dnnl::stream& cpu_stream();

/// OpenMP's current thread count (what oneDNN will use). Primitives record it when they
/// are built, so it belongs in every cache key.
int omp_threads();

/// True when oneDNN's effective instruction set has VNNI (AVX2-VNNI, AVX-512 VNNI and
/// later): its int8 kernels then multiply u8 x s8 into int32 exactly. Without it they sum
/// pairs in int16 with saturation, so the int8 paths (int8_conv.cpp, int8_matmul.cpp) keep
/// to shapes that stay exact.
bool has_vnni();

/// Appends the eltwise post-op(s) computing `act` (none for Activation::None).
void append_activation(dnnl::post_ops& po, const ActivationSpec& act);

/// A user buffer wrapped as oneDNN memory (oneDNN never writes through source buffers,
/// so dropping const is safe for inputs).
inline dnnl::memory wrap(const dnnl::memory::desc& md, const float* p) {
  return dnnl::memory(md, cpu_engine(), const_cast<float*>(p));
}

/// The row stride (in floats) for a copy of weights whose rows hold `n` floats: `n`, or
/// `n` + 16 (one cache line) when the rows would be a multiple of 1 KiB apart. oneDNN's gemm
/// reads plain weights in place, and at such strides its loads of consecutive rows fall
/// into the same cache sets: on AVX2 a 197x768x3072 product took 20 ms with rows 3072
/// floats apart and 10 ms with 3088 (build/bench/matmul_stride).
inline std::int64_t weights_row_stride(std::int64_t n) { return n % 256 == 0 ? n + 16 : n; }

/// `user` (constant weights) reordered into `target`. With an owner, the result is cached
/// per (address, target layout) for as long as the owner lives, so every layer keeps its
/// own reordered copy even when many layers share one primitive; without, it is redone.
dnnl::memory reordered_weights(const dnnl::memory& user, const dnnl::memory::desc& target,
                               const std::shared_ptr<const void>& owner);

/// A thread-safe map from a shape key to a built primitive (and whatever else the kernel
/// derives from the shape). Building a primitive descriptor costs far more than running
/// a small primitive, so every fast kernel looks its primitive up here first.
template <class Entry>
class PrimitiveCache {
 public:
  /// The entry for `key`; build() -> shared_ptr<Entry> makes it on a miss.
  template <class Build>
  std::shared_ptr<Entry> get(const std::string& key, Build build) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = map_.find(key); it != map_.end()) return it->second;
    }
    std::shared_ptr<Entry> e = build();  // outside the lock: building is the slow part
    std::lock_guard<std::mutex> lock(mu_);
    return map_.emplace(key, std::move(e)).first->second;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> map_;
};

}  // namespace graphfuse::kernels::fast
